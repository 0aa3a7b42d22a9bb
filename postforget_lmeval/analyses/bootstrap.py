"""Percentile bootstrap intervals for F_true and BT_true per sub-benchmark and seed, category and overall.

Resampling unit: the item (a ``doc_id``) within its sub-benchmark. One replicate draws n items with
replacement from the sub-benchmark's n items, and the same draw is used for every seed, so the
correlation between seeds (the same question is easy or hard under each) is kept. F_true and BT_true
of a replicate use the chance baseline of ``metrics.chance_rate`` with the replicate's own accuracies
and k_eff. Categories and OVERALL average the replicates with the macro structure of the headline
figures (``macro.macro_means``), so their intervals describe exactly the numbers in categories.csv.

Vectorised: F_true depends on an item only through its transition under each seed and its k, so the
items are grouped into cells of equal (transitions, k) and a replicate is a vector of cell counts, all
replicates at once; Python loops run over sub-benchmarks, never over replicates. The counts are drawn
in one of two ways with the same distribution, whichever is cheaper for the sub-benchmark: one
multinomial draw per replicate (``Generator.multinomial``: a binomial draw per cell, so its cost grows
with the cells, up to 4^seeds x distinct k), or the items themselves drawn with replacement
(``Generator.integers``, counted per cell: its cost grows with the items). With 3 seeds a sub-benchmark
of 400 items has ~60 cells and resampling is ~2.5x cheaper; with one seed (4 cells) the multinomial is
far cheaper at any size. The choice changes the random numbers, not the intervals' meaning; the seed
makes both reproducible.

The draws still take most of the analyses' time on large pairs, and numpy holds the GIL while drawing,
so :func:`in_background` computes the intervals in a forked process while the caller goes on with
the other analyses (same generator, same draws, same figures).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from postforget_lmeval.analyses import background
from postforget_lmeval import metrics
from postforget_lmeval.pairing.keys import text_groups
from postforget_lmeval.analyses.macro import macro_means

N_BOOT = 1000
LEVEL = 0.95
RATES = ("F_true", "BT_true")
COLUMNS = tuple(f"{r}_{s}" for r in RATES for s in ("lo", "hi"))
"""The interval columns of both tables of :func:`intervals`."""
BACKGROUND_MIN_ITEMS = 20_000  # paired items below which a process costs more than it saves
# The draws' cost per replicate (numpy 2.4 on 2 cores; the bench pair has 66 sub-benchmarks of 400 items,
# 3 seeds, ~60 cells each): resampling, per item (integers ~1.5 ns, bincount ~2, reduceat ~1: 4.4-5.7 ns for
# 400-5000 items); the multinomial, per cell (one binomial draw: 65-95 ns).
_NS_PER_ITEM = 5.0
_NS_PER_CELL = 80.0
_SECONDS_PER_DRAW = 9e-9  # intervals() in a forked process, all steps (bench pair: 0.22-0.27 CPU-s, 26.4M draws)
# Items drawn per chunk: arrays of 64-256 kB reuse the cache and the heap; one chunk of MBs per sub-benchmark
# costs ~2x as much in a fresh forked process, which faults its new pages in every time.
_CHUNK_ITEMS = 1 << 15
_MISSING = 4  # transition code of an item not paired under a seed; 3: 1->1, 2: 1->0, 1: 0->1, 0: 0->0


def _wide(samples: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """One row per (category, subtask, doc_id), grouped by (category, subtask) in the sorted order of their
    text: the groups' names, the first wide row of each group (and the end), the transition code per seed
    of each row (``_MISSING`` if unpaired; the first item logged), its k (the first one logged) and the seeds.
    """
    groups, names = text_groups(samples, ["category", "subtask"])
    seed_of, seeds = text_groups(samples, ["seed"])
    doc, doc_ids = pd.factorize(samples["doc_id"])
    ok = (groups >= 0) & (doc >= 0) & (seed_of >= 0)
    row, wide_keys = pd.factorize(groups[ok] * len(doc_ids) + doc[ok], sort=True)  # sorted: groups in order
    n_seeds = len(seeds)
    cell = row * n_seeds + seed_of[ok]
    first = ~pd.Series(cell).duplicated().to_numpy()  # the first item of a (row, seed), as pivot's "first"
    codes = np.full(len(wide_keys) * n_seeds, _MISSING, dtype=int)
    code = 2 * samples["before"].to_numpy(dtype=np.int8) + samples["after"].to_numpy(dtype=np.int8)
    codes[cell[first]] = code[ok][first]
    k_items = samples["k"].to_numpy(dtype=float)[ok]
    logged = ~np.isnan(k_items)
    first_k = ~pd.Series(row[logged]).duplicated().to_numpy()  # groupby's "first" skips NaN
    k = np.full(len(wide_keys), np.nan)
    k[row[logged][first_k]] = k_items[logged][first_k]
    used, starts = np.unique(wide_keys // max(len(doc_ids), 1), return_index=True)
    bounds = np.append(starts, len(wide_keys))
    codes = codes.reshape(len(wide_keys), n_seeds)
    return names.take(used).reset_index(drop=True), bounds, codes, k, list(seeds["seed"])


def _cells(codes: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Cells of equal (transition per seed, k), in the lexicographic order of those values: their codes
    (cells x seeds), 1/k, item counts; k usable?"""
    usable = bool(np.all(np.isfinite(k) & (k > 1)))
    k_values, k_rank = np.unique(np.where(usable, k, 2.0), return_inverse=True)  # finite: pd.factorize's, sorted
    key = np.zeros(len(codes), dtype=np.int64)
    for column in codes.T:  # the codes in base _MISSING + 1, the first seed the most significant digit
        key = key * (_MISSING + 1) + column
    cells, counts = np.unique(key * len(k_values) + k_rank, return_counts=True)
    rest, k_of_cell = np.divmod(cells, len(k_values))
    digits = []
    for _ in range(codes.shape[1]):
        rest, digit = np.divmod(rest, _MISSING + 1)
        digits.append(digit)
    return np.column_stack(digits[::-1]).astype(int), 1.0 / k_values[k_of_cell], counts, usable


