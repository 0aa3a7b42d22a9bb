"""The noise floor: how much a model "forgets" when it is paired with itself (docs/method.md §5).

With a sampling temperature above zero a model run twice flips items both ways with no change at all: an
item it gets right with probability p goes 1->0 between two runs with probability p(1-p). When a side has
two or more seeds, pairing seed s of that side with its seed s' applies the paper's formulas to two runs of
one model; their mean over the seed pairs is that side's floor, and the headline figure minus the floor is
the forgetting beyond sampling noise.

Estimator, per sub-benchmark: each side's floor reads every seed that side logged, matched across the sides
or not (``unmatched``: the runs of seeds left without a partner). For every unordered pair of seeds of one
side, on the items logged under both, F and BT of the pair (and F_true, BT_true with the chance baseline of
that pair); within a pair the two directions are averaged (with no change, 1->0 and 0->1 are equally
likely), then the pairs are averaged: ``F_noise_before`` / ``F_noise_after``. The floor subtracted
(``F_noise``, named by ``noise_floor_from``): the two sides pooled when both sample with two or more seeds;
otherwise the one side that samples with two or more seeds. A run that generated several times per item
(inspect_ai epochs, lm-eval repeats) gives a side one run per replicate: two replicates of one seed are
independent draws of the model when the sampler's random numbers advance between them (lm-eval's Hugging Face
backend draws the repeats of a request from one generator seeded once), so they pair like two seeds. Where
every item reads the same in every replicate of a side's one seed, each replicate restarted the sampler from
the seed (a per-request seed, as vLLM takes in its sampling parameters) or decoding was greedy: that side is
no floor (:data:`REPLICATES_AGREE` when neither side has one). The headline of a seed is the
mean of its replicates' figures, as in subtasks.csv. A side whose seeds agree on every item is
greedy: it has no sampling noise, so the floor is the sampling side's (averaging its 0 in would halve the
floor); with no sampling side the floor is 0 (:data:`SAME`). ``F_noise == BT_noise`` by construction.
Log-likelihood scoring does not sample: floor 0, beyond = the figure itself. Assumed: each item has a fixed
success probability per model and the seeds draw independently; runs that share a sampling seed across the
sides draw from the same random numbers, their guesses are correlated, and the beyond-noise figure is biased
down (:data:`SHARED` flags those rows).

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
SIDE_FLOORS = tuple(f"{c}_{side}" for c in ("F_noise", "F_true_noise") for side in SIDES)
"""Each side's own floor (NaN for a side with fewer than two seeds); F and BT floors are equal by construction."""
BEYOND = ("F_beyond_noise", "BT_beyond_noise", "F_true_beyond_noise", "BT_true_beyond_noise")
HEADLINE = ("F_true_headline", "BT_true_headline")
"""F_true and BT_true of the rows that have a floor: their macro means average the same sub-benchmarks as the
floor's and the beyond-noise figure's, so that F_true - floor = beyond on every table."""
COLUMNS = (*FLOOR, *SIDE_FLOORS, *BEYOND, *HEADLINE)
"""The figures of :func:`noise_floor`, per (sub-benchmark, seed) row and on the macro rows."""
INTERVALS = tuple(f"{c}_{s}" for c in (*FLOOR, *SIDE_FLOORS, *BEYOND) for s in ("lo", "hi"))
TEXT = ("noise_seeds", "noise_floor_from", "noise_note")
SHARED_COLUMN = "noise_shared_seed"
"""Per (sub-benchmark, seed) row: True where the headline pairs runs of the same sampling seed on both sides."""
# the notes: a row's are joined with "; ", which no note holds
NEEDS_TWO = "needs two seeds on a side"
REPLICATES_AGREE = (
    "the epochs/repeats of one seed agree on every item: each restarts the sampler from the seed (or decoding is "
    "greedy), so they are one run, not draws: run the task under a second seed"
)
NO_FLOOR = (NEEDS_TWO, REPLICATES_AGREE)
"""The notes of a sub-benchmark without a floor."""
LOGLIKELIHOOD = "floor 0: log-likelihood scoring does not sample, beyond noise = the figure"
SAME = "seeds agree on every item (greedy decoding?): no sampling noise seen"
SHARED = (
    "shared sampling seed on both sides: correlated guesses bias the beyond-noise figures (about -17 pp for an "
    "unchanged model, docs/method.md): rerun one side under different seeds and pair with --seed-match order"
)
POOLED = "pooled"
SHORT = {
    NEEDS_TWO: "needs two seeds", REPLICATES_AGREE: "epochs = 1 run", LOGLIKELIHOOD: "log-likelihood",
    SAME: "seeds agree", SHARED: "shared seed!",
}  # fmt: skip
"""The notes as the terminal's narrow cells say them."""


