"""One table per side, the seed plan, and the item-by-item join of the two sides.

The join key is (sub-benchmark, seed label, replicate, doc_id), checked with doc_hash, so the few-shot
``_base`` variant run on a base model pairs with the zero-shot variant run on its instruct model. Anything
that would make a figure wrong (a changed dataset, an ambiguous run) raises :class:`PairingError`; items
on one side only are kept in the join (pandas' ``_merge`` indicator) so they are counted and warned about.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pandas as pd

from postforget_lmeval.errors import PairingError
from postforget_lmeval.pairing.run_plan import SIDES, Collected, listing
from postforget_lmeval.sources import RunRead, Source, item_id, item_table

JOIN_KEY = ["subtask", "seed_label", "replicate", "doc_id"]
_KEEP = (
    "doc_hash", "correct", "k", "answer", "gold", "status", "locator", "task", "file", "category",
    "has_repeats", "response_chars", "option_ll", "source", "cluster",
)  # fmt: skip
"""The per-side columns the join carries, each as ``<column>_before`` and ``<column>_after``."""


def side_table(
    side: str, reads: list[RunRead], source: Source, k: float | None, got: Collected
) -> tuple[pd.DataFrame, dict[str, int]]:
    """All items of one side in one table, deduplicated; raises on ambiguous runs and on a dataset that changed.

    ``subtask`` is categorical: its categories are the side's sub-benchmarks, which pairing compares between sides.
    """
    parts = [read.rows for read in reads if len(read.rows)]
    if not parts:
        mine = [w for w in got.warnings if w.startswith(side)]
        raise PairingError(f"no usable samples on the {side} side: " + listing(mine, 5, "; "))
    df = item_table(parts)
    sizes = [len(p) for p in parts]
    run = np.repeat(np.arange(len(parts)), sizes)  # each row's run: a run of several replicates has repeats
    df["has_repeats"] = (df["replicate"].groupby(run).transform("max") > 0).to_numpy()
    if k is not None:
        df.loc[np.repeat([not p.run.self_scored for p in parts], sizes), "k"] = float(k)
    df["source"] = pd.Categorical([source.name] * len(df), categories=pd.Index([source.name], dtype="str"))

    tasks = df.groupby(["subtask", "seed_value"], observed=True, sort=False)["task"].nunique()
    if (tasks > 1).any():
        subtask, seed = tasks[tasks > 1].index[0]
        names = sorted(df.loc[(df["subtask"] == subtask) & (df["seed_value"] == seed), "task"].unique())
        raise PairingError(
            f"{side}: sub-benchmark {subtask} seed {seed} comes from several tasks ({', '.join(names)}); "
            "keep one with --exclude (e.g. --exclude '*_base') or move the other run out of the directory"
        )
    dup = df.duplicated(["subtask", "seed_value", "replicate", "doc_id"])
    duplicates = {str(s): int(n) for s, n in df.loc[dup, "subtask"].value_counts().items()}
    if duplicates:
        df = df.loc[~dup].reset_index(drop=True)
    for subtask, n in duplicates.items():
        got.warnings.append(f"{side}: {subtask}: {n} duplicate item line(s) in one run; the first is used")
    hashes = df.groupby(["subtask", "doc_id"])["doc_hash"].nunique()
    if (hashes > 1).any():
        changed = hashes[hashes > 1]
        subtask, doc_id = changed.index[0]
        runs = df.loc[(df["subtask"] == subtask) & (df["doc_id"] == doc_id), ["task", "seed_value"]]
        raise PairingError(
            f"{side}: doc_hash of {subtask} doc_id {doc_id} differs between runs "
            f"({', '.join(f'{t} seed {s}' for t, s in runs.drop_duplicates().itertuples(index=False))}): "
            f"the dataset changed between them ({len(changed)} item(s) in all); re-run them on the same data"
        )
    df["subtask"] = df["subtask"].astype("category")
    return df, duplicates


def _seeds(df: pd.DataFrame) -> dict[str, list[str]]:
    """Per sub-benchmark its seeds: by number, then the unnumbered ('none'), ties in order of appearance."""
    distinct = df[["subtask", "seed_value", "seed_num"]].drop_duplicates(["subtask", "seed_value"])
    distinct = distinct.assign(
        unnumbered=distinct["seed_num"].isna(), number=distinct["seed_num"].fillna(0),
        appearance=distinct["seed_value"].cat.codes,
    ).sort_values(["unnumbered", "number", "appearance"], kind="stable")  # fmt: skip
    out: dict[str, list[str]] = {}
    for subtask, seed in zip(distinct["subtask"].tolist(), distinct["seed_value"].tolist()):
        out.setdefault(subtask, []).append(seed)
    return out


def seed_plan(
    before: pd.DataFrame, after: pd.DataFrame, mode: str, got: Collected
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Which before seed pairs with which after seed, per sub-benchmark, and how that was decided."""
    sb, sa = _seeds(before), _seeds(after)
    rows, report = [], {}
    for subtask in sorted(set(sb) & set(sa)):
        b, a = sb[subtask], sa[subtask]
        common = [s for s in b if s in a]
        if mode == "order" or (mode == "auto" and not common and len(b) == len(a)):
            method, pairs = "order", list(zip(b, a))
        elif mode == "exact" or common:
            method, pairs = "exact", [(s, s) for s in common]
        else:
            raise PairingError(
                f"seeds of {subtask} do not line up: before {', '.join(b)}, after {', '.join(a)}; "
                "pass --seed-match order to pair them in sorted order (unmatched seeds are reported and left out)"
            )
        report[subtask] = {
            "method": method,
            "pairs": [[x, y] for x, y in pairs],
            "unmatched_before": [s for s in b if s not in {x for x, _ in pairs}],
            "unmatched_after": [s for s in a if s not in {y for _, y in pairs}],
        }
        rows.extend(
            {"subtask": subtask, "seed_before": x, "seed_after": y, "seed_label": x if x == y else f"{x}~{y}"}
            for x, y in pairs
        )
    _warn_seeds(report, got)
    return pd.DataFrame(rows, columns=["subtask", "seed_before", "seed_after", "seed_label"]), report


