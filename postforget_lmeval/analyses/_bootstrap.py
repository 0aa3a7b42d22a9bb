"""Percentile bootstrap intervals for F_true and BT_true per sub-benchmark and seed, category and overall.

Resampling unit: the item (a ``doc_id``) within its sub-benchmark. One replicate draws n items with
replacement from the sub-benchmark's n items, and the same draw is used for every seed, so the
correlation between seeds (the same question is easy or hard under each) is kept. Where the items carry a
``cluster`` (questions that share a text: an MCTest story, a MuSR narrative), a replicate draws whole
clusters instead, because items of one text succeed and fail together and an item draw would understate
the spread. A replicate is
therefore a weight per item (how often it was drawn); its transition counts are weighted sums, and its
F_true and BT_true use the chance baseline of ``metrics.chance_rate`` with the replicate's own
accuracies and k_eff. Categories and OVERALL average the replicates with the macro structure of the
headline figures (``metrics.macro_means``), so their intervals describe exactly the numbers in
categories.csv.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from postforget_lmeval import metrics

N_BOOT = 1000
LEVEL = 0.95
Z = float(stats.norm.ppf(0.5 + LEVEL / 2.0))
"""The normal quantile of the two-sided interval at :data:`LEVEL` (1.96)."""
RATES = ("F_true", "BT_true")
COLUMNS = tuple(f"{r}_{s}" for r in RATES for s in ("lo", "hi"))
"""The interval columns of both tables of :func:`intervals`."""
UNIT = "item within sub-benchmark, same draw for every seed"
"""The resampling unit, as summary.json states it; the sub-benchmarks resampled by cluster are listed beside it."""


def _weights(rng: np.random.Generator, cell: np.ndarray, n_boot: int) -> np.ndarray:
    """(1 + n_boot) x cells: how many items of each cell a replicate holds. ``cell``: the cell of each of the
    n items. Row 0 is the observed data, then ``n_boot`` replicates that each draw n items with replacement."""
    n, n_cells = len(cell), int(cell.max()) + 1
    picks = cell[rng.integers(0, n, size=(n_boot, n))]
    offsets = n_cells * np.arange(n_boot)[:, None]  # replicate r counts its cells in columns r*n_cells ...
    drawn = np.bincount((picks + offsets).ravel(), minlength=n_boot * n_cells).reshape(n_boot, n_cells)
    return np.vstack([np.bincount(cell), drawn]).astype(float)  # every cell holds an item


def cluster_weights(rng: np.random.Generator, cluster: np.ndarray, n_boot: int) -> np.ndarray:
    """(1 + n_boot) x items: how often each item is in a replicate that draws as many clusters as there are, with
    replacement (row 0: the observed data). ``cluster``: each item's cluster key; an item is drawn with its
    cluster, so items of one text stay together."""
    ids, of_item = np.unique(np.asarray(cluster), return_inverse=True)
    return _weights(rng, np.arange(len(ids)), n_boot)[:, of_item.ravel()]


def cell_weights(
    rng: np.random.Generator, table: np.ndarray, clusters: np.ndarray | None, n_boot: int
) -> tuple[np.ndarray, np.ndarray]:
    """(cells, weights) that resample the items of one sub-benchmark. ``table``: what the figures read of each
    item (items x columns; NaN where missing, never -1); ``clusters``: each item's cluster key, or None.
    Items with equal rows are interchangeable, so a replicate only needs how many items of each distinct row
    (cell) it holds: ``cells`` is cells x columns, ``weights`` (1 + n_boot) x cells, row 0 the observed data.
    Items are drawn one by one, or with their cluster where some cluster holds two or more items."""
    filled = np.nan_to_num(table, nan=-1.0)
    cells, cell = np.unique(filled, axis=0, return_inverse=True)
    cells[cells == -1.0] = np.nan
    cell = cell.ravel()
    if clusters is None or len(clusters) == len(set(clusters)):
        return cells, _weights(rng, cell, n_boot)
    weights = np.zeros((n_boot + 1, len(cells)))
    np.add.at(weights.T, cell, cluster_weights(rng, clusters, n_boot).T)  # an item's weight goes to its cell
    return cells, weights


def item_clusters(samples: pd.DataFrame, index: pd.MultiIndex) -> np.ndarray | None:
    """Per item of ``index`` (subtask, doc_id as its last two levels) its cluster key, or None when no item of
    them names one; an item without a key is a cluster of its own."""
    if "cluster" not in samples or samples["cluster"].isna().all():
        return None
    keys = samples.groupby(["subtask", "doc_id"], observed=True)["cluster"].first()
    pos = pd.MultiIndex.from_arrays([index.get_level_values("subtask"), index.get_level_values("doc_id")])
    found = keys.reindex(pos).to_numpy(dtype=object)
    if pd.isna(found).all():
        return None
    alone = [f"\0item {d}" for d in index.get_level_values("doc_id")]
    return np.array([alone[i] if pd.isna(c) else str(c) for i, c in enumerate(found)], dtype=object)


def sub_benchmarks(index: pd.MultiIndex) -> list[tuple[tuple[str, str], slice]]:
    """The blocks of ``index`` (sorted by (category, subtask), ``doc_id`` its last level): each sub-benchmark's
    (category, subtask) and the slice of its rows, in order; none for an empty index."""
    blocks = index.droplevel("doc_id")
    if not len(blocks):
        return []
    starts = np.flatnonzero(np.r_[True, blocks[1:] != blocks[:-1]])
    return [(blocks[start], slice(start, end)) for start, end in zip(starts, [*starts[1:], len(blocks)])]


def usable_k(k: np.ndarray) -> np.ndarray:
    """``k`` where every item has a usable option count (> 1), else all NaN: no replicate then has a chance
    baseline, and k splits no cell."""
    return k if np.all(np.isfinite(k) & (k > 1)) else np.full(len(k), np.nan)


def rates(weights: np.ndarray, codes: np.ndarray, k: np.ndarray) -> dict[str, np.ndarray]:
    """F_true and BT_true (replicates x seeds) of the replicates ``weights`` (replicates x cells) of cells whose
    transition code per seed is ``codes`` (cells x seeds: 3 1->1, 2 1->0, 1 0->1, 0 0->0, NaN unpaired) and
    whose option count is ``k``; without a usable k (> 1) for every item, no replicate has a chance baseline."""
    paired = ~np.isnan(codes)

    def count(flags: np.ndarray) -> np.ndarray:
        return weights @ (flags & paired).astype(float)

    n = count(paired)
    with np.errstate(invalid="ignore"):  # 0/0 where a replicate drew no item paired under a seed
        acc_b, acc_a = count(codes >= 2) / n, count(codes % 2 == 1) / n
        if np.all(np.isfinite(k) & (k > 1)):
            k_eff = n / (weights @ np.where(paired, 1.0 / k[:, None], 0.0))
            chance = metrics.chance_rate(acc_b, acc_a, k_eff)
        else:
            chance = np.full(n.shape, np.nan)
        return {
            "F_true": np.maximum(count(codes == 2) / n - chance, 0.0),
            "BT_true": np.maximum(count(codes == 1) / n - chance, 0.0),
        }


def replicates(samples: pd.DataFrame, n_boot: int = N_BOOT, seed: int = 0) -> pd.DataFrame:
    """Long table of bootstrap replicates: category, subtask, seed, replicate, F_true, BT_true.

    ``samples``: one row per paired item with subtask, category, seed, doc_id, before, after, k and replicate
    (an item's first logged k, and its first row under a seed and replicate, count); an item is drawn with all its
    replicates, and a seed's figure is the mean of its replicates'. The sub-benchmarks draw from one generator
    seeded with ``seed``, in the order of their (category, subtask). Replicate ``-1`` is the observed data,
    kept for checks against subtasks.csv.
    """
    rng = np.random.default_rng(seed)
    items = samples[["category", "subtask", "seed", "doc_id", "k"]].astype(
        {"category": str, "subtask": str, "seed": str}
    )
    items["code"] = 2 * samples["before"].to_numpy(dtype=int) + samples["after"].to_numpy(dtype=int)
    items["gen"] = samples["replicate"].to_numpy() if "replicate" in samples else 0
    items = items.drop_duplicates(["category", "subtask", "doc_id", "seed", "gen"])
    keys = ["category", "subtask", "doc_id"]
    # items x runs (seed, replicate of an epoch or repeat), both sorted: an item is drawn with all its replicates
    wide = items.pivot(index=keys, columns=["seed", "gen"], values="code")
    ks = items.groupby(keys)["k"].first().reindex(wide.index).to_numpy(dtype=float)  # the first k logged
    all_codes, seeds = wide.to_numpy(dtype=float), wide.columns.get_level_values("seed").to_numpy()
    clusters = item_clusters(samples, wide.index)
    out: dict[str, list[np.ndarray]] = {c: [] for c in ("category", "subtask", "seed", "replicate", *RATES)}
    for (category, subtask), rows in sub_benchmarks(wide.index):
        codes, k = all_codes[rows], usable_k(ks[rows])
        present = ~np.isnan(codes).all(axis=0)  # this sub-benchmark's seeds
        codes = codes[:, present]
        part = None if clusters is None else clusters[rows]
        cells, weights = cell_weights(rng, np.column_stack([codes, k]), part, n_boot)
        figures = rates(weights, cells[:, :-1], cells[:, -1])
        runs = seeds[present]
        for seed_name in dict.fromkeys(runs):  # a seed's figure is the mean of its replicates', as in subtasks.csv
            out["category"].append(np.full(n_boot + 1, category, dtype=object))
            out["subtask"].append(np.full(n_boot + 1, subtask, dtype=object))
            out["seed"].append(np.full(n_boot + 1, seed_name, dtype=object))
            out["replicate"].append(np.arange(-1, n_boot))
            for r in RATES:
                out[r].append(figures[r][:, runs == seed_name].mean(axis=1))
    if not out["replicate"]:
        return pd.DataFrame(columns=["category", "subtask", "seed", "replicate", *RATES])
    return pd.DataFrame({c: np.concatenate(v) for c, v in out.items()})


def _bounds(values: pd.DataFrame, keys: list[str], level: float) -> pd.DataFrame:
    """Percentile interval (linear interpolation, NaN left out) of each rate per group of ``keys``, the groups in
    their order in ``values``."""
    tail = (1.0 - level) / 2.0
    grouped = values.groupby(keys, sort=False)[list(RATES)]
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
    reps = replicates(samples, n_boot, seed)
    reps = reps[reps["replicate"] >= 0]
    macro = metrics.macro_means(reps, RATES, by=["replicate"]).reset_index()
    return _bounds(reps, ["subtask", "seed"], level).reset_index(), _bounds(macro, ["category"], level).reset_index()
