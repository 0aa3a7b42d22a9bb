"""Pairing two sides item by item: the ``pair()`` API behind ``postforget-pair``.

The join key is (sub-benchmark, doc_id) checked with doc_hash, per matched seed and replicate, so
the few-shot ``_base`` variant run on a base model pairs with the zero-shot variant run on its
instruct model. Nothing is dropped silently: every run, line and item that does not make it into the
figures is counted in ``PairResult.summary`` with the reason (items on one side only are also a
warning), and anything that would make a figure wrong (a changed dataset, an ambiguous run, an
unknown metric) raises :class:`PairingError`.

Reading is the sources' job (:mod:`postforget_lmeval.sources`), choosing runs is
:mod:`postforget_lmeval.pairing.run_plan`, the output tables :mod:`postforget_lmeval.pairing.tables` and the
summary :mod:`postforget_lmeval.pairing.provenance`. Per-item work here is vectorised (one table per side,
one join); Python loops run per sub-benchmark and seed only.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from postforget_lmeval.pairing import keys, provenance, reading, tables
from postforget_lmeval import metrics
from postforget_lmeval.report import paper
from postforget_lmeval.pairing.results import PairingError, PairResult
from postforget_lmeval.pairing.run_plan import SIDES, Collected, listing
from postforget_lmeval.sources.base import LoadedItem, Progress, ReadRequest, RunRead, Source, item_table

_JOIN_KEEP = (
    "doc_hash", "correct", "k", "answer", "gold", "status", "locator", "task", "file", "category",
    "has_repeats", "response_chars", "option_ll", "source",
)  # fmt: skip


def _scored_by(req: ReadRequest, read: RunRead) -> str:
    """Who scored a run's figures: the rescoring policy, else the extractor its records name, else 'logged'."""
    if req.rescore:
        from postforget_lmeval.scoring.rescoring import scorer_name

        return scorer_name(req.rescore)
    return "+".join(read.info.get("extractors") or []) or "logged"


def _scorers(subtasks: pd.DataFrame, got: Collected) -> list[str]:
    """Per row of ``subtasks``, who scored its figures: one name, or each side's where they differ."""
    scorers = {side: {r["task"]: r["scored_by"] for r in got.runs[side]} for side in SIDES}
    before, after = ([scorers[side][task] for task in subtasks[f"task_{side}"].tolist()] for side in SIDES)
    return [b if b == a else f"before: {b}; after: {a}" for b, a in zip(before, after)]


def _record(side: str, source: Source, read: RunRead, got: Collected) -> None:
    """Record the run used and every problem met while reading its file."""
    req, run = read.request, read.request.run
    for p in read.problems:
        got.problem(side, p.path, p.message, kind=p.kind, count=p.count)
    for n in read.notes:
        got.note(f"{side}: {n}" if "repeats" in n else n)
    got.runs[side].append(
        {
            "task": run.task,
            "source": source.name,
            "results": str(run.results_path),
            "samples": str(run.samples_path),
            "date": run.date,
            "seed": run.seed,
            "seed_source": run.seed_source,
            "max_gen_toks": run.max_gen_toks,
            "scored_by": _scored_by(req, read),
            **read.info,
            "n_expected": run.n_expected,
            "bytes": run.samples_bytes,
        }
    )
    if not len(read.rows) and not any(p.kind == "no_metric" for p in read.problems):
        got.dropped.append({"side": side, "task": run.task, "reason": f"no usable sample in {run.samples_path}"})


