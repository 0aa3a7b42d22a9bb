"""Choosing and reading the runs of both sides: the sources detected, the runs planned, their items read."""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from postforget_lmeval import sources
from postforget_lmeval.errors import PairingError
from postforget_lmeval.pairing.options import PairOptions
from postforget_lmeval.pairing.run_plan import (
    SIDES,
    Collected,
    check_metric,
    check_roots,
    discover,
    listing,
    newest,
    plan,
)
from postforget_lmeval.sources import Progress, ReadRequest, RunRead, Source


@dataclass
class Read:
    """What was read of both sides, in plan order."""

    roots: dict[str, Any]
    srcs: dict[str, Source]
    planned: list[tuple[str, ReadRequest]]
    reads: list[RunRead]


def _runs_of(fmt: str, root: str | os.PathLike[str]) -> list[str]:
    """The per-item files of the runs of format ``fmt`` under ``root`` (results files without them are no run)."""
    try:
        found = sources.by_name(fmt).find_runs(Path(root))
    except PairingError:  # e.g. LightEval results without their details: no run to leave out
        return []
    return sorted({str(r.samples_path) for r in found.task_runs if r.samples_path is not None})


def choose(side: str, root: str | os.PathLike[str], name: str | None, got: Collected) -> Source:
    """The one format read under ``root``: the named one, else the one whose runs are there.

    One pairing reads one format per side (a side's items carry one source). A folder holding the runs
    of several harnesses is refused with the runs that a choice would leave out, rather than read as
    the first format found; with ``--format`` the other harnesses' runs are named in a note.
    """
    found = sources.present(root)
    if name is not None:
        chosen = sources.by_name(name)
        for other in (f for f in found if f != name):
            if files := _runs_of(other, root):
                got.note(f"{side}: --format {name}: {len(files)} {other} run file(s) under {root} not read "
                         f"({listing(files, 3)})")  # fmt: skip
        return chosen
    if len(found) > 1:
        runs = {fmt: files for fmt in found if (files := _runs_of(fmt, root))}
        if len(runs) > 1:
            held = "; ".join(
                f"{fmt}: {len(files)} run file(s), e.g. {listing(files, 2)}" for fmt, files in runs.items()
            )
            raise PairingError(
                f"{side} directory {root} holds the runs of several harnesses ({held}); one pairing reads one "
                f"format per side: pass --format {' or --format '.join(runs)} (the other runs are left out, "
                "and named), or move each harness's runs into a directory of its own and pair those"
            )
        if runs:
            return sources.by_name(next(iter(runs)))
    return sources.detect(root)


def read_sides(
    before: str | os.PathLike[str],
    after: str | os.PathLike[str],
    options: PairOptions,
    got: Collected,
    progress: Progress | None = None,
) -> Read:
    """Detect each side's format, choose its runs and read them (each format's runs in one call of its source)."""
    roots = {"before": before, "after": after}
    check_roots(roots)
    try:
        srcs = {side: choose(side, roots[side], options.source_format, got) for side in SIDES}
    except ValueError as e:
        raise PairingError(str(e)) from e
    planned: list[tuple[str, ReadRequest]] = []
    for side in SIDES:
        runs = newest(side, discover(side, roots[side], srcs[side], options.tasks, options.exclude, got), got)
        planned.extend(plan(side, runs, options.metric, options.filter, options.rescore, got))
    if options.metric is not None:
        check_metric(options.metric, planned, got)

    by_source: dict[str, list[int]] = defaultdict(list)
    for i, (side, _) in enumerate(planned):
        by_source[srcs[side].name].append(i)
    total = sum(req.run.samples_bytes for _, req in planned)
    reads: dict[int, RunRead] = {}
    done = 0
    try:
        for name, idx in by_source.items():
            step = None if progress is None else (lambda n, _t, base=done: progress(base + n, total))
            reads.update(zip(idx, sources.by_name(name).read([planned[i][1] for i in idx], options.processes, step)))
            done += sum(planned[i][1].run.samples_bytes for i in idx)
    except OSError as e:
        raise PairingError(f"cannot read a samples file: {e}") from e
    return Read(roots, srcs, planned, [reads[i] for i in range(len(planned))])
