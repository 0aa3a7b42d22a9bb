"""Pairing two directories of runs item by item: the paper's figures, before any analysis beyond it.

Nothing is dropped silently: every run, line and item that does not make it into the figures is counted in
``PairResult.summary`` with the reason (items on one side only are also a warning), and anything that would
make a figure wrong (a changed dataset, an ambiguous run, an unknown metric) raises :class:`PairingError`.
Choosing and reading runs is :mod:`.reading`, the join :mod:`.join`, the output tables :mod:`.tables`, the
summary :mod:`.provenance`; :func:`postforget_lmeval.pair` adds the analyses.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import pandas as pd

from postforget_lmeval import metrics, sources
from postforget_lmeval.errors import PairingError
from postforget_lmeval.pairing import join, provenance, tables, twins
from postforget_lmeval.pairing.chance_k import apply_official_k
from postforget_lmeval.pairing.options import PairOptions
from postforget_lmeval.pairing.reading import read_sides
from postforget_lmeval.pairing.results import PairResult
from postforget_lmeval.pairing.run_plan import SIDES, Collected, listing
from postforget_lmeval.sources import LoadedItem, Progress, ReadRequest, RunRead, Source


def _scored_by(req: ReadRequest, read: RunRead) -> str:
    """Who scored a run's figures: the rescoring policy, else the extractor its records name, else 'logged'."""
    if req.rescore:
        from postforget_lmeval.scoring.rescoring import scorer_name

        return scorer_name(req.rescore)
    return "+".join(read.info.get("extractors") or []) or "logged"


def _warn_partial_chance(subtasks: pd.DataFrame, got: Collected) -> None:
    """A category whose chance-adjusted means leave out some of the sub-benchmarks it counts says so."""
    no_k = subtasks["k"].isna()
    for category, rows in subtasks.groupby("category", sort=True):
        missing = sorted(set(rows.loc[no_k[rows.index], "subtask"]))
        counted = rows["subtask"].nunique()
        if missing and len(missing) < counted:
            got.warnings.append(
                f"category {category}: F_chance, F_true and BT_true average {counted - len(missing)} of its "
                f"{counted} sub-benchmarks; no chance baseline (an item's k missing or <= 1) for {listing(missing)}"
            )


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


def pair_runs(
    before: str | os.PathLike[str],
    after: str | os.PathLike[str],
    options: PairOptions,
    progress: Progress | None = None,
) -> PairResult:
    """The paper's figures for the runs under ``before`` and ``after`` (see :class:`PairOptions`).

    ``progress(done_bytes, total_bytes)`` follows the reading. Raises :class:`PairingError` for input that
    would make the figures wrong.
    """
    started = time.perf_counter()
    got = Collected()
    read = read_sides(before, after, options, got, progress)
    read_seconds = time.perf_counter() - started
    for (side, _), run_read in zip(read.planned, read.reads):
        _record(side, read.srcs[side], run_read, got)
    planned, reads, twin_reads = twins.set_aside(read.planned, read.reads, got)
    ordinary = [r for (_, req), r in zip(planned, reads) if not req.run.self_scored]
    if options.metric is not None and ordinary and all(not len(r.rows) for r in ordinary):
        raise PairingError(f"unknown metric {options.metric!r}: no sample of the ordinary tasks logs it")
    for d in got.dropped:
        got.warnings.append(f"{d['side']}: task {d['task']} left out: {d['reason']}")

    side_tables, duplicates = {}, {}
    for side in SIDES:
        side_reads = [r for (s, _), r in zip(planned, reads) if s == side]
        side_tables[side], duplicates[side] = join.side_table(side, side_reads, read.srcs[side], options.k, got)
        if options.chance_k == "paper":
            side_tables[side], kept = apply_official_k(side_tables[side])
            if kept:
                got.note(f"--chance-k paper: not sub-benchmarks of the paper, k stays per item: {listing(kept)}")
    names = {side: set(side_tables[side]["subtask"].cat.categories) for side in SIDES}
    only = {side: sorted(names[side] - names[other]) for side, other in zip(SIDES, SIDES[::-1])}
    for side, missing in only.items():
        if missing:
            got.warnings.append(
                f"{len(missing)} sub-benchmark(s) only on the {side} side, not paired: {listing(missing)}"
            )

    plan, seed_report = join.seed_plan(side_tables["before"], side_tables["after"], options.seed_match, got)
    if plan.empty:
        raise PairingError(
            "nothing to pair: no sub-benchmark has a matched seed on both sides (before: "
            f"{listing(sorted(names['before']))}; after: {listing(sorted(names['after']))})"
        )
    joined = join.join(side_tables["before"], side_tables["after"], plan)
    joined["category"] = join.categories(joined, got)
    paired = joined[joined["_merge"] == "both"].rename(columns={"correct_before": "before", "correct_after": "after"})
    if paired.empty:
        raise PairingError(
            "no item is present on both sides for any matched seed: check that both directories ran the same tasks"
        )
    paired = paired.astype({"before": "int8", "after": "int8"})
    undrawn = join.warn_unpaired(joined, got, options.drawn)
    twin_items = twins.twin_table(twin_reads, paired, got)
    if options.strict and got.warnings:
        raise PairingError("--strict: " + listing(got.warnings, 5, "; "))

    subtasks = tables.subtask_rows(paired, joined)
    subtasks["scored_by"] = pd.Series(_scorers(subtasks, got), index=subtasks.index, dtype="str")
    categories = pd.concat([metrics.aggregate(subtasks), metrics.aggregate_micro(subtasks)], ignore_index=True)
    _warn_partial_chance(subtasks, got)
    rows = zip(*(subtasks[c].tolist() for c in ("category", "task_before", "task_after")))
    if any(c == "Safety/Truthfulness" and (b.endswith("_base") or a.endswith("_base")) for c, b, a in rows):
        got.note(
            "Safety/Truthfulness includes a base-model (few-shot) run; the paper reports this category "
            "only when neither model is a base model"
        )
    agreement = tables.agreement(paired)
    if not agreement.empty:
        category = dict(zip(subtasks["subtask"].tolist()[::-1], subtasks["category"].tolist()[::-1]))
        agreement.insert(1, "category", agreement["subtask"].map(category))
    scored = sorted(set(subtasks["scored_by"]))
    result = PairResult(
        subtasks=subtasks, categories=categories, samples=tables.samples_frame(paired), agreement=agreement,
        summary={}, warnings=got.warnings, notes=got.notes, twins=twin_items,
        unmatched=join.unmatched_runs(side_tables, seed_report),
    )  # fmt: skip
    result.summary = provenance.summary(
        roots=read.roots, formats={s: read.srcs[s].name for s in SIDES}, options=options, got=got,
        seed_report=seed_report, joined=joined, subtasks=subtasks, only=only, duplicates=duplicates,
        scored_by=scored[0] if len(scored) == 1 else "; ".join(scored),
        timing={"read_seconds": read_seconds, "total_seconds": time.perf_counter() - started},
    )  # fmt: skip
    if options.drawn is not None:
        result.summary["totals"]["unpaired_undrawn"] = undrawn
    return result


def item_loader(samples: pd.DataFrame) -> Callable[[str, int], LoadedItem]:
    """``load_item(file, locator)`` over both sides' files of a samples table, each file read back by the
    source that read it."""
    by_file: dict[str, Source] = {}
    for side in SIDES:
        files = samples[[f"file_{side}", f"source_{side}"]].dropna().drop_duplicates()
        for file, source in files.itertuples(index=False):
            by_file[str(file)] = sources.by_name(str(source))
    return lambda file, locator: by_file[str(file)].load_item(str(file), int(locator))
