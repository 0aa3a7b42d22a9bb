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
and OVERALL average the replicates with the headline's macro structure. As in ``_bootstrap``, items that
read the same under every seed (and have the same k) share a cell, and a replicate counts cells.
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


def _note(loglik: bool, runs: dict[str, np.ndarray]) -> str:
    """Why a sub-benchmark has no floor, or that its seeds never differed; '' for a floor measured with noise.
    ``loglik``: every item scored by log-likelihood on both sides; ``runs``: per side with two or more seeds,
    its 0/1 per item and seed (NaN: not logged)."""
    if loglik:
        return LOGLIKELIHOOD
    if not runs:
        return NEEDS_TWO

    def agree(r: np.ndarray) -> bool:  # an item logged under no seed of the side agrees with itself
        return bool(np.all((np.fmax.reduce(r, axis=1) == np.fmin.reduce(r, axis=1)) | np.isnan(r).all(axis=1)))

    return SAME if all(agree(r) for r in runs.values()) else ""


def _loglik(samples: pd.DataFrame) -> pd.Series:
    """Per (category, subtask): whether every item logged option log-likelihoods on both sides."""
    scored = [samples[f"option_ll_{side}"].notna() if f"option_ll_{side}" in samples else False for side in SIDES]
    both = pd.Series(np.logical_and(*scored), index=samples.index)
    return both.groupby([samples["category"], samples["subtask"]]).all()


def _wide(first: pd.DataFrame, seed: str, value: str, index: pd.MultiIndex) -> tuple[np.ndarray, np.ndarray]:
    """(values, seeds): ``value`` per item of ``index`` (category, subtask, doc_id) and seed label of column
    ``seed``, as items x seeds (NaN: not logged), and the seed labels of the columns."""
    keys = ["category", "subtask", "doc_id"]
    wide = first.drop_duplicates([*keys, seed]).pivot(index=keys, columns=seed, values=value).reindex(index)
    return wide.to_numpy(dtype=float), wide.columns.to_numpy()


def _logged(values: np.ndarray) -> np.ndarray:
    """The columns (seeds) of a block of :func:`_wide` that hold a value for some item."""
    return values[:, ~np.isnan(values).all(axis=0)]


def replicates(
    samples: pd.DataFrame, n_boot: int = bootstrap.N_BOOT, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(replicates, per sub-benchmark text): the long table category, subtask, seed, replicate and
    :data:`COLUMNS` (replicate -1 is the observed data) for the sub-benchmarks with a floor, and per
    sub-benchmark ``noise_seeds`` (which seeds made the floor) and ``noise_note`` (:data:`NEEDS_TWO`,
    :data:`LOGLIKELIHOOD`, :data:`SAME` or '')."""
    rng = np.random.default_rng(seed)
    out: dict[str, list[np.ndarray]] = {c: [] for c in ("category", "subtask", "seed", "replicate", *COLUMNS)}
    texts = []
    sides = {f"seed_{side}": samples.get(f"seed_{side}", samples["seed"]) for side in SIDES}  # labels: exact match
    if "replicate" not in samples:
        sides["replicate"] = 0
    samples = samples.assign(**sides).astype(dict.fromkeys(["subtask", "category", "seed", *sides], str))
    first = samples.sort_values("replicate", kind="stable")  # an item's first replicate under each seed
    keys = ["category", "subtask", "doc_id"]
    index = pd.MultiIndex.from_frame(first[keys].drop_duplicates()).sort_values()
    # items x seeds of all sub-benchmarks at once: each side's own seeds, and the paired seeds of the headline
    own = {side: _wide(first, f"seed_{side}", side, index) for side in SIDES}
    heads = {side: _wide(first, "seed", side, index) for side in SIDES}
    labels_all = heads[SIDES[0]][1]  # both sides pivot the same rows on the same labels
    ks = first.groupby(keys)["k"].first().reindex(index).to_numpy(dtype=float)
    loglik = _loglik(samples)
    clusters = bootstrap.item_clusters(samples, index)
    blocks = index.droplevel("doc_id")
    starts = np.flatnonzero(np.r_[True, blocks[1:] != blocks[:-1]])
    for start, end in zip(starts, [*starts[1:], len(index)]):
        category, subtask = blocks[start]
        runs = {side: _logged(values[start:end]) for side, (values, _) in own.items()}
        usable = {side: r for side, r in runs.items() if r.shape[1] >= 2}
        note = _note(bool(loglik[(category, subtask)]), usable)
        sizes = ", ".join(f"{side} {runs[side].shape[1]}" for side in SIDES)
        texts.append({"subtask": subtask, "noise_seeds": f"seeds: {sizes}", "noise_note": note})
        if note in (NEEDS_TWO, LOGLIKELIHOOD):
            continue
        before, after = (heads[side][0][start:end] for side in SIDES)
        logged = ~(np.isnan(before).all(axis=0) | np.isnan(after).all(axis=0))
        before, after, labels = before[:, logged], after[:, logged], labels_all[logged]
        # what the figures read of each item in one table, so that items with equal rows share a cell of the draw
        parts = [*usable.values(), before, after]
        table = np.column_stack([*parts, ks[start:end]])
        part = None if clusters is None else clusters[start:end]
        cells, weights = bootstrap.cell_weights(rng, table, part, n_boot)
        ends = np.cumsum([p.shape[1] for p in parts])[:-1]  # where each part's columns end in the table
        *side_runs, heads_before, heads_after = np.split(cells[:, :-1], ends, axis=1)
        k = cells[:, -1]
        floors = [_floor(weights, r, k) for r in side_runs]
        f_noise, f_true_noise = (np.mean([f[i] for f in floors], axis=0) for i in range(2))
        for j, label in enumerate(labels):
            r = _rates(weights, heads_before[:, j], heads_after[:, j], k)
            figures = (f_noise, f_noise, f_true_noise, f_true_noise)
            figures += (r["F"] - f_noise, r["BT"] - f_noise, r["F_true"] - f_true_noise, r["BT_true"] - f_true_noise)
            for column, values in zip(COLUMNS, figures):
                out[column].append(values)
            for column, value in (("category", category), ("subtask", subtask), ("seed", label)):
                out[column].append(np.full(n_boot + 1, value, dtype=object))
            out["replicate"].append(np.arange(-1, n_boot))
    columns = ["category", "subtask", "seed", "replicate", *COLUMNS]
    if not out["replicate"]:
        return pd.DataFrame(columns=columns), pd.DataFrame(texts, columns=["subtask", *TEXT])
    return pd.DataFrame({c: np.concatenate(out[c]) for c in columns}), pd.DataFrame(texts, columns=["subtask", *TEXT])


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
