"""The output tables of a pairing: per sub-benchmark and seed, the all-seeds variant, one row per item.

Inputs are the joined item table of :mod:`postforget_lmeval.pairing.pair` (one row per item key, with
``_before``/``_after`` columns and pandas' ``_merge`` indicator) and its ``both`` rows (``paired``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postforget_lmeval.pairing import keys
from postforget_lmeval import metrics
from postforget_lmeval.pairing.results import SUBTASK_COLUMNS, TRANSITIONS

SIDES = ("before", "after")


def subtask_rows(paired: pd.DataFrame, joined: pd.DataFrame) -> pd.DataFrame:
    """The paper's metrics (Harmon et al., 2026, §2) per (sub-benchmark, seed label), plus unanswered and unpaired counts."""
    group, index = _groups(paired)
    order = np.argsort(group, kind="stable")  # each group's rows together, in their order
    bounds = np.r_[0, np.cumsum(np.bincount(group, minlength=len(index)))]
    before, after = (metrics.binary(paired[c].to_numpy(), c, 1) for c in ("before", "after"))
    counts = np.bincount(4 * group + 2 * before + after, minlength=4 * len(index)).reshape(-1, 4).tolist()
    ks = paired["k"].to_numpy()
    rows = []
    for (n_00, n_01, n_10, n_11), start, end in zip(counts, bounds[:-1], bounds[1:]):
        k = ks[order[start:end]]
        rows.append(metrics.counts_metrics(n_11, n_10, n_01, n_00, metrics.k_eff(None if np.isnan(k).all() else k)))
    out = pd.DataFrame(rows, index=index)  # the groups in sorted order
    firsts = paired[["category", "seed_before", "seed_after", "replicate", "task_before", "task_after"]]
    firsts = firsts.iloc[order[bounds[:-1]]].set_axis(index)  # never missing in paired rows: groupby's first()
    for side in SIDES:  # statuses counted over runs of one status in one group
        status = paired[f"status_{side}"].to_numpy()
        first = np.flatnonzero(keys.starts(group, status))
        size, status, at = np.diff(np.r_[first, len(status)]), status[first], group[first]
        logged = pd.notna(status)
        unanswered = np.bincount(at, weights=size * (logged & (status != "answered")), minlength=len(index))
        any_logged = pd.Series(np.bincount(at[logged], minlength=len(index)) > 0, index=index)
        out[f"unanswered_{side}"] = pd.Series(unanswered.astype(np.int64), index=index).where(any_logged)
    lonely, unpaired = joined["_merge"].array != "both", None
    if lonely.any():
        unpaired = joined.loc[lonely, ["subtask", "seed", "_merge"]]
        unpaired = unpaired.groupby(["subtask", "seed", "_merge"], observed=True).size().unstack("_merge")
        unpaired = unpaired.reindex(columns=["left_only", "right_only"])
    for side, col in (("before", "left_only"), ("after", "right_only")):
        values = unpaired[col].reindex(out.index) if unpaired is not None else None
        out[f"n_unpaired_{side}"] = 0 if values is None else values.fillna(0).astype(int)
    out = out.join(firsts).reset_index()
    return out[[*SUBTASK_COLUMNS, *(c for c in out.columns if c not in SUBTASK_COLUMNS)]]


def _groups(paired: pd.DataFrame) -> tuple[np.ndarray, pd.MultiIndex]:
    """Per row, its (subtask, seed) group numbered in sorted order, and the groups' keys (as ``groupby(sort=True)``),
    sorting only the rows that start a run of equal keys (see :mod:`postforget_lmeval.pairing.keys`)."""
    subtask, seed = paired["subtask"].to_numpy(), paired["seed"].to_numpy()
    first = keys.starts(subtask, seed)
    (subtasks, sub), (seeds, code) = keys.unique(subtask[first]), keys.unique(seed[first])
    _, group = keys.unique(keys.fused(sub, code))
    row = np.empty(group.max() + 1, dtype=np.int64)
    row[group] = np.arange(len(group))  # a row of each group
    index = pd.MultiIndex(levels=[subtasks, seeds], codes=[sub[row], code[row]], names=["subtask", "seed"])
    return group[np.cumsum(first) - 1], index


def agreement(paired: pd.DataFrame) -> pd.DataFrame:
    """The paper's stricter variant over all matched seeds, on the items paired under every one of them."""
    # the pivot (subtask, doc_id) x seed, sorted both ways, on integer codes
    names, sub = keys.unique(paired["subtask"].to_numpy())
    seeds, col = keys.unique(paired["seed"].to_numpy())
    first = keys.starts(sub, col)  # every (subtask, seed)
    if len(np.unique(keys.fused(sub[first], col[first]))) == len(names):  # one seed per sub-benchmark
        return pd.DataFrame()
    items, item = keys.unique(keys.fused(sub, paired["doc_id"].to_numpy()))
    wide = {}
    for side in ("before", "after"):
        wide[side] = np.full((len(items), len(seeds)), np.nan)
        wide[side][item, col] = paired[side].to_numpy()
    ks = _first_known(paired["k"].to_numpy(dtype=float), item, len(items))
    item_sub = np.zeros(len(items), dtype=np.int64)
    item_sub[item] = sub
    starts = np.flatnonzero(keys.starts(item_sub))
    rows = []
    for start, end in zip(starts, np.r_[starts[1:], len(items)]):
        b, a, k = wide["before"][start:end], wide["after"][start:end], ks[start:end]
        cols = ~np.isnan(b).all(axis=0)
        if cols.sum() < 2:
            continue
        b, a = b[:, cols], a[:, cols]
        complete = ~(np.isnan(b).any(axis=1) | np.isnan(a).any(axis=1))
        k = k[complete]
        row = {"subtask": names[item_sub[start]], "seeds": ",".join(map(str, seeds[cols]))}
        row.update(metrics.seed_agreement_metrics(b[complete], a[complete], k=None if np.isnan(k).all() else k))
        rows.append(row)
    return pd.DataFrame(rows)


def _first_known(values: np.ndarray, group: np.ndarray, n: int) -> np.ndarray:
    """Per group 0..n-1, its first value that is not NaN, else NaN (``groupby(group).first()``)."""
    known = np.flatnonzero(~np.isnan(values))
    first = np.full(n, len(values))
    np.minimum.at(first, group[known], known)
    return np.append(values, np.nan)[first]


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
        out[col] = _category(out[col])
    return pd.DataFrame(out).reset_index(drop=True)  # built once: column by column costs more


def _category(column: pd.Series) -> pd.Series:
    """``astype("category")``, text encoded from its runs of equal values (:func:`keys.categorical`, faster)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column
    values = column.to_numpy() if column.dtype == object else column.array
    return pd.Series(keys.categorical(values), index=column.index, name=column.name)
