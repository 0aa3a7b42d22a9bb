"""The output tables of a pairing: per sub-benchmark and seed, the all-seeds variant, one row per item.

Inputs are the joined item table of :mod:`postforget_lmeval.pairing.join` (one row per item key, with
``_before``/``_after`` columns and pandas' ``_merge`` indicator) and its ``both`` rows (``paired``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postforget_lmeval import metrics
from postforget_lmeval.pairing.results import SUBTASK_COLUMNS, TRANSITIONS
from postforget_lmeval.pairing.run_plan import SIDES

FIRSTS = ["category", "seed_before", "seed_after", "task_before", "task_after"]
"""Columns of subtasks.csv that every item of a (sub-benchmark, seed) row shares: its first item's."""
SUMMED = ("n", "n_11", "n_10", "n_01", "n_00", "unanswered_before", "unanswered_after")
"""Counts of subtasks.csv that add up over a seed's replicates (items x replicates); its rates are means."""


def subtask_rows(paired: pd.DataFrame, joined: pd.DataFrame) -> pd.DataFrame:
    """The paper's metrics (Harmon et al., 2026, §2) per (sub-benchmark, seed label), with the counts of
    unanswered and unpaired items.

    A run that generated several times per item (inspect_ai epochs, lm-eval repeats) has replicates under one
    seed: each replicate is one run of the paper's protocol (the before side's r-th generation paired with the
    after side's), the seed's rates are the mean of its replicates' and its counts their sum (``replicates``
    says how many). With one generation per item, as in the paper, that is the paper's figure."""
    per_replicate = _replicate_rows(paired, joined)
    groups = per_replicate.groupby(["subtask", "seed"], sort=True)
    rates = [c for c in per_replicate.columns if c not in (*SUMMED, *FIRSTS, "subtask", "seed", "replicate")]
    out = groups[rates].mean()
    for column in SUMMED:  # a count NaN in every replicate (a side that logs no status) stays NaN
        out[column] = groups[column].sum(min_count=1)
    out["replicates"] = groups["replicate"].nunique()
    # per seed, so that the items of a replicate run on one side only (different epochs) are counted too
    unpaired = joined[joined["_merge"] != "both"].groupby(["subtask", "seed", "_merge"], observed=True).size()
    for side, flag in (("before", "left_only"), ("after", "right_only")):
        found = flag in unpaired.index.get_level_values("_merge")
        n = unpaired.xs(flag, level="_merge").reindex(out.index).fillna(0).astype(int) if found else 0
        out[f"n_unpaired_{side}"] = n
    out = out.join(groups[FIRSTS].first()).reset_index()
    counts = ["unanswered_before", "unanswered_after", "n_unpaired_before", "n_unpaired_after"]
    return out[[*SUBTASK_COLUMNS, *counts, "seed_before", "seed_after", "replicates", "task_before", "task_after"]]


def _replicate_rows(paired: pd.DataFrame, joined: pd.DataFrame) -> pd.DataFrame:
    """:func:`subtask_rows` per (sub-benchmark, seed label, replicate)."""
    keys = ["subtask", "seed", "replicate"]
    before, after = (metrics.binary(paired[side].to_numpy(), side, 1) for side in SIDES)
    flags = {"n_11": before & after, "n_10": before & ~after, "n_01": ~before & after, "n_00": ~before & ~after}
    for side in SIDES:
        status = paired[f"status_{side}"]
        flags[f"logged_{side}"] = status.notna().to_numpy()
        flags[f"unanswered_{side}"] = (status.notna() & (status != "answered")).to_numpy()
    counts = pd.DataFrame(flags).groupby([paired[key].to_numpy() for key in keys], sort=True).sum()
    groups = paired.groupby(keys, sort=True)
    k_eff = groups["k"].agg(lambda k: metrics.k_eff(None if k.isna().all() else k.to_numpy(dtype=float)))
    out = pd.DataFrame(
        [
            metrics.counts_metrics(int(c.n_11), int(c.n_10), int(c.n_01), int(c.n_00), keff)
            for c, keff in zip(counts.itertuples(), k_eff.tolist())
        ],
        index=k_eff.index,
    )
    for side in SIDES:
        logged = counts[f"logged_{side}"].to_numpy() > 0
        out[f"unanswered_{side}"] = counts[f"unanswered_{side}"].to_numpy().astype(np.int64)
        out[f"unanswered_{side}"] = out[f"unanswered_{side}"].where(logged)
    out = out.join(groups[FIRSTS].first()).reset_index()
    return out[[*SUBTASK_COLUMNS, "replicate", *(c for c in out.columns if c not in (*SUBTASK_COLUMNS, "replicate"))]]