def greedy_note(side: str, other: str) -> str:
    """The note of a sub-benchmark whose ``side`` is greedy while ``other`` samples."""
    return f"{side} seeds agree on every item (greedy?): floor from {other}"


SEED_COLUMNS = tuple(f"seed_{side}" for side in SIDES)


def _rates(weights: np.ndarray, before: np.ndarray, after: np.ndarray, k: np.ndarray) -> dict[str, np.ndarray]:
    """F, BT, F_true, BT_true (one per row of ``weights``: replicates x items) of two runs' 0/1 per item (NaN:
    not logged), on the items logged in both; the chance baseline is ``metrics.chance_rate``'s, NaN without a
    usable k for every item."""
    both = ~(np.isnan(before) | np.isnan(after))
    b, a = np.nan_to_num(before) > 0, np.nan_to_num(after) > 0

    def share(flags: np.ndarray) -> np.ndarray:
        return weights @ (flags & both).astype(float) / n

    with np.errstate(invalid="ignore"):  # 0/0 where a replicate drew no item logged under both runs
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


def _agree(runs: np.ndarray) -> bool:
    """Whether a side's seeds (items x seeds) agree on every item; an item logged under no seed agrees."""
    return bool(np.all((np.fmax.reduce(runs, axis=1) == np.fmin.reduce(runs, axis=1)) | np.isnan(runs).all(axis=1)))


def floor_rule(loglik: bool, usable: dict[str, np.ndarray]) -> tuple[list[str], str, str]:
    """(the sides whose floors are averaged into the one subtracted, ``noise_floor_from``, ``noise_note``) of a
    sub-benchmark. ``loglik``: every item scored by log-likelihood on both sides; ``usable``: per side with two
    or more seeds, its 0/1 per item and seed (NaN: not logged)."""
    if loglik:
        return [], "log-likelihood", LOGLIKELIHOOD
    if not usable:
        return [], "", NEEDS_TWO
    sampling = [side for side, runs in usable.items() if not _agree(runs)]
    if not sampling:  # no side shows sampling noise: the floor is 0, read from the sides that have seeds
        return list(usable), POOLED if len(usable) == 2 else next(iter(usable)), SAME
    greedy = [side for side in usable if side not in sampling]
    note = greedy_note(greedy[0], sampling[0]) if greedy else ""
    return sampling, POOLED if len(sampling) == 2 else sampling[0], note


def _loglik(samples: pd.DataFrame) -> pd.Series:
    """Per (category, subtask): whether every item logged option log-likelihoods on both sides."""
    scored = [samples[f"option_ll_{side}"].notna() if f"option_ll_{side}" in samples else False for side in SIDES]
    both = pd.Series(np.logical_and(*scored), index=samples.index)
    return both.groupby([samples["category"], samples["subtask"]]).all()


def _wide(runs: pd.DataFrame, seed: str, value: str, index: pd.MultiIndex) -> tuple[np.ndarray, np.ndarray]:
    """(values, seeds): ``value`` per item of ``index`` (category, subtask, doc_id) and run, a seed of column
    ``seed`` and a replicate (an epoch or repeat under it), as items x runs (NaN: not logged), and each run's
    seed."""
    keys = ["category", "subtask", "doc_id"]
    runs = runs.drop_duplicates([*keys, seed, "replicate"])
    wide = runs.pivot(index=keys, columns=[seed, "replicate"], values=value).reindex(index)
    return wide.to_numpy(dtype=float), wide.columns.get_level_values(seed).to_numpy()


