"""Recipe comparison: did one post-training recipe forget less than another, measured on the same items?

Two pairs that share their before run (replay against plain, LoRA against full fine-tuning) hold, for every
item and before-seed, one before answer and two after answers. The comparison is item by item:

* the difference of the macro figures (F_true, BT_true of pair A minus pair B, per category and OVERALL, as
  categories.csv averages them) with a percentile bootstrap interval in which both pairs are resampled by the
  same draw of items (or of clusters: an MCTest story, a MuSR narrative), so what the items share cancels;
* a paired test on the items one recipe forgot and the other kept: per item (or cluster) d = the number of
  its before-right answers that A lost and B kept minus those B lost and A kept, summed over seeds; with no
  difference between the recipes each d is as likely positive as negative, so a sign-flip permutation test of
  the sum of d is exact whatever the seeds and clusters (with one seed and no clusters it is the exact
  McNemar test on the two discordant counts). The same for gains (0->1).

Only items paired in both pairs count; their before answers must agree, or the pairs do not share a before.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postforget_lmeval import metrics
from postforget_lmeval.analyses import _bootstrap as bootstrap
from postforget_lmeval.errors import PairingError

RATES = ("F_true", "BT_true")
N_PERM = 10_000
"""Random sign flips of the paired test (the p-value's Monte Carlo error is below 0.005 at p = 0.05)."""
KEYS = ["category", "subtask", "doc_id", "seed_before", "replicate"]
"""An item under one before-seed: what both pairs hold once."""


def _joined(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """The items paired in both pairs: KEYS, before, after_a, after_b, k, cluster; a PairingError when their before
    answers differ (the pairs do not share a before run)."""

    def side(samples: pd.DataFrame) -> pd.DataFrame:
        cols = [*KEYS, "before", "after", "k", *(["cluster"] if "cluster" in samples else [])]
        frame = samples.assign(seed_before=samples.get("seed_before", samples["seed"]))
        if "replicate" not in frame:
            frame = frame.assign(replicate=0)
        return frame[cols].astype({"category": str, "subtask": str, "seed_before": str})

    left, right = side(a), side(b)
    both = left.merge(right.drop(columns=["k", "cluster"], errors="ignore"), on=KEYS, suffixes=("", "_b"))
    both = both.rename(columns={"after": "after_a"})
    differs = both["before"] != both["before_b"]
    if differs.any():
        row = both[differs].iloc[0]
        raise PairingError(
            f"the two pairs do not share a before run: item {row['doc_id']} of {row['subtask']} (seed "
            f"{row['seed_before']}) is {'right' if row['before'] else 'wrong'} before in the first and not in the "
            "second; compare only pairs made from the same before directory"
        )
    return both.drop(columns="before_b")


def _unit(items: pd.DataFrame) -> pd.Series:
    """What the tests and the draws keep together: the cluster where one is named, else the item."""
    own = items["subtask"] + "\0" + items["doc_id"].astype(str)
    if "cluster" not in items:
        return own
    return (items["subtask"] + "\0" + items["cluster"].astype(str)).where(items["cluster"].notna(), own)


def flip_test(d: np.ndarray, units: np.ndarray, rng: np.random.Generator, n_perm: int = N_PERM) -> float:
    """Two-sided p-value of the sum of ``d`` under random signs of each unit's sum (exact in distribution,
    Monte Carlo in ``n_perm`` draws; ``(1 + hits) / (1 + n_perm)``). 1.0 when every unit's sum is 0."""
    _, of = np.unique(units, return_inverse=True)
    sums = np.bincount(of.ravel(), weights=np.asarray(d, dtype=float))
    sums = sums[sums != 0]
    if not len(sums):
        return 1.0
    observed = abs(sums.sum())
    signs = rng.choice(np.array([-1.0, 1.0]), size=(n_perm, len(sums)))
    hits = np.count_nonzero(np.abs(signs @ sums) >= observed - 1e-9)
    return float((1 + hits) / (1 + n_perm))


def _replicates(items: pd.DataFrame, n_boot: int, rng: np.random.Generator) -> pd.DataFrame:
    """Long table category, subtask, seed, replicate (-1: observed), ``<rate>_a``, ``<rate>_b``: both pairs'
    figures under one draw of items per replicate."""
    items = items.assign(
        code_a=2 * items["before"].astype(int) + items["after_a"].astype(int),
        code_b=2 * items["before"].astype(int) + items["after_b"].astype(int),
    ).drop_duplicates(["category", "subtask", "doc_id", "seed_before"])
    index_keys = ["category", "subtask", "doc_id"]
    wide_a = items.pivot(index=index_keys, columns="seed_before", values="code_a")
    wide_b = items.pivot(index=index_keys, columns="seed_before", values="code_b").reindex(wide_a.index)
    ks = items.groupby(index_keys)["k"].first().reindex(wide_a.index).to_numpy(dtype=float)
    clusters = bootstrap.item_clusters(items, wide_a.index) if "cluster" in items else None
    seeds = wide_a.columns.to_numpy()
    all_a, all_b = wide_a.to_numpy(dtype=float), wide_b.to_numpy(dtype=float)
    frames = []
    for (category, subtask), rows in bootstrap.sub_benchmarks(wide_a.index):
        present = ~np.isnan(all_a[rows]).all(axis=0)
        code_a, code_b, k = all_a[rows][:, present], all_b[rows][:, present], bootstrap.usable_k(ks[rows])
        part = None if clusters is None else clusters[rows]
        cells, weights = bootstrap.cell_weights(rng, np.column_stack([code_a, code_b, k]), part, n_boot)
        width = code_a.shape[1]
        rates_a = bootstrap.rates(weights, cells[:, :width], cells[:, -1])
        rates_b = bootstrap.rates(weights, cells[:, width : 2 * width], cells[:, -1])
        for s, seed in enumerate(seeds[present]):
            frame = {"category": category, "subtask": subtask, "seed": seed, "replicate": np.arange(-1, n_boot)}
            for rate in RATES:
                frame[f"{rate}_a"], frame[f"{rate}_b"] = rates_a[rate][:, s], rates_b[rate][:, s]
            frames.append(pd.DataFrame(frame))
    return pd.concat(frames, ignore_index=True)


def compare(
    a: pd.DataFrame,
    b: pd.DataFrame,
    n_boot: int = bootstrap.N_BOOT,
    seed: int = 0,
    level: float = bootstrap.LEVEL,
    n_perm: int = N_PERM,
) -> pd.DataFrame:
    """Per category and OVERALL (macro, as categories.csv): ``n_items`` (items x before-seeds paired in both),
    ``<rate>_a``, ``<rate>_b``, ``<rate>_diff`` (A - B) with ``_lo``/``_hi``, and for forgetting and gains the
    discordant counts (``forgot_a_only``: right before, lost by A, kept by B; ``forgot_b_only``; ``gained_a_only``,
    ``gained_b_only``) with the paired test's ``p_forgot`` and ``p_gained``. ``a``, ``b``: two pairs'
    ``samples`` tables."""
    items = _joined(a, b)
    if items.empty:
        raise PairingError("the two pairs have no item in common: nothing to compare")
    rng = np.random.default_rng(seed)
    reps = _replicates(items, n_boot, rng)
    columns = [f"{rate}_{s}" for rate in RATES for s in ("a", "b")]
    for rate in RATES:
        reps[f"{rate}_diff"] = reps[f"{rate}_a"] - reps[f"{rate}_b"]
    diffs = [f"{rate}_diff" for rate in RATES]
    observed = metrics.macro_means(reps[reps["replicate"] == -1], [*columns, *diffs])
    drawn = metrics.macro_means(reps[reps["replicate"] >= 0], diffs, by=["replicate"]).groupby(level="category")
    tail = (1.0 - level) / 2.0
    table = observed.join(drawn.quantile(tail).add_suffix("_lo")).join(drawn.quantile(1.0 - tail).add_suffix("_hi"))

    before, after_a, after_b = (items[c].astype(int).to_numpy() for c in ("before", "after_a", "after_b"))
    flags = {
        "forgot_a_only": (before == 1) & (after_a == 0) & (after_b == 1),
        "forgot_b_only": (before == 1) & (after_a == 1) & (after_b == 0),
        "gained_a_only": (before == 0) & (after_a == 1) & (after_b == 0),
        "gained_b_only": (before == 0) & (after_a == 0) & (after_b == 1),
    }
    units = _unit(items).to_numpy()
    rows = []
    for category in table.index:
        mask = np.ones(len(items), bool) if category == metrics.OVERALL else (items["category"] == category).to_numpy()
        row = {"category": category, "n_items": int(mask.sum())}
        row.update({name: int(flag[mask].sum()) for name, flag in flags.items()})
        for kind in ("forgot", "gained"):
            d = flags[f"{kind}_a_only"].astype(float) - flags[f"{kind}_b_only"]
            row[f"p_{kind}"] = flip_test(d[mask], units[mask], rng, n_perm)
        rows.append(row)
    counts = pd.DataFrame(rows).set_index("category")
    order = [c for r in RATES for c in (f"{r}_a", f"{r}_b", f"{r}_diff", f"{r}_diff_lo", f"{r}_diff_hi")]
    return counts[["n_items"]].join(table[order]).join(counts.drop(columns="n_items")).reset_index()