def agreement(paired: pd.DataFrame) -> pd.DataFrame:
    """The paper's stricter variant over all matched seeds, on the items paired under every one of them: replicate
    r of one seed is compared with replicate r of the others, so an item counts once per replicate (``n``); the
    replicates of one seed are not seeds, and a sub-benchmark with one seed has no row."""
    wide = paired.pivot(index=["subtask", "doc_id", "replicate"], columns="seed", values=["before", "after"])  # sorted
    k = paired.groupby(["subtask", "doc_id"])["k"].first()  # first known
    k = k.reindex(wide.index.droplevel("replicate")).to_numpy(dtype=float)
    seeds = wide["before"].columns.to_numpy()
    before, after = wide["before"].to_numpy(dtype=float), wide["after"].to_numpy(dtype=float)
    names, starts = np.unique(wide.index.get_level_values("subtask").to_numpy(), return_index=True)
    rows = []
    for subtask, start, end in zip(names, starts, [*starts[1:], len(wide)]):
        b, a, ks = before[start:end], after[start:end], k[start:end]
        present = ~np.isnan(b).all(axis=0)  # this sub-benchmark's seeds
        if present.sum() < 2:
            continue
        b, a = b[:, present], a[:, present]
        complete = ~(np.isnan(b).any(axis=1) | np.isnan(a).any(axis=1))
        row = {"subtask": subtask, "seeds": ",".join(map(str, seeds[present]))}
        ks = ks[complete]
        row.update(metrics.seed_agreement_metrics(b[complete], a[complete], k=None if np.isnan(ks).all() else ks))
        rows.append(row)
    return pd.DataFrame(rows)


def samples_frame(paired: pd.DataFrame) -> pd.DataFrame:
    """samples.parquet: one row per paired item; ``file_*`` + ``locator_*`` let `show` read an item back lazily.

    Per side: answer, status, task, file, locator, seed, source (input format), response_chars;
    correct_logged when rescored; option_ll for log-likelihood multiple-choice runs.
    """
    out = {c: paired[c] for c in ("subtask", "category", "doc_id", "seed", "replicate", "before", "after", "k")}
    codes = 2 * paired["before"].to_numpy() + paired["after"].to_numpy()  # 3: 1->1, 2: 1->0, 1: 0->1, 0: 0->0
    out["transition"] = pd.Series(
        pd.Categorical.from_codes(3 - codes, categories=list(TRANSITIONS.values())), index=paired.index
    )
    out["gold"] = paired["gold_before"].fillna(paired["gold_after"])
    cluster = paired["cluster_before"].fillna(paired["cluster_after"])
    if cluster.notna().any():  # items that share a text: the bootstrap draws them together
        out["cluster"] = cluster
    per_side = ["answer", "status", "task", "file", "locator", "seed", "source", "response_chars"]
    if "correct_logged_before" in paired:  # the join gives both sides the column when either was rescored
        per_side.append("correct_logged")
    if paired["option_ll_before"].notna().any() or paired["option_ll_after"].notna().any():
        per_side.append("option_ll")
    for col in per_side:
        for side in SIDES:
            out[f"{col}_{side}"] = paired[f"{col}_{side}"]
    per_side = [f"{col}_{side}" for col in ("status", "task", "file", "seed", "source") for side in SIDES]
    for col in ("subtask", "category", "seed", *per_side):
        out[col] = out[col].astype("category")
    return pd.DataFrame(out).reset_index(drop=True)