def _side_table(
    side: str, reads: list[RunRead], source: Source, k: float | None, got: Collected
) -> tuple[pd.DataFrame, dict[str, int]]:
    """All items of one side in one table, deduplicated; raises on ambiguous runs and on a dataset that changed.

    ``subtask`` is categorical (categories in order of appearance): the later steps work on its codes;
    ``source`` (one value) is categorical as in samples.parquet.
    """
    frames = [read.rows for read in reads if len(read.rows)]
    if not frames:
        mine = [w for w in got.warnings if w.startswith(side)]
        raise PairingError(f"no usable samples on the {side} side: " + listing(mine, 5, "; "))
    df = item_table(frames)
    sizes = [len(r) for r in frames]
    replicates = np.maximum.reduceat(df["replicate"].to_numpy(), np.cumsum([0, *sizes[:-1]]))  # per run, its highest
    df["has_repeats"] = np.repeat(replicates > 0, sizes)
    if k is not None:
        ordinary = np.repeat([not r.run.self_scored for r in frames], sizes)
        df.loc[ordinary, "k"] = float(k)
    df["source"] = pd.Categorical.from_codes(np.zeros(len(df), dtype=np.int8), pd.Index([source.name], dtype="str"))
    sub, subtasks = keys.factorize(df["subtask"].to_numpy())
    seed, task = df["seed_value"].cat.codes.to_numpy(), df["task"].cat.codes.to_numpy()
    first = keys.starts(sub, seed, task)  # every (subtask, seed, task)
    if keys.varies_within(keys.fused(sub[first], seed[first]), task[first]):  # then the exact test, for the message
        distinct = df.loc[first, ["subtask", "seed_value", "task"]]
        tasks = distinct.groupby(["subtask", "seed_value"], observed=True)["task"].nunique()
        subtask, seed = tasks[tasks > 1].index[0]
        names = sorted(df.loc[(df["subtask"] == subtask) & (df["seed_value"] == seed), "task"].unique())
        raise PairingError(
            f"{side}: sub-benchmark {subtask} seed {seed} comes from several tasks ({', '.join(names)}); "
            "keep one with --exclude (e.g. --exclude '*_base') or move the other run out of the directory"
        )
    dup = pd.Series(keys.fused(sub, seed, df["replicate"].to_numpy(), df["doc_id"].to_numpy())).duplicated().to_numpy()
    duplicates: dict[str, int] = {}
    if dup.any():
        duplicates = {str(s): int(n) for s, n in df.loc[dup, "subtask"].value_counts().items()}
        df, sub = df.loc[~dup].reset_index(drop=True), sub[~dup]
    for subtask, n in duplicates.items():
        got.warnings.append(f"{side}: {subtask}: {n} duplicate item line(s) in one run; the first is used")
    if keys.varies_within(keys.fused(sub, df["doc_id"].to_numpy()), df["doc_hash"].array):  # then the exact test
        hashes = df.groupby(["subtask", "doc_id"])["doc_hash"].nunique()
        if (hashes > 1).any():
            changed = hashes[hashes > 1]
            subtask, doc_id = changed.index[0]
            runs = df.loc[(df["subtask"] == subtask) & (df["doc_id"] == doc_id), ["task", "seed_value"]]
            raise PairingError(
                f"{side}: doc_hash of {subtask} doc_id {doc_id} differs between runs "
                f"({', '.join(f'{t} seed {s}' for t, s in runs.drop_duplicates().itertuples(index=False))}): "
                "the dataset changed between them "
                f"({len(changed)} item(s) in all); re-run them on the same data"
            )
    df["subtask"] = pd.Categorical.from_codes(sub, pd.Index(subtasks, dtype=object))
    return df, duplicates