def _by_items(n_items: int, n_cells: int) -> bool:
    """Is resampling the items (cost ~ items) cheaper than the multinomial draws (cost ~ cells)?"""
    return n_items * _NS_PER_ITEM < n_cells * _NS_PER_CELL


def _draws(rng: np.random.Generator, counts: np.ndarray, n_boot: int) -> np.ndarray:
    """Cell counts (replicates x cells) of ``n_boot`` replicates of the items counted by ``counts``, drawn
    the cheaper way: the items resampled (:func:`_item_draws`) or one multinomial draw per replicate."""
    n = int(counts.sum())
    if _by_items(n, len(counts)):
        return _item_draws(rng, counts, n_boot)
    return rng.multinomial(n, counts / n, size=n_boot)


def _item_draws(rng: np.random.Generator, counts: np.ndarray, n_boot: int) -> np.ndarray:
    """Cell counts (replicates x cells) of ``n_boot`` replicates that each draw the n items with replacement.

    The items are listed cell by cell (``counts`` of each, in the cells' order; the items of a cell are
    interchangeable); ``rng.integers`` draws positions in that list, replicates x n, in chunks of at most
    ``_CHUNK_ITEMS`` draws; ``np.bincount`` counts each position in each replicate and ``np.add.reduceat``
    sums those counts over each cell's positions.
    """
    n = int(counts.sum())
    dtype = np.int16 if n <= np.iinfo(np.int16).max else np.int32
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])  # position of each cell's first item
    per_chunk = max(1, _CHUNK_ITEMS // n)
    out = [np.zeros((0, len(counts)), dtype=np.int64)]
    for done in range(0, n_boot, per_chunk):
        reps = min(per_chunk, n_boot - done)
        drawn = rng.integers(0, n, size=(reps, n), dtype=dtype) + np.arange(0, reps * n, n)[:, None]
        times = np.bincount(drawn.ravel(), minlength=reps * n).reshape(reps, n)
        out.append(np.add.reduceat(times, first, axis=1))
    return np.concatenate(out)


def _replicate_rates(draws: np.ndarray, codes: np.ndarray, inv_k: np.ndarray, usable: bool) -> dict[str, np.ndarray]:
    """F_true and BT_true of every replicate (rows of ``draws``) for each seed column of ``codes``."""
    present = (codes != _MISSING).astype(float)
    one_hot = (codes[:, :, None] == np.arange(4)).astype(float).reshape(len(codes), -1)  # cells x (seed, code)
    count = (draws @ one_hot).reshape(len(draws), codes.shape[1], 4)  # integers, exact in any order of summing
    n = count.sum(axis=2)  # replicates x seeds
    count = {c: count[:, :, c] for c in range(4)}
    with np.errstate(invalid="ignore", divide="ignore"):
        acc_b = (count[3] + count[2]) / n
        acc_a = (count[3] + count[1]) / n
        if usable:
            k_eff = n / (draws @ (present * inv_k[:, None]))
            chance = metrics.chance_rate(acc_b, acc_a, k_eff)
        else:
            chance = np.full(n.shape, np.nan)
        return {
            "F_true": np.maximum(count[2] / n - chance, 0.0),
            "BT_true": np.maximum(count[1] / n - chance, 0.0),
        }


def _rates(
    samples: pd.DataFrame, n_boot: int, seed: int
) -> tuple[pd.DataFrame, list[np.ndarray], dict[str, list[np.ndarray]], list[str]]:
    """The replicates of every sub-benchmark, drawn in the order of their (category, subtask).

    Returns their names (category, subtask); per sub-benchmark the positions in ``seeds`` of the seeds
    it has; per rate and sub-benchmark an array replicates x those seeds (row 0: the observed data,
    then ``n_boot`` replicates); and the seeds, sorted.
    """
    rng = np.random.default_rng(seed)
    names, starts, codes_all, k_all, seeds = _wide(samples)
    seed_positions = []
    values: dict[str, list[np.ndarray]] = {r: [] for r in RATES}
    for start, end in zip(starts[:-1], starts[1:]):
        present = (codes_all[start:end] != _MISSING).any(axis=0)
        codes, inv_k, counts, usable = _cells(codes_all[start:end][:, present], k_all[start:end])
        draws = _draws(rng, counts, n_boot)
        rates = _replicate_rates(np.vstack([counts, draws]).astype(float), codes, inv_k, usable)
        seed_positions.append(np.flatnonzero(present))
        for r in RATES:
            values[r].append(rates[r])
    return names, seed_positions, values, seeds


def replicates(samples: pd.DataFrame, n_boot: int = N_BOOT, seed: int = 0) -> pd.DataFrame:
    """Long table of bootstrap replicates: category, subtask, seed, replicate, F_true, BT_true.

    ``samples``: one row per paired item with subtask, category, seed, doc_id, before, after, k.
    Replicate ``-1`` is the observed data (cell counts as they are), kept for checks against subtasks.csv.
    """
    names, seed_positions, values, seeds = _rates(samples, n_boot, seed)
    if not seed_positions:
        return pd.DataFrame(columns=["category", "subtask", "seed", "replicate", *RATES])
    return _table(names, seed_positions, values, seeds, first=-1).astype(
        {"category": "str", "subtask": "str", "seed": "str"}
    )


def _table(
    names: pd.DataFrame, seed_positions: list[np.ndarray], values: dict[str, list[np.ndarray]], seeds: list[str],
    first: int,
) -> pd.DataFrame:
    """The long table of the replicates ``first``, ``first + 1``, ... (rows of ``values``), its key columns
    categorical (categories sorted): cheap to build and to group."""
    n_reps = len(values[RATES[0]][0])
    sizes = np.array([len(p) for p in seed_positions], dtype=int)
    key = {col: pd.factorize(names[col], sort=True) for col in ("category", "subtask")}
    return pd.DataFrame(
        {
            **{c: pd.Categorical.from_codes(np.repeat(code, sizes * n_reps), text) for c, (code, text) in key.items()},
            "seed": pd.Categorical.from_codes(np.concatenate([np.tile(p, n_reps) for p in seed_positions]), seeds),
            "replicate": np.concatenate([np.repeat(np.arange(first, first + n_reps), n) for n in sizes]),
            **{r: np.concatenate([v.ravel() for v in values[r]]) for r in RATES},
        }
    )


def _percentiles(values: np.ndarray, qs: tuple[float, ...]) -> list[np.ndarray]:
    """Per column of ``values`` (replicates x columns), each of the quantiles ``qs`` of its non-NaN values
    (NaN without any), by the steps of pandas' groupby ``quantile`` with linear interpolation."""
    if not len(values):
        return [np.full(values.shape[1], np.nan) for _ in qs]
    ordered = np.sort(values, axis=0)  # NaN last
    n = (~np.isnan(values)).sum(axis=0)
    column = np.arange(values.shape[1])
    last = len(values) - 1
    out = []
    for q in qs:
        position = q * (n - 1).astype(float)
        at = position.astype(np.int64)  # truncated
        frac = position % 1
        value = ordered[np.clip(at, 0, last), column]
        following = ordered[np.clip(at + 1, 0, last), column]
        out.append(np.where(n == 0, np.nan, np.where(frac == 0.0, value, value + (following - value) * frac)))
    return out


def _bounds(values: pd.DataFrame, keys: list[str], level: float) -> pd.DataFrame:
    """Percentile interval of each rate per group of ``keys``, from the replicates >= 0."""
    tail = (1.0 - level) / 2.0
    grouped = values[values["replicate"] >= 0].groupby(keys, sort=False)[list(RATES)]
    lo = grouped.quantile(tail).add_suffix("_lo")
    hi = grouped.quantile(1.0 - tail).add_suffix("_hi")
    return pd.concat([lo, hi], axis=1)[list(COLUMNS)]


def intervals(
    samples: pd.DataFrame, n_boot: int = N_BOOT, seed: int = 0, level: float = LEVEL
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per sub-benchmark and seed, per category and OVERALL) percentile intervals of F_true and BT_true.

    The first frame has subtask, seed and ``F_true_lo, F_true_hi, BT_true_lo, BT_true_hi``; the second
    has category and the same columns, for the macro average over seeds. A sub-benchmark belongs to one
    category (pairing maps each subtask to its category).
    """
    names, seed_positions, values, seeds = _rates(samples, n_boot, seed)
    tail = (1.0 - level) / 2.0
    qs = (tail, 1.0 - tail)  # as _bounds computes them
    per_row = {}
    for r in RATES:  # a column per (sub-benchmark, seed), the replicates >= 0 down it
        per_row[f"{r}_lo"], per_row[f"{r}_hi"] = _percentiles(np.hstack([v[1:] for v in values[r]]), qs)
    rows = np.repeat(np.arange(len(names)), [len(p) for p in seed_positions])
    keys = {"subtask": names["subtask"].to_numpy(dtype=object)[rows],
            "seed": np.array(seeds, dtype=object)[np.concatenate(seed_positions)]}  # fmt: skip
    reps = _table(names, seed_positions, {r: [v[1:] for v in values[r]] for r in RATES}, seeds, first=0)
    macro = macro_means(reps, RATES, by=["replicate"]).reset_index()
    return (
        pd.DataFrame({**keys, **{c: per_row[c] for c in COLUMNS}}).astype({"subtask": "str", "seed": "str"}),
        _bounds(macro, ["category"], level).reset_index().astype({"category": "str"}),
    )


Intervals = tuple[pd.DataFrame, pd.DataFrame]


def in_background(
    samples: pd.DataFrame, n_boot: int = N_BOOT, seed: int = 0, level: float = LEVEL
) -> tuple[Callable[[], Intervals], float]:
    """:func:`intervals` computed in a forked process (:func:`background.in_background`: small pairs in the
    caller's); call the returned function to wait for them. Also returns the CPU seconds the process is
    expected to take (0 when none is started)."""
    forked = len(samples) >= BACKGROUND_MIN_ITEMS
    wait = background.in_background(lambda: intervals(samples, n_boot, seed, level), worth_it=forked)
    if not forked or samples.empty:
        return wait, 0.0
    items = len(samples) / max(1, samples["seed"].nunique())  # each drawn n_boot times, under every seed at once
    return wait, _SECONDS_PER_DRAW * items * n_boot