def _warn_seeds(report: dict[str, Any], got: Collected) -> None:
    """One line per distinct seed situation, not one per sub-benchmark."""
    groups: dict[str, list[str]] = defaultdict(list)
    for subtask, r in report.items():
        if r["method"] == "order" and any(x != y for x, y in r["pairs"]):
            pairs = ", ".join(f"before {x} ~ after {y}" for x, y in r["pairs"])
            before = {x for x, _ in r["pairs"]} | set(r["unmatched_before"])
            shared = sorted(before & ({y for _, y in r["pairs"]} | set(r["unmatched_after"])))
            why = f"seeds {', '.join(shared)} are on both sides, but" if shared else "no seed shared;"
            groups[f"seeds matched in sorted order ({why} --seed-match order pairs them in turn): {pairs}"].append(
                subtask
            )
        if r["unmatched_before"] or r["unmatched_after"]:
            groups[
                f"seeds without a partner, left out: before {r['unmatched_before'] or '-'}, "
                f"after {r['unmatched_after'] or '-'}"
            ].append(subtask)
        if not r["pairs"]:
            groups["no seed in common: not paired"].append(subtask)
    for message, subtasks in groups.items():
        got.warnings.append(f"{message} ({len(subtasks)} sub-benchmark(s): {listing(subtasks, 5)})")


UNMATCHED_COLUMNS = ["side", "subtask", "seed", "replicate", "doc_id", "correct", "k", "cluster"]


def unmatched_runs(tables: dict[str, pd.DataFrame], report: dict[str, Any]) -> pd.DataFrame:
    """The items of each side's seeds left without a partner by :func:`seed_plan` (``report``'s
    ``unmatched_before``/``unmatched_after``), as :data:`UNMATCHED_COLUMNS`: out of the paired figures, but runs
    of that side all the same, which its noise floor reads."""
    parts = [pd.DataFrame(columns=UNMATCHED_COLUMNS)]
    for side, frame in tables.items():
        wanted = [(subtask, seed) for subtask, r in report.items() for seed in r[f"unmatched_{side}"]]
        if not wanted:
            continue
        runs = pd.MultiIndex.from_arrays([frame["subtask"].astype(str), frame["seed_value"].astype(str)])
        rows = frame.loc[runs.isin(wanted)]
        parts.append(
            rows.assign(side=side, subtask=rows["subtask"].astype(str), seed=rows["seed_value"].astype(str))[
                UNMATCHED_COLUMNS
            ]
        )
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


def join(before: pd.DataFrame, after: pd.DataFrame, plan: pd.DataFrame) -> pd.DataFrame:
    """Outer join of the matched seeds on :data:`JOIN_KEY`, sorted by it; raises on a doc_hash mismatch."""
    keep = list(_KEEP)
    if "correct_logged" in before or "correct_logged" in after:
        keep.append("correct_logged")
    sides = {}
    for side, frame in (("before", before), ("after", after)):
        if "correct_logged" in keep and "correct_logged" not in frame:
            frame = frame.assign(correct_logged=frame["correct"])
        items = frame[["subtask", "seed_value", "replicate", "doc_id", *keep]].astype(
            {"subtask": object, "seed_value": object}
        )
        seeds = plan[["subtask", f"seed_{side}", "seed_label"]].rename(columns={f"seed_{side}": "seed_value"})
        items = items.merge(seeds, on=["subtask", "seed_value"]).drop(columns="seed_value")
        sides[side] = items.rename(columns={c: f"{c}_{side}" for c in keep})
    joined = sides["before"].merge(
        sides["after"], on=JOIN_KEY, how="outer", sort=True, indicator=True, validate="one_to_one"
    )
    joined = joined.merge(plan[["subtask", "seed_label", "seed_before", "seed_after"]], on=["subtask", "seed_label"])
    both = joined["_merge"] == "both"
    mismatch = both & (joined["doc_hash_before"] != joined["doc_hash_after"])
    if mismatch.any():
        bad = joined[mismatch]
        first = bad.iloc[0]
        per = bad.groupby("subtask")["doc_id"].nunique().to_dict()
        raise PairingError(
            f"doc_hash differs for {first['subtask']} doc_id {first['doc_id']} (before: task {first['task_before']}, "
            f"after: task {first['task_after']}): the two runs did not see the same item. Mismatched items per "
            f"sub-benchmark: {per}. Re-run both sides on the same dataset version, or leave the task out with --exclude"
        )
    # an epoch (inspect_ai) or repeat (lm-eval) is a replicate under its run's seed, never a seed of its own
    joined["seed"] = joined["seed_label"]
    joined["k"] = joined["k_before"].fillna(joined["k_after"])
    return joined


