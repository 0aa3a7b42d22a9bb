"""Choosing and reading the runs of both sides: the sources detected, the runs planned, their items read."""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from postforget_lmeval import sources
from postforget_lmeval.errors import PairingError
from postforget_lmeval.pairing.options import PairOptions
from postforget_lmeval.pairing.run_plan import SIDES, Collected, check_metric, check_roots, discover, newest, plan
from postforget_lmeval.sources import Progress, ReadRequest, RunRead, Source


@dataclass
class Read:
    """What was read of both sides, in plan order."""

    roots: dict[str, Any]
    srcs: dict[str, Source]
    planned: list[tuple[str, ReadRequest]]
    reads: list[RunRead]


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
        srcs = {side: sources.detect(roots[side], options.source_format) for side in SIDES}
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