def _seed_plan(
    before: pd.DataFrame, after: pd.DataFrame, mode: str, got: Collected
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Which before seed pairs with which after seed, per sub-benchmark, and how that was decided."""

    def seeds(df: pd.DataFrame) -> dict[str, list[str]]:
        """Per sub-benchmark its seeds: by number, then the unnumbered ('none'), ties in order of appearance."""
        subtask, seed = df["subtask"].cat, df["seed_value"].cat  # categories in order of appearance
        sub, codes = subtask.codes.to_numpy(), seed.codes.to_numpy()  # a seed's number comes with its code
        first = keys.starts(sub, codes)
        number = df["seed_num"].to_numpy()[first]
        order = zip(np.isnan(number).tolist(), np.nan_to_num(number).tolist(), codes[first].tolist())
        distinct = dict(zip(zip(sub[first].tolist(), codes[first].tolist()), order))  # (subtask, seed): its place
        out: dict[str, list[str]] = {}
        names, labels = subtask.categories.tolist(), seed.categories.tolist()
        for s, code in sorted(distinct, key=distinct.__getitem__):
            out.setdefault(names[s], []).append(labels[code])
        return out

    sb, sa = seeds(before), seeds(after)
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
            groups[
                "seeds matched in sorted order (no seed shared): "
                + ", ".join(f"before {x} ~ after {y}" for x, y in r["pairs"])
            ].append(subtask)
        if r["unmatched_before"] or r["unmatched_after"]:
            groups[
                f"seeds without a partner, left out: before {r['unmatched_before'] or '-'}, "
                f"after {r['unmatched_after'] or '-'}"
            ].append(subtask)
        if not r["pairs"]:
            groups["no seed in common: not paired"].append(subtask)
    for message, subtasks in groups.items():
        got.warnings.append(f"{message} ({len(subtasks)} sub-benchmark(s): {listing(subtasks, 5)})")


def _join(before: pd.DataFrame, after: pd.DataFrame, plan_: pd.DataFrame) -> pd.DataFrame:
    """Outer join of the matched seeds on (subtask, seed label, replicate, doc_id); raises on doc_hash mismatch.

    The rows, order (sorted by the key) and dtypes of pandas' outer merge, made on integer codes:
    each row's plan row (sub-benchmark and seed), then one int64 key per item, sorted once. The side
    tables have a RangeIndex, so their rows are taken by position.
    """
    keep = list(_JOIN_KEEP)
    if "correct_logged" in before or "correct_logged" in after:
        keep.append("correct_logged")
    sides = {"before": before, "after": after}
    rows = {side: _plan_rows(df, plan_, f"seed_{side}") for side, df in sides.items()}
    labels = list(zip(plan_["subtask"].tolist(), plan_["seed_label"].tolist()))
    rank = np.empty(len(plan_), dtype=np.int64)
    rank[sorted(range(len(labels)), key=labels.__getitem__)] = np.arange(len(plan_))  # plan rows in key order
    picked = {side: np.flatnonzero(rows[side] >= 0) for side in SIDES}  # the rows of matched seeds
    stacked = np.concatenate([picked[side] for side in SIDES])  # before's, then after's
    plan_row = np.concatenate([rows[side][picked[side]] for side in SIDES])
    replicate, doc_id = (
        np.concatenate([sides[side][c].to_numpy()[picked[side]] for side in SIDES]) for c in ("replicate", "doc_id")
    )
    key = keys.fused(rank[plan_row], replicate, doc_id)  # one per item and side (each side deduplicated)
    order = np.argsort(key, kind="stable")  # by item; an item on both sides: its before row, then its after row
    starts = keys.starts(key[order])
    lead = order[starts]  # one row per item, in key order
    n_before = len(picked["before"])
    at = {  # per item, its row in each side's table; -1: none
        "before": np.where(lead < n_before, stacked[lead], -1),
        "after": np.where(lead >= n_before, stacked[lead], -1),
    }
    second = np.r_[~starts[1:], False][starts]  # the item's after row follows its before row
    at["after"][second] = stacked[order[np.flatnonzero(starts)[second] + 1]]
    merge = np.where(at["after"] < 0, 0, np.where(at["before"] < 0, 1, 2))
    item_plan = plan_row[lead]
    parts = [
        pd.DataFrame(
            {
                "subtask": pd.Series(plan_["subtask"].to_numpy(dtype=object)[item_plan], dtype=object),
                "seed_label": plan_["seed_label"].array.take(item_plan),
                "replicate": replicate[lead],
                "doc_id": doc_id[lead],
            }
        )
    ]
    for side in SIDES:
        frame = sides[side]
        if "correct_logged" in keep and "correct_logged" not in frame:
            frame = frame.assign(correct_logged=frame["correct"])
        part = frame[keep].take(at[side]) if (at[side] >= 0).all() else frame[keep].reindex(at[side])  # -1: NaN row
        parts.append(part.set_axis([f"{c}_{side}" for c in keep], axis=1).reset_index(drop=True))
    parts.append(
        pd.DataFrame(
            {
                "_merge": pd.Categorical.from_codes(merge, ["left_only", "right_only", "both"]),
                "seed_before": plan_["seed_before"].array.take(item_plan),
                "seed_after": plan_["seed_after"].array.take(item_plan),
            }
        )
    )
    joined = pd.concat(parts, axis=1)
    if ((merge == 2) & (joined["doc_hash_before"].array != joined["doc_hash_after"].array)).any():
        bad = joined[(joined["_merge"] == "both") & (joined["doc_hash_before"] != joined["doc_hash_after"])]
        first = bad.iloc[0]
        per = bad.groupby("subtask")["doc_id"].nunique().to_dict()
        raise PairingError(
            f"doc_hash differs for {first['subtask']} doc_id {first['doc_id']} (before: task {first['task_before']}, "
            f"after: task {first['task_after']}): the two runs did not see the same item. Mismatched items per "
            f"sub-benchmark: {per}. Re-run both sides on the same dataset version, or leave the task out with --exclude"
        )
    repeats = joined["has_repeats_before"].fillna(False).astype(bool) | joined["has_repeats_after"].fillna(
        False
    ).astype(bool)
    joined["seed"] = (
        joined["seed_label"].where(~repeats, joined["seed_label"] + "#r" + joined["replicate"].astype(str))
        if repeats.any()
        else joined["seed_label"].copy()
    )
    joined["k"] = joined["k_before"].fillna(joined["k_after"])
    return joined


def _plan_rows(side: pd.DataFrame, plan_: pd.DataFrame, column: str) -> np.ndarray:
    """Per row of a side table, its row of the seed plan (its sub-benchmark and ``column``'s seed), -1 if none."""
    subtasks, seeds = side["subtask"].cat, side["seed_value"].cat
    table = np.full((len(subtasks.categories), len(seeds.categories)), -1, dtype=np.int64)
    names, labels = subtasks.categories.tolist(), seeds.categories.tolist()
    where = {(s, x): (i, j) for i, s in enumerate(names) for j, x in enumerate(labels)}
    for row, (subtask, seed) in enumerate(zip(plan_["subtask"].tolist(), plan_[column].tolist())):
        if (subtask, seed) in where:
            table[where[subtask, seed]] = row
    return table[subtasks.codes.to_numpy(), seeds.codes.to_numpy()]


def _warn_unpaired(joined: pd.DataFrame, got: Collected) -> None:
    """One warning per sub-benchmark and seed with items on one side only (fatal with --strict)."""
    lonely = joined[joined["_merge"] != "both"]
    if lonely.empty:
        return
    both = joined[joined["_merge"] == "both"].groupby(["subtask", "seed"]).size()
    for (subtask, seed), group in lonely.groupby(["subtask", "seed"], sort=True):
        parts = []
        for side, flag in (("before", "left_only"), ("after", "right_only")):
            ids = sorted(group.loc[group["_merge"] == flag, "doc_id"].unique().tolist())
            if ids:
                parts.append(f"{len(ids)} item(s) only on the {side} side (doc_id {listing(ids, 8)})")
        paired = int(both.get((subtask, seed), 0))
        got.warnings.append(
            f"{subtask} seed {seed}: {' and '.join(parts)} cannot be paired and are left out of the figures "
            f"({paired} paired): run both sides on the same items (same --limit)"
        )


def _categories(joined: pd.DataFrame, got: Collected) -> pd.Series:
    """One category per sub-benchmark: a named one wins over the task-name fallback of ordinary tasks."""
    sub = joined["subtask"].to_numpy()
    named: dict[str, list[str]] = {}  # per sub-benchmark its named categories, before's first, in order of appearance
    for side in SIDES:
        category = joined[f"category_{side}"].to_numpy()
        first = keys.starts(sub, category)  # the (subtask, category) pairs: one row per item is many times more
        for subtask, name in zip(sub[first].tolist(), category[first].tolist()):
            if not pd.isna(name) and name != subtask and name not in named.setdefault(subtask, []):
                named[subtask].append(name)
    for subtask in sorted(named):
        if len(cats := named[subtask]) > 1:
            got.warnings.append(
                f"{subtask}: category differs between the sides ({', '.join(map(str, cats))}); using {cats[0]}"
            )
    chosen = {s: s for s in keys.factorize(sub)[1]}
    chosen.update((subtask, cats[0]) for subtask, cats in named.items())
    return pd.Series(chosen, name="category")


def _loader(
    srcs: dict[str, Source], samples: pd.DataFrame
) -> tuple[Callable[[str, int], LoadedItem], Callable[[str, Sequence[int]], list[list[str] | None]]]:
    """``load_item(file, locator)`` and ``load_responses(file, locators)`` over both sides' files, each read by
    its own source."""
    by_file = {}
    for side in SIDES:
        for file in samples[f"file_{side}"].dropna().unique():
            by_file[str(file)] = srcs[side]
    return (
        lambda file, locator: by_file[str(file)].load_item(str(file), int(locator)),
        lambda file, locators: by_file[str(file)].load_responses(str(file), locators),
    )


def pair(
    before: str | os.PathLike[str],
    after: str | os.PathLike[str],
    *,
    metric: str | None = None,
    filter: str | None = None,  # noqa: A002 - the name lm-eval and the CLI use
    k: float | None = None,
    tasks: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    seed_match: str = "auto",
    jobs: int | None = None,
    strict: bool = False,
    progress: Progress | None = None,
    rescore: str | None = None,
    source_format: str | None = None,
    analyses: bool = True,
    chance_k: str = "item",
) -> PairResult:
    """Pair the runs under ``before`` with those under ``after``, item by item.

    ``metric``/``filter``/``k`` apply to ordinary tasks (postforget tasks log their own correctness
    and k; ``filter`` also picks among several filters of any task). ``tasks``/``exclude``: shell
    patterns on task names. ``seed_match``: 'exact' pairs equal seeds only, 'order' pairs sorted
    seeds in turn, 'auto' does 'exact' and falls back to 'order' when no seed is shared and both sides
    have as many. ``jobs``: processes reading the logs (default: CPUs available). ``strict``: every
    reported problem is an error. ``progress(done_bytes, total_bytes)`` follows the reading.
    ``rescore``: a policy of :mod:`postforget_lmeval.scoring.rescoring` that re-extracts every postforget
    answer from its logged response instead of trusting the logged 0/1. ``source_format``: the input
    format of both sides (default: detected per directory). ``analyses``: add the
    analyses of :mod:`postforget_lmeval.analyses.annotate`. ``chance_k``: 'item' counts k per item; 'paper'
    uses the paper's official k (:func:`postforget_lmeval.report.paper.official_k`), to compare with its tables.
    Raises :class:`PairingError` for input that would make the figures wrong.
    """
    return finish(
        reading.start(
            before, after, metric=metric, filter=filter, k=k, tasks=tasks, exclude=exclude, seed_match=seed_match,
            jobs=jobs, strict=strict, rescore=rescore, source_format=source_format, analyses=analyses,
            chance_k=chance_k,
        ),
        progress,
    )  # fmt: skip


def finish(begun: reading.Started, progress: Progress | None = None) -> PairResult:
    """The second half of :func:`pair`: wait for the reading that :func:`reading.start` began, then pair.

    ``postforget-pair`` calls the halves itself, importing this module between them.
    """
    got, srcs, planned, roots, started = begun.got, begun.srcs, begun.planned, begun.roots, begun.started
    o = begun.options
    metric, k, seed_match, strict, analyses, chance_k = (
        o[name] for name in ("metric", "k", "seed_match", "strict", "analyses", "chance_k")
    )
    reads, read_seconds = begun.collect(progress)
    for (side, _), read in zip(planned, reads):
        _record(side, srcs[side], read, got)
    ordinary = [r for (_, req), r in zip(planned, reads) if not req.run.self_scored]
    if metric is not None and ordinary and all(not len(r.rows) for r in ordinary):
        raise PairingError(f"unknown metric {metric!r}: no sample of the ordinary tasks logs it")
    for d in got.dropped:
        got.warnings.append(f"{d['side']}: task {d['task']} left out: {d['reason']}")
    tables_, duplicates = {}, {}
    for side in SIDES:
        side_reads = [r for (s, _), r in zip(planned, reads) if s == side]
        tables_[side], duplicates[side] = _side_table(side, side_reads, srcs[side], k, got)
        if chance_k == "paper":
            tables_[side], kept = paper.apply_official_k(tables_[side])
            if kept:
                got.note(f"--chance-k paper: not sub-benchmarks of the paper, k stays per item: {listing(kept)}")

    names = {side: set(tables_[side]["subtask"].cat.categories) for side in SIDES}
    only = {side: sorted(names[side] - names[other]) for side, other in (("before", "after"), ("after", "before"))}
    for side, missing in only.items():
        if missing:
            got.warnings.append(
                f"{len(missing)} sub-benchmark(s) only on the {side} side, not paired: {listing(missing)}"
            )

    plan_, seed_report = _seed_plan(tables_["before"], tables_["after"], seed_match, got)
    if plan_.empty:
        raise PairingError(
            "nothing to pair: no sub-benchmark has a matched seed on both sides (before: "
            f"{listing(sorted(names['before']))}; after: {listing(sorted(names['after']))})"
        )
    joined = _join(tables_["before"], tables_["after"], plan_)
    sub, subtask_names = keys.factorize(joined["subtask"].to_numpy())
    joined["category"] = _categories(joined, got)[subtask_names].array.take(sub)  # a map over the subtask codes
    both = joined["_merge"] == "both"
    paired = joined if both.all() else joined[both]  # all paired: no copy
    paired = paired.rename(columns={"correct_before": "before", "correct_after": "after"})
    if paired.empty:
        raise PairingError(
            "no item is present on both sides for any matched seed: check that both directories ran the same tasks"
        )
    for col in ("before", "after"):
        paired[col] = paired[col].astype(np.int8)
    _warn_unpaired(joined, got)
    if strict and got.warnings:
        raise PairingError("--strict: " + listing(got.warnings, 5, "; "))

    draws = None
    if analyses:  # the bootstrap's draws start now in another process, the read-back of replies below
        from postforget_lmeval.analyses import annotate as analyses_module

        draws = analyses_module.start_draws(paired)
    samples = tables.samples_frame(paired)
    started_analyses, (load_item, load_responses) = None, _loader(srcs, samples)
    if analyses:
        started_analyses = analyses_module.in_background(samples, {"runs": got.runs}, load_responses, draws)
    subtasks = tables.subtask_rows(paired, joined)
    subtasks["scored_by"] = pd.Series(_scorers(subtasks, got), index=subtasks.index, dtype="str")
    categories = pd.concat([metrics.aggregate(subtasks), metrics.aggregate_micro(subtasks)], ignore_index=True)
    rows = zip(*(subtasks[c].tolist() for c in ("category", "task_before", "task_after")))  # a few hundred: plain Python
    if any(c == "Safety/Truthfulness" and (b.endswith("_base") or a.endswith("_base")) for c, b, a in rows):
        got.note(
            "Safety/Truthfulness includes a base-model (few-shot) run; the paper reports this category "
            "only when neither model is a base model"
        )
    agreement = tables.agreement(paired)
    if not agreement.empty:
        category: dict[str, str] = {}
        for subtask, name in zip(subtasks["subtask"].tolist(), subtasks["category"].tolist()):
            category.setdefault(subtask, name)
        agreement.insert(1, "category", agreement["subtask"].map(category))
    options = {name: value for name, value in o.items() if name not in ("strict", "analyses")}  # summary.json's
    scored = sorted(set(subtasks["scored_by"]))
    result = PairResult(
        subtasks=subtasks,
        categories=categories,
        samples=samples,
        agreement=agreement,
        summary={"runs": got.runs},  # the analyses read max_gen_toks per run
        warnings=got.warnings,
        notes=got.notes,
    )
    analyses_start = time.perf_counter()
    if analyses:
        analyses_module.annotate(result, load_item, started=started_analyses)
    timing = {
        "read_seconds": read_seconds,
        "analyses_seconds": time.perf_counter() - analyses_start,
        "total_seconds": time.perf_counter() - started,
    }
    result.summary = result.summary | provenance.summary(
        roots, {s: srcs[s].name for s in SIDES}, options, got, seed_report, joined, subtasks, only, duplicates,
        scored[0] if len(scored) == 1 else "; ".join(scored), sorted(result.tables), timing,
    )  # fmt: skip
    return result

