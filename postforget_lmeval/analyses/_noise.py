"""The noise floor: how much a model "forgets" when it is paired with itself (docs/method.md §5).

With a sampling temperature above zero a model run twice flips items both ways with no change at all: an
item it gets right with probability p goes 1->0 between two runs with probability p(1-p). When a side has
two or more seeds, pairing seed s of that side with its seed s' applies the paper's formulas to two runs of
one model; their mean over the seed pairs is the floor, and the headline figure minus the floor is the
forgetting beyond sampling noise.

Estimator, per sub-benchmark: for every unordered pair of seeds of one side, on the items logged under
both, F and BT of the pair (and F_true, BT_true with the chance baseline of that pair); within a pair the
two directions are averaged (with no change, 1->0 and 0->1 are equally likely), then the pairs are
averaged, then the sides that have two seeds (with no change, both sides estimate the same floor). So
``F_noise == BT_noise`` by construction. Assumed: each item has a fixed success probability per model and
the seeds draw independently; equal sampling seeds on both sides correlate the draws (README), and then
the headline F is itself lower than between independent runs.

Intervals: the items (or clusters, as ``_bootstrap``) of a sub-benchmark are resampled once per replicate
for every seed of both sides, so the headline, the floor and their difference move together; categories
and OVERALL average the replicates with the headline's macro structure.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from postforget_lmeval import metrics
from postforget_lmeval.analyses import _bootstrap as bootstrap
from postforget_lmeval.pairing.run_plan import SIDES

FLOOR = ("F_noise", "BT_noise", "F_true_noise", "BT_true_noise")
BEYOND = ("F_beyond_noise", "BT_beyond_noise", "F_true_beyond_noise", "BT_true_beyond_noise")
COLUMNS = (*FLOOR, *BEYOND)
"""The figures of :func:`noise_floor`, per (sub-benchmark, seed) row and on the macro rows."""
INTERVALS = tuple(f"{c}_{s}" for c in COLUMNS for s in ("lo", "hi"))
TEXT = ("noise_seeds", "noise_note")
NEEDS_TWO = "needs two seeds on a side"
LOGLIKELIHOOD = "0 by construction: log-likelihood scoring does not sample"
SAME = "seeds agree on every item (greedy decoding?): no sampling noise seen"
SHORT = {NEEDS_TWO: "needs two seeds", LOGLIKELIHOOD: "0: log-likelihood", SAME: "seeds agree"}
"""The notes as the terminal's narrow cells say them."""


def _rates(weights: np.ndarray, before: np.ndarray, after: np.ndarray, k: np.ndarray) -> dict[str, np.ndarray]:
    """F, BT, F_true, BT_true (one per row of ``weights``: replicates x items) of two runs' 0/1 per item (NaN:
    not logged), on the items logged in both; the chance baseline is ``metrics.chance_rate``'s, NaN without a
    usable k for every item."""
    both = ~(np.isnan(before) | np.isnan(after))
    b, a = np.nan_to_num(before) > 0, np.nan_to_num(after) > 0

    def share(flags: np.ndarray) -> np.ndarray:
        return weights @ (flags & both).astype(float) / n

    with np.errstate(invalid="ignore", divide="ignore"):
        n = weights @ both.astype(float)
        f, bt = share(b & ~a), share(~b & a)
        if np.all(np.isfinite(k) & (k > 1)):
            k_eff = n / (weights @ np.where(both, 1.0 / k, 0.0))
            chance = metrics.chance_rate(share(b), share(a), k_eff)
        else:
            chance = np.full(n.shape, np.nan)
        return {"F": f, "BT": bt, "F_true": np.maximum(f - chance, 0.0), "BT_true": np.maximum(bt - chance, 0.0)}


