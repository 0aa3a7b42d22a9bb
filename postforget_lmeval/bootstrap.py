"""Percentile bootstrap intervals for F_true and BT_true per sub-benchmark and seed, category and overall.

Resampling unit: the item (a ``doc_id``) within its sub-benchmark. One replicate draws n items with
replacement from the sub-benchmark's n items, and the same draw is used for every seed, so the
correlation between seeds (the same question is easy or hard under each) is kept. F_true and BT_true
of a replicate use the chance baseline of ``metrics.chance_rate`` with the replicate's own accuracies
and k_eff. Categories and OVERALL average the replicates with the macro structure of the headline
figures (``macro.macro_means``), so their intervals describe exactly the numbers in categories.csv.

Vectorised: F_true depends on an item only through its transition under each seed and its k, so the
items are grouped into cells of equal (transitions, k) and a replicate is one multinomial draw of cell
counts (``Generator.multinomial``, all replicates at once); that has the same distribution as
resampling the items themselves. Python loops run over sub-benchmarks, never over replicates.

The draws still take most of the analyses' time on large pairs, and numpy holds the GIL while drawing,
so :func:`in_background` computes the intervals in a forked process while the caller goes on with
the other analyses (same generator, same draws, same figures).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable

import numpy as np
import pandas as pd

from postforget_lmeval import metrics
from postforget_lmeval.groups import text_groups
from postforget_lmeval.macro import macro_means

N_BOOT = 1000
LEVEL = 0.95
RATES = ("F_true", "BT_true")
COLUMNS = tuple(f"{r}_{s}" for r in RATES for s in ("lo", "hi"))
"""The interval columns of both tables of :func:`intervals`."""
BACKGROUND_MIN_ITEMS = 20_000  # paired items below which a process costs more than it saves
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
    return names.take(used).reset_index(drop=True), np.append(starts, len(wide_keys)), codes.reshape(-1, n_seeds), k, list(seeds["seed"])


def _cells(codes: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Cells of equal (transition per seed, k): their codes (cells x seeds), 1/k, item counts; k usable?"""
    usable = bool(np.all(np.isfinite(k) & (k > 1)))
    table = np.column_stack([codes, np.where(usable, k, 2.0)])
    cells, counts = np.unique(table, axis=0, return_counts=True)
    return cells[:, :-1].astype(int), 1.0 / cells[:, -1], counts, usable


def _replicate_rates(draws: np.ndarray, codes: np.ndarray, inv_k: np.ndarray, usable: bool) -> dict[str, np.ndarray]:
    """F_true and BT_true of every replicate (rows of ``draws``) for each seed column of ``codes``."""
    present = (codes != _MISSING).astype(float)
    n = draws @ present  # replicates x seeds
    with np.errstate(invalid="ignore", divide="ignore"):
        count = {c: draws @ (codes == c).astype(float) for c in range(4)}
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


def _draw(samples: pd.DataFrame, n_boot: int, seed: int) -> pd.DataFrame:
    """:func:`replicates` with categorical key columns (their categories sorted): cheap to build and group."""
    rng = np.random.default_rng(seed)
    names, starts, codes_all, k_all, seeds_all = _wide(samples)
    seed_cols, sizes = [], []
    values: dict[str, list[np.ndarray]] = {r: [] for r in RATES}
    for start, end in zip(starts[:-1], starts[1:]):  # sub-benchmarks in the order of their (category, subtask)
        present = (codes_all[start:end] != _MISSING).any(axis=0)
        codes, inv_k, counts, usable = _cells(codes_all[start:end][:, present], k_all[start:end])
        draws = rng.multinomial(counts.sum(), counts / counts.sum(), size=n_boot).astype(float)
        draws = np.vstack([counts[None, :].astype(float), draws])
        rates = _replicate_rates(draws, codes, inv_k, usable)
        seed_cols.append(np.tile(np.flatnonzero(present), n_boot + 1))
        sizes.append(int(present.sum()))
        for r in RATES:
            values[r].append(rates[r].ravel())
    if not sizes:
        return pd.DataFrame(columns=["category", "subtask", "seed", "replicate", *RATES])
    rows_of = np.array(sizes) * (n_boot + 1)  # one frame for all sub-benchmarks (a frame each costs more)
    key = {col: pd.factorize(names[col], sort=True) for col in ("category", "subtask")}
    return pd.DataFrame(
        {
            **{col: pd.Categorical.from_codes(np.repeat(code, rows_of), text) for col, (code, text) in key.items()},
            "seed": pd.Categorical.from_codes(np.concatenate(seed_cols), pd.Index(seeds_all)),
            "replicate": np.concatenate([np.repeat(np.arange(-1, n_boot), n) for n in sizes]),
            **{r: np.concatenate(values[r]) for r in RATES},
        }
    )


def replicates(samples: pd.DataFrame, n_boot: int = N_BOOT, seed: int = 0) -> pd.DataFrame:
    """Long table of bootstrap replicates: category, subtask, seed, replicate, F_true, BT_true.

    ``samples``: one row per paired item with subtask, category, seed, doc_id, before, after, k.
    Replicate ``-1`` is the observed data (cell counts as they are), kept for checks against subtasks.csv.
    """
    reps = _draw(samples, n_boot, seed)
    return reps.astype({"category": "str", "subtask": "str", "seed": "str"}) if len(reps) else reps


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
    has category and the same columns, for the macro average over seeds.
    """
    reps = _draw(samples, n_boot, seed)
    per_row = _bounds(reps, ["subtask", "seed"], level).reset_index().astype({"subtask": "str", "seed": "str"})
    macro = macro_means(reps, RATES, by=["replicate"]).reset_index()
    per_cat = _bounds(macro, ["category"], level).reset_index().astype({"category": "str"})
    return per_row, per_cat


Intervals = tuple[pd.DataFrame, pd.DataFrame]


def in_background(
    samples: pd.DataFrame, n_boot: int = N_BOOT, seed: int = 0, level: float = LEVEL
) -> Callable[[], Intervals]:
    """:func:`intervals` computed in a forked process; call the returned function to wait for them.

    Small pairs, platforms without fork and daemonic callers compute them in the caller's process
    when the function is called. The child inherits ``samples`` (nothing is pickled on the way in)
    and sends back only the two small interval tables; if it dies, they are computed here.
    """
    if (
        len(samples) < BACKGROUND_MIN_ITEMS
        or "fork" not in multiprocessing.get_all_start_methods()
        or multiprocessing.current_process().daemon  # a daemonic process may not start one
    ):
        return lambda: intervals(samples, n_boot, seed, level)
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)

    def child() -> None:
        try:
            send.send(intervals(samples, n_boot, seed, level))
        finally:
            send.close()

    process = ctx.Process(target=child, daemon=True)
    process.start()
    send.close()

    def result() -> Intervals:
        try:
            return receive.recv()
        except EOFError:  # the child died (killed, out of memory): compute them here
            return intervals(samples, n_boot, seed, level)
        finally:
            receive.close()
            process.join()

    return result
