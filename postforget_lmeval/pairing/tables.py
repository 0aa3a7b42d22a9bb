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

FIRSTS = ["category", "seed_before", "seed_after", "replicate", "task_before", "task_after"]
"""Columns of subtasks.csv that every item of a (sub-benchmark, seed) row shares: its first item's."""


def subtask_rows(paired: pd.DataFrame, joined: pd.DataFrame) -> pd.DataFrame:
    """The paper's metrics (Harmon et al., 2026, §2) per (sub-benchmark, seed label), with the counts of
    unanswered and unpaired items."""
    rows, index, firsts = [], [], []
    for key, group in paired.groupby(["subtask", "seed"], sort=True):
        k = group["k"].to_numpy(dtype=float)
        row = metrics.transition_metrics(group["before"], group["after"], None if np.isnan(k).all() else k)
        for side in SIDES:
            status = group[f"status_{side}"]
            logged = status.notna()
            row[f"unanswered_{side}"] = int((logged & (status != "answered")).sum()) if logged.any() else np.nan
        rows.append(row)
        firsts.append(group.iloc[0][FIRSTS])
        index.append(key)
    out = pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(index, names=["subtask", "seed"]))
    unpaired = joined[joined["_merge"] != "both"].groupby(["subtask", "seed", "_merge"], observed=True).size()
    for side, flag in (("before", "left_only"), ("after", "right_only")):
        counts = unpaired.xs(flag, level="_merge") if flag in unpaired.index.get_level_values("_merge") else None
        out[f"n_unpaired_{side}"] = 0 if counts is None else counts.reindex(out.index).fillna(0).astype(int)
    out = out.join(pd.DataFrame(firsts, index=out.index)).reset_index()
    return out[[*SUBTASK_COLUMNS, *(c for c in out.columns if c not in SUBTASK_COLUMNS)]]


def agreement(paired: pd.DataFrame) -> pd.DataFrame:
    """The paper's stricter variant over all matched seeds, on the items paired under every one of them."""
    rows = []
    for subtask, group in paired.groupby("subtask", sort=True):
        before = group.pivot(index="doc_id", columns="seed", values="before")  # items x seeds, both sorted
        if before.shape[1] < 2:
            continue
        after = group.pivot(index="doc_id", columns="seed", values="after")
        complete = before.notna().all(axis=1) & after.notna().all(axis=1)
        k = group.groupby("doc_id")["k"].first().reindex(before.index)[complete].to_numpy(dtype=float)
        row = {"subtask": subtask, "seeds": ",".join(map(str, before.columns))}
        row.update(metrics.seed_agreement_metrics(
            before[complete].to_numpy(), after[complete].to_numpy(), k=None if np.isnan(k).all() else k
        ))  # fmt: skip
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
    per_side = ["answer", "status", "task", "file", "locator", "seed", "source", "response_chars"]
    if "correct_logged_before" in paired or "correct_logged_after" in paired:
        per_side.append("correct_logged")
    if paired["option_ll_before"].notna().any() or paired["option_ll_after"].notna().any():
        per_side.append("option_ll")
    for col in per_side:
        for side in SIDES:
            name = f"{col}_{side}"
            out[name] = paired[name] if name in paired else pd.Series(pd.NA, index=paired.index, dtype="Int8")
    per_side = [f"{col}_{side}" for col in ("status", "task", "file", "seed", "source") for side in SIDES]
    for col in ("subtask", "category", "seed", *per_side):
        out[col] = out[col].astype("category")
    return pd.DataFrame(out).reset_index(drop=True)