def _floor(weights: np.ndarray, runs: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(F_noise, F_true_noise) per replicate of one side's runs (items x seeds): the mean over seed pairs of the
    mean of both directions."""
    raw, true = [], []
    for s, t in combinations(range(runs.shape[1]), 2):
        r = _rates(weights, runs[:, s], runs[:, t], k)
        raw.append((r["F"] + r["BT"]) / 2.0)
        true.append((r["F_true"] + r["BT_true"]) / 2.0)
    return np.mean(raw, axis=0), np.mean(true, axis=0)


def _side_runs(sub: pd.DataFrame, side: str, items: pd.Index) -> pd.DataFrame:
    """One side's 0/1 per item (rows: ``items``) and seed of that side (columns), the first replicate."""
    runs = sub.sort_values("replicate").drop_duplicates(["doc_id", f"seed_{side}"])
    return runs.pivot(index="doc_id", columns=f"seed_{side}", values=side).reindex(items)


def _note(sub: pd.DataFrame, usable: list[str], runs: dict[str, pd.DataFrame]) -> str:
    """Why a sub-benchmark has no floor, or that its seeds never differed; '' for a floor measured with noise."""
    loglik = [
        side
        for side in SIDES
        if f"option_ll_{side}" in sub and sub[f"option_ll_{side}"].notna().all() and len(sub[f"option_ll_{side}"])
    ]
    if len(loglik) == len(SIDES):
        return LOGLIKELIHOOD
    if not usable:
        return NEEDS_TWO
    same = all((runs[side].nunique(axis=1, dropna=True) <= 1).all() for side in usable)
    return SAME if same else ""


def replicates(
    samples: pd.DataFrame, n_boot: int = bootstrap.N_BOOT, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(replicates, per sub-benchmark text): the long table category, subtask, seed, replicate and
    :data:`COLUMNS` (replicate -1 is the observed data) for the sub-benchmarks with a floor, and per
    sub-benchmark ``noise_seeds`` (which seeds made the floor) and ``noise_note`` (:data:`NEEDS_TWO`,
    :data:`LOGLIKELIHOOD`, :data:`SAME` or '')."""
    rng = np.random.default_rng(seed)
    frames, texts = [], []
    sides = {f"seed_{side}": samples.get(f"seed_{side}", samples["seed"]) for side in SIDES}  # labels: exact match
    if "replicate" not in samples:
        sides["replicate"] = 0
    samples = samples.assign(**sides).astype(dict.fromkeys(["subtask", "category", "seed", *sides], str))
    for (category, subtask), sub in samples.groupby(["category", "subtask"], sort=True):
        items = pd.Index(np.sort(sub["doc_id"].unique()), name="doc_id")
        runs = {side: _side_runs(sub, side, items) for side in SIDES}
        usable = [side for side in SIDES if runs[side].shape[1] >= 2]
        note = _note(sub, usable, runs)
        sizes = ", ".join(f"{side} {runs[side].shape[1]}" for side in SIDES)
        texts.append({"subtask": subtask, "noise_seeds": f"seeds: {sizes}", "noise_note": note})
        if note in (NEEDS_TWO, LOGLIKELIHOOD):
            continue
        k = sub.groupby("doc_id")["k"].first().reindex(items).to_numpy(dtype=float)
        clusters = bootstrap.item_clusters(sub, pd.MultiIndex.from_arrays([[subtask] * len(items), items]))
        if clusters is not None and clusters.size > len(set(clusters)):
            weights = bootstrap.cluster_weights(rng, clusters, n_boot)
        else:
            weights = bootstrap.cluster_weights(rng, np.arange(len(items)), n_boot)
        floors = [_floor(weights, runs[side].to_numpy(dtype=float), k) for side in usable]
        f_noise, f_true_noise = (np.mean([f[i] for f in floors], axis=0) for i in range(2))
        heads = sub.sort_values("replicate").drop_duplicates(["doc_id", "seed"])
        for label, head in heads.groupby("seed", sort=True):
            pair = head.set_index("doc_id").reindex(items)
            r = _rates(weights, pair["before"].to_numpy(dtype=float), pair["after"].to_numpy(dtype=float), k)
            figures = (f_noise, f_noise, f_true_noise, f_true_noise)
            figures += (r["F"] - f_noise, r["BT"] - f_noise, r["F_true"] - f_true_noise, r["BT_true"] - f_true_noise)
            frame = pd.DataFrame(dict(zip(COLUMNS, figures)))
            frame.insert(0, "replicate", np.arange(-1, n_boot))
            frame.insert(0, "seed", label)
            frame.insert(0, "subtask", subtask)
            frames.append(frame.assign(category=category))
    columns = ["category", "subtask", "seed", "replicate", *COLUMNS]
    reps = pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)
    return reps, pd.DataFrame(texts, columns=["subtask", *TEXT])


def noise_floor(
    samples: pd.DataFrame, n_boot: int = bootstrap.N_BOOT, seed: int = 0, level: float = bootstrap.LEVEL
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(per sub-benchmark and seed, per category and OVERALL, per sub-benchmark text).

    The first frame has subtask, seed, :data:`COLUMNS` (the observed figures) and :data:`INTERVALS`; the
    second category, ``<column>_mean`` (the macro average over seeds) and :data:`INTERVALS`; the third
    :data:`TEXT` per sub-benchmark, for every sub-benchmark (also those without a floor).
    """
    reps, texts = replicates(samples, n_boot, seed)
    tail = (1.0 - level) / 2.0
    observed = reps[reps["replicate"] == -1]
    drawn = reps[reps["replicate"] >= 0]

    def bounds(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
        grouped = frame.groupby(keys, sort=False)[list(COLUMNS)]
        lo, hi = grouped.quantile(tail).add_suffix("_lo"), grouped.quantile(1.0 - tail).add_suffix("_hi")
        return pd.concat([lo, hi], axis=1)[list(INTERVALS)]

    if observed.empty:
        empty = pd.DataFrame(columns=["subtask", "seed", *COLUMNS, *INTERVALS])
        return empty, pd.DataFrame(columns=["category", *(f"{c}_mean" for c in COLUMNS), *INTERVALS]), texts
    rows = observed.set_index(["subtask", "seed"])[list(COLUMNS)].join(bounds(drawn, ["subtask", "seed"]))
    macro = metrics.macro_means(drawn, COLUMNS, by=["replicate"]).reset_index()
    means = metrics.macro_means(observed, COLUMNS).add_suffix("_mean")
    cats = means.join(bounds(macro, ["category"]))
    return rows.reset_index(), cats.reset_index(), texts