def categories(joined: pd.DataFrame, got: Collected) -> pd.Series:
    """Per item its category, one per sub-benchmark: a named one wins over the task-name fallback of ordinary tasks."""
    named: dict[str, list[str]] = {}  # per sub-benchmark its named categories, before's first, in order of appearance
    for side in SIDES:
        pairs = joined[["subtask", f"category_{side}"]].drop_duplicates()
        for subtask, name in zip(pairs["subtask"].tolist(), pairs[f"category_{side}"].tolist()):
            if not pd.isna(name) and name != subtask and name not in named.setdefault(subtask, []):
                named[subtask].append(name)
    for subtask in sorted(named):
        if len(cats := named[subtask]) > 1:
            got.warnings.append(
                f"{subtask}: category differs between the sides ({', '.join(map(str, cats))}); using {cats[0]}"
            )
    chosen = {subtask: cats[0] for subtask, cats in named.items()}  # each list holds the name that made it
    return joined["subtask"].map(lambda s: chosen.get(s, s)).astype(object)


def _unpaired_fix(joined: pd.DataFrame, group: pd.DataFrame, ids: dict[str, list[int]]) -> str:
    """What to do about one sub-benchmark and seed's one-sided items, by their cause."""
    first = group.iloc[0]
    same = (joined["subtask"] == first["subtask"]) & (joined["seed_label"] == first["seed_label"])
    for side, flag in (("before", "left_only"), ("after", "right_only")):
        here = joined.loc[same & (joined["replicate"] == first["replicate"]), "_merge"]
        if (here == flag).all() and (joined.loc[same, "_merge"] != flag).any():
            return (
                f"replicate {first['replicate']} exists on the {side} side only: the sides ran different numbers "
                "of epochs (inspect_ai --epochs) or repeats (lm-eval); run both with the same number"
            )
    before, after = set(ids.get("before", ())), set(ids.get("after", ()))
    if any(item_id(str(i)) in after for i in before) or any(item_id(str(i)) in before for i in after):
        return (
            'the item ids are numbers on one side and strings on the other (an inspect_ai sample id 1 is not "1"): '
            "give the samples the same ids on both sides"
        )
    return "run both sides on the same items (same --limit)"


def warn_unpaired(joined: pd.DataFrame, got: Collected, drawn: frozenset[tuple[str, int]] | None = None) -> int:
    """One warning per sub-benchmark and seed with items on one side only (fatal with --strict), with the fix
    for its cause: different epochs or repeats, ids of different types, or different items. ``drawn``: the
    (sub-benchmark, doc_id) of a subset the after-run was given (``PairOptions.drawn``); a before item outside
    it is unpaired by design and not warned about. Returns how many such rows (item x seed x replicate)."""
    lonely = joined[joined["_merge"] != "both"]
    undrawn = 0
    if drawn is not None:
        keys = pd.MultiIndex.from_arrays([lonely["subtask"].astype(str), lonely["doc_id"]])
        outside = (lonely["_merge"] == "left_only").to_numpy() & ~keys.isin(list(drawn))
        undrawn = int(outside.sum())
        lonely = lonely[~outside]
    if lonely.empty:
        return undrawn
    keys = ["subtask", "seed", "replicate"]
    both = joined[joined["_merge"] == "both"].groupby(keys).size()
    repeats = joined["has_repeats_before"].fillna(False).astype(bool) | joined["has_repeats_after"].fillna(
        False
    ).astype(bool)
    for (subtask, seed, replicate), group in lonely.groupby(keys, sort=True):
        parts, ids = [], {}
        for side, flag in (("before", "left_only"), ("after", "right_only")):
            ids[side] = sorted(group.loc[group["_merge"] == flag, "doc_id"].unique().tolist())
            if ids[side]:
                parts.append(f"{len(ids[side])} item(s) only on the {side} side (doc_id {listing(ids[side], 8)})")
        paired = int(both.get((subtask, seed, replicate), 0))
        run = f"{subtask} seed {seed}" + (f" replicate {replicate}" if repeats[group.index].any() else "")
        got.warnings.append(
            f"{run}: {' and '.join(parts)} cannot be paired and are left out of the figures "
            f"({paired} paired): {_unpaired_fix(joined, group, ids)}"
        )
    return undrawn
