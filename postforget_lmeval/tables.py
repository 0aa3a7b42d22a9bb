"""The output tables of a pairing: per sub-benchmark and seed, the all-seeds variant, one row per item.

Inputs are the joined item table of :mod:`postforget_lmeval.pairing` (one row per item key, with
``_before``/``_after`` columns and pandas' ``_merge`` indicator) and its ``both`` rows (``paired``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postforget_lmeval import metrics
from postforget_lmeval.results import SUBTASK_COLUMNS, TRANSITIONS

SIDES = ("before", "after")


def subtask_rows(paired: pd.DataFrame, joined: pd.DataFrame) -> pd.DataFrame:
    """The paper's metrics (Harmon et al., 2026, §2) per (sub-benchmark, seed label), plus unanswered and unpaired counts."""
    groups = paired.groupby(["subtask", "seed"], sort=True)
    before, after, ks = (paired[c].to_numpy() for c in ("before", "after", "k"))
    rows = []
    for (subtask, seed), idx in groups.indices.items():
        k = ks[idx]
        rows.append(
            {
                "subtask": subtask,
                "seed": seed,
                **metrics.transition_metrics(before[idx], after[idx], k=None if np.isnan(k).all() else k),
            }
        )
    out = pd.DataFrame(rows).set_index(["subtask", "seed"]).sort_index()
    firsts = groups[["category", "seed_before", "seed_after", "replicate", "task_before", "task_after"]].first()
    for side in SIDES:
        status = paired[f"status_{side}"]
        unanswered = (status.notna() & (status != "answered")).groupby([paired["subtask"], paired["seed"]]).sum()
        logged = status.notna().groupby([paired["subtask"], paired["seed"]]).any()
        out[f"unanswered_{side}"] = unanswered.where(logged)
    unpaired = joined[joined["_merge"] != "both"].groupby(["subtask", "seed", "_merge"], observed=True).size()
    unpaired = unpaired.unstack("_merge").reindex(columns=["left_only", "right_only"]) if len(unpaired) else None
    for side, col in (("before", "left_only"), ("after", "right_only")):
        values = unpaired[col].reindex(out.index) if unpaired is not None else None
        out[f"n_unpaired_{side}"] = 0 if values is None else values.fillna(0).astype(int)
    out = out.join(firsts).reset_index()
    return out[[*SUBTASK_COLUMNS, *(c for c in out.columns if c not in SUBTASK_COLUMNS)]]


def agreement(paired: pd.DataFrame) -> pd.DataFrame:
    """The paper's stricter variant over all matched seeds, on the items paired under every one of them."""
    if paired.groupby("subtask")["seed"].nunique().max() < 2:
        return pd.DataFrame()
    wide = paired.pivot(index=["subtask", "doc_id"], columns="seed", values=["before", "after"])
    ks = paired.groupby(["subtask", "doc_id"])["k"].first().reindex(wide.index).to_numpy(dtype=float)
    seeds = np.asarray(wide["before"].columns)
    b_all, a_all = wide["before"].to_numpy(dtype=float), wide["after"].to_numpy(dtype=float)
    subtask_codes = wide.index.get_level_values("subtask")
    starts = np.flatnonzero(np.r_[True, subtask_codes[1:] != subtask_codes[:-1]])
    rows = []
    for start, end in zip(starts, np.r_[starts[1:], len(subtask_codes)]):
        b, a, k = b_all[start:end], a_all[start:end], ks[start:end]
        cols = ~np.isnan(b).all(axis=0)
        if cols.sum() < 2:
            continue
        b, a = b[:, cols], a[:, cols]
        complete = ~(np.isnan(b).any(axis=1) | np.isnan(a).any(axis=1))
        k = k[complete]
        row = {"subtask": subtask_codes[start], "seeds": ",".join(map(str, seeds[cols]))}
        row.update(metrics.seed_agreement_metrics(b[complete], a[complete], k=None if np.isnan(k).all() else k))
        rows.append(row)
    return pd.DataFrame(rows)


def samples_frame(paired: pd.DataFrame) -> pd.DataFrame:
    """samples.parquet: one row per paired item; ``file_*`` + ``locator_*`` let `show` read an item back lazily.

    Per side: answer, status, task, file, locator, seed, source (input format), response_chars;
    correct_logged when rescored; option_ll for log-likelihood multiple-choice runs.
    """
    out = paired[["subtask", "category", "doc_id", "seed", "replicate", "before", "after", "k"]].copy()
    codes = 2 * out["before"].to_numpy() + out["after"].to_numpy()  # 3: 1->1, 2: 1->0, 1: 0->1, 0: 0->0
    out["transition"] = pd.Categorical.from_codes(3 - codes, categories=list(TRANSITIONS.values()))
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
    for col in ("subtask", "category", "seed"):
        out[col] = out[col].astype("category")
    for col in ("status", "task", "file", "seed", "source"):
        for side in SIDES:
            out[f"{col}_{side}"] = out[f"{col}_{side}"].astype("category")
    return out.reset_index(drop=True)