def _logged(values: np.ndarray, seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The columns (runs) of a block of :func:`_wide` that hold a value for some item, and their seeds."""
    logged = ~np.isnan(values).all(axis=0)
    return values[:, logged], seeds[logged]


def _count(seeds: np.ndarray) -> str:
    """How many seeds, and runs where the seeds have several replicates (epochs, repeats)."""
    n = len(set(seeds))
    return f"{n}" if n == len(seeds) else f"{n} x replicates ({len(seeds)} runs)"


def _side_runs(samples: pd.DataFrame, unmatched: pd.DataFrame | None, side: str) -> pd.DataFrame:
    """Every run of one side: category, subtask, doc_id, replicate, seed (its own seed value) and the 0/1 as
    column ``side``, the paired rows and that side's unmatched seeds (of the sub-benchmarks paired)."""
    runs = samples[["category", "subtask", "doc_id", "replicate", f"seed_{side}", side]].rename(
        columns={f"seed_{side}": "own"}
    )
    if unmatched is not None and len(unmatched):
        category = samples.drop_duplicates("subtask").set_index("subtask")["category"]
        extra = unmatched[unmatched["side"] == side]
        extra = extra.assign(category=extra["subtask"].map(category), own=extra["seed"].astype(str))
        extra = extra.dropna(subset=["category"]).rename(columns={"correct": side})
        runs = pd.concat([runs, extra[list(runs.columns)]], ignore_index=True)
    return runs.astype({"own": str, side: float})


def _item_frame(samples: pd.DataFrame, unmatched: pd.DataFrame | None) -> pd.DataFrame:
    """subtask, doc_id, k and cluster (when logged) of every item the floor or the headline reads."""
    columns = [c for c in ("subtask", "doc_id", "k", "cluster") if c in samples]
    if unmatched is None or not len(unmatched):
        return samples[columns]
    extra = unmatched[unmatched["subtask"].isin(set(samples["subtask"]))]
    return pd.concat([samples[columns], extra[[c for c in columns if c in extra]]], ignore_index=True)


def replicates(
    samples: pd.DataFrame, n_boot: int = bootstrap.N_BOOT, seed: int = 0, unmatched: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(replicates, per sub-benchmark text): the long table category, subtask, seed, replicate,
    :data:`SHARED_COLUMN` and :data:`COLUMNS` (replicate -1 is the observed data) for the sub-benchmarks with a
    floor, and per sub-benchmark :data:`TEXT`: which seeds each side has, whose floor is subtracted, and the
    note (:data:`NEEDS_TWO`, :data:`LOGLIKELIHOOD`, :data:`SAME`, :func:`greedy_note` or '').

    ``samples``: the paired items (``PairResult.samples``); ``unmatched``: the items of seeds without a partner
    (``PairResult.unmatched``: side, subtask, seed, replicate, doc_id, correct, k, cluster)."""
    rng = np.random.default_rng(seed)
    out: dict[str, list[np.ndarray]] = {c: [] for c in ("category", "subtask", "seed", "replicate", *COLUMNS)}
    out[SHARED_COLUMN] = []
    texts = []
    sides = {c: samples.get(c, samples["seed"]) for c in SEED_COLUMNS}  # labels: exact match
    if "replicate" not in samples:
        sides["replicate"] = 0
    samples = samples.assign(**sides).astype(dict.fromkeys(["subtask", "category", "seed", *SEED_COLUMNS], str))
    keys = ["category", "subtask", "doc_id"]
    side_runs = {side: _side_runs(samples, unmatched, side) for side in SIDES}
    items = pd.concat([side_runs[side][keys] for side in SIDES]).drop_duplicates()
    index = pd.MultiIndex.from_frame(items).sort_values()
    # items x seeds of all sub-benchmarks at once: each side's own seeds, and the paired seeds of the headline
    own = {side: _wide(side_runs[side], "own", side, index) for side in SIDES}
    heads = {side: _wide(samples, "seed", side, index) for side in SIDES}
    labels_all = heads[SIDES[0]][1]  # both sides pivot the same rows on the same labels
    shared_label = samples.drop_duplicates("seed").set_index("seed")
    shared_label = shared_label["seed_before"] == shared_label["seed_after"]
    item_frame = _item_frame(samples, unmatched)
    ks = item_frame.groupby(["subtask", "doc_id"])["k"].first()
    ks = ks.reindex(index.droplevel("category")).to_numpy(dtype=float)
    loglik = _loglik(samples)
    clusters = bootstrap.item_clusters(item_frame, index)
    for (category, subtask), rows in bootstrap.sub_benchmarks(index):
        logged_runs = {side: _logged(values[rows], seeds) for side, (values, seeds) in own.items()}
        runs = {side: r for side, (r, _) in logged_runs.items()}
        usable = {side: r for side, r in runs.items() if r.shape[1] >= 2}
        # the replicates of one seed are draws of the model only where they differ somewhere; where they agree on
        # every item each restarted the sampler from the seed, and they say nothing about sampling noise
        one_run = [s for s, r in usable.items() if len(set(logged_runs[s][1])) == 1 and _agree(r)]
        usable = {side: r for side, r in usable.items() if side not in one_run}
        is_loglik = bool(loglik[(category, subtask)])
        floor_sides, floor_from, note = floor_rule(is_loglik, usable)
        if note == NEEDS_TWO and one_run:
            note = REPLICATES_AGREE
        sizes = ", ".join(f"{side} {_count(logged_runs[side][1])}" for side in SIDES)
        texts.append(
            {"subtask": subtask, "noise_seeds": f"seeds: {sizes}", "noise_floor_from": floor_from, "noise_note": note}
        )
        if note in NO_FLOOR:
            continue
        before, after = (heads[side][0][rows] for side in SIDES)
        logged = ~(np.isnan(before).all(axis=0) | np.isnan(after).all(axis=0))
        before, after, run_labels = before[:, logged], after[:, logged], labels_all[logged]
        labels = np.array(list(dict.fromkeys(run_labels)), dtype=object)  # a seed's runs: its replicates
        # a greedy side, or log-likelihood scoring, draws no random numbers: sharing a seed correlates nothing
        samplers = {side for side in SIDES if side not in usable or not _agree(usable[side])}
        shared = shared_label.reindex(labels).to_numpy(bool) & (not is_loglik) & (samplers == set(SIDES))
        # what the figures read of each item in one table, so that items with equal rows share a cell of the draw
        parts = [*usable.values(), before, after]
        table = np.column_stack([*parts, ks[rows]])
        part = None if clusters is None else clusters[rows]
        cells, weights = bootstrap.cell_weights(rng, table, part, n_boot)
        ends = np.cumsum([p.shape[1] for p in parts])[:-1]  # where each part's columns end in the table
        *side_parts, heads_before, heads_after = np.split(cells[:, :-1], ends, axis=1)
        k = cells[:, -1]
        if is_loglik:  # deterministic scores: every floor is 0
            zero = np.zeros(n_boot + 1)
            per_side = {side: (zero, zero) for side in SIDES}
            f_noise = f_true_noise = zero
        else:
            nothing = np.full(n_boot + 1, np.nan)  # a side with one seed has no floor of its own
            per_side = {side: (nothing, nothing) for side in SIDES}
            per_side.update({side: _floor(weights, r, k) for side, r in zip(usable, side_parts)})
            f_noise, f_true_noise = (np.mean([per_side[s][i] for s in floor_sides], axis=0) for i in range(2))
        side_figures = tuple(per_side[side][i] for i in range(2) for side in SIDES)
        for j, label in enumerate(labels):
            # the headline of a seed is the mean of its replicates' figures, as in subtasks.csv
            runs_of = np.flatnonzero(run_labels == label)
            each = [_rates(weights, heads_before[:, c], heads_after[:, c], k) for c in runs_of]
            r = {m: np.mean([e[m] for e in each], axis=0) for m in each[0]}
            figures = (f_noise, f_noise, f_true_noise, f_true_noise, *side_figures)
            figures += (r["F"] - f_noise, r["BT"] - f_noise, r["F_true"] - f_true_noise, r["BT_true"] - f_true_noise)
            figures += (r["F_true"], r["BT_true"])
            for column, values in zip(COLUMNS, figures):
                out[column].append(values)
            for column, value in (("category", category), ("subtask", subtask), ("seed", label)):
                out[column].append(np.full(n_boot + 1, value, dtype=object))
            out[SHARED_COLUMN].append(np.full(n_boot + 1, shared[j]))
            out["replicate"].append(np.arange(-1, n_boot))
    columns = ["category", "subtask", "seed", "replicate", SHARED_COLUMN, *COLUMNS]
    text = pd.DataFrame(texts, columns=["subtask", *TEXT])
    if not out["replicate"]:
        return pd.DataFrame(columns=columns), text
    return pd.DataFrame({c: np.concatenate(out[c]) for c in columns}), text


def noise_floor(
    samples: pd.DataFrame,
    n_boot: int = bootstrap.N_BOOT,
    seed: int = 0,
    level: float = bootstrap.LEVEL,
    unmatched: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(per sub-benchmark and seed, per category and OVERALL, per sub-benchmark text).

    The first frame has subtask, seed, :data:`SHARED_COLUMN`, :data:`COLUMNS` (the observed figures) and
    :data:`INTERVALS`; the second category, ``<column>_mean`` (the macro average over seeds, every column over
    the same rows: those with a floor), ``noise_rows`` (how many sub-benchmarks those are), :data:`SHARED_COLUMN`
    (any of its rows) and :data:`INTERVALS`; the third :data:`TEXT` per sub-benchmark, for every sub-benchmark
    (also those without a floor). ``unmatched``: as :func:`replicates`.
    """
    reps, texts = replicates(samples, n_boot, seed, unmatched)
    tail = (1.0 - level) / 2.0
    observed = reps[reps["replicate"] == -1]
    drawn = reps[reps["replicate"] >= 0]
    spread = [c for c in COLUMNS if c not in HEADLINE]

    def bounds(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
        grouped = frame.groupby(keys, sort=False)[spread]
        lo, hi = grouped.quantile(tail).add_suffix("_lo"), grouped.quantile(1.0 - tail).add_suffix("_hi")
        return pd.concat([lo, hi], axis=1)[list(INTERVALS)]

    cat_columns = ["category", *(f"{c}_mean" for c in COLUMNS), "noise_rows", SHARED_COLUMN, *INTERVALS]
    if observed.empty:
        empty = pd.DataFrame(columns=["subtask", "seed", SHARED_COLUMN, *COLUMNS, *INTERVALS])
        return empty, pd.DataFrame(columns=cat_columns), texts
    observed = observed.astype({c: float for c in COLUMNS})
    drawn = drawn.astype({c: float for c in COLUMNS})
    rows = observed.set_index(["subtask", "seed"])[[SHARED_COLUMN, *COLUMNS]].join(bounds(drawn, ["subtask", "seed"]))
    macro = metrics.macro_means(drawn, spread, by=["replicate"]).reset_index()
    means = metrics.macro_means(observed, COLUMNS).add_suffix("_mean")
    counts = observed.groupby("category")["subtask"].nunique()
    counts[metrics.OVERALL] = observed["subtask"].nunique()
    shared = observed.groupby("category")[SHARED_COLUMN].any()
    shared[metrics.OVERALL] = bool(observed[SHARED_COLUMN].any())
    cats = means.assign(
        noise_rows=counts.reindex(means.index).to_numpy(), **{SHARED_COLUMN: shared.reindex(means.index).to_numpy()}
    )
    cats = cats.join(bounds(macro, ["category"]))
    return rows.reset_index(), cats.reset_index()[cat_columns], texts
