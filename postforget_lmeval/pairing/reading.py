"""The first half of a pairing: options checked, runs of both sides chosen, their reading started.

This module and everything it imports stay clear of pandas: ``postforget-pair`` starts the reading
processes here, then imports the table machinery (pandas, the analyses and renderers: about half a
second) while they read, and :func:`postforget_lmeval.pairing.pair.finish` collects what they read.
:func:`postforget_lmeval.pairing.pair.pair` is the two halves in one call.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from postforget_lmeval import sources
from postforget_lmeval.errors import PairingError
from postforget_lmeval.pairing.run_plan import SIDES, Collected, check_metric, check_roots, discover, newest, plan
from postforget_lmeval.sources.base import Progress, ReadRequest, RunRead, Source

SEED_MATCH = ("auto", "exact", "order")
CHANCE_K = ("item", "paper")
"""``item``: k counted per item (this package's default); ``paper``: the official analysis code's k
(:func:`postforget_lmeval.report.paper.official_k`)."""


@dataclass
class Started:
    """A pairing whose reading is under way: what was chosen, and how to collect what is read."""

    roots: dict[str, Any]
    srcs: dict[str, Source]
    planned: list[tuple[str, ReadRequest]]
    got: Collected
    options: dict[str, Any]  # the pair() options, for the summary and the later steps
    started: float  # perf_counter at the start, for summary["timing"]
    read_started: float
    collectors: list[tuple[list[int], Callable[[Progress | None], list[RunRead]]]] = field(default_factory=list)

    def collect(self, progress: Progress | None = None) -> tuple[list[RunRead], float]:
        """Every planned run's read, in plan order, and the seconds reading took (from its start)."""
        total = sum(req.run.samples_bytes for _, req in self.planned)
        out: dict[int, RunRead] = {}
        done_before = 0
        try:
            for idx, collect in self.collectors:
                step = None if progress is None else (lambda done, _t, base=done_before: progress(base + done, total))
                out.update(zip(idx, collect(step)))
                done_before += sum(self.planned[i][1].run.samples_bytes for i in idx)
        except OSError as e:
            raise PairingError(f"cannot read a samples file: {e}") from e
        return [out[i] for i in range(len(self.planned))], time.perf_counter() - self.read_started


def check_rescore(rescore: str | None) -> None:
    if rescore is None:
        return
    from postforget_lmeval.scoring.rescoring import POLICIES

    if rescore not in POLICIES:
        several = "," in rescore
        raise PairingError(
            f"--rescore {rescore}: "
            + ("pair() takes one policy; several are compared side by side by the sensitivity report" if several
               else f"unknown policy; choose one of {', '.join(POLICIES)}")
        )


def start(
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
    rescore: str | None = None,
    source_format: str | None = None,
    analyses: bool = True,
    chance_k: str = "item",
) -> Started:
    """Check the options, choose the runs of both sides and start reading them (see ``pair()`` for the options)."""
    if seed_match not in SEED_MATCH:
        raise PairingError(f"--seed-match must be one of {', '.join(SEED_MATCH)}, not {seed_match!r}")
    if k is not None and not k >= 1:
        raise PairingError(f"--k must be the number of options (>= 1), not {k}")
    check_rescore(rescore)
    if chance_k not in CHANCE_K:
        raise PairingError(f"--chance-k must be one of {', '.join(CHANCE_K)}, not {chance_k!r}")
    started = time.perf_counter()
    got = Collected()
    roots = {"before": before, "after": after}
    check_roots(roots)
    try:
        srcs = {side: sources.detect(roots[side], source_format) for side in SIDES}
    except ValueError as e:
        raise PairingError(str(e)) from e
    planned: list[tuple[str, ReadRequest]] = []
    for side in SIDES:
        runs = newest(side, discover(side, roots[side], srcs[side], tasks, exclude, got), got)
        planned.extend(plan(side, runs, metric, filter, rescore, got))
    if metric is not None:
        check_metric(metric, planned, got)
    jobs = max(1, jobs or available_cpus())
    options = {
        "metric": metric, "filter": filter, "k": k, "tasks": list(tasks or []), "exclude": list(exclude or []),
        "seed_match": seed_match, "jobs": jobs, "strict": strict, "rescore": rescore, "format": source_format,
        "chance_k": chance_k, "analyses": analyses,
    }  # fmt: skip
    out = Started(roots, srcs, planned, got, options, started, time.perf_counter())
    by_source: dict[str, list[int]] = defaultdict(list)
    for i, (side, _) in enumerate(planned):
        by_source[srcs[side].name].append(i)
    try:
        for name, idx in by_source.items():
            out.collectors.append((idx, sources.by_name(name).start([planned[i][1] for i in idx], jobs)))
    except OSError as e:
        raise PairingError(f"cannot read a samples file: {e}") from e
    return out


def available_cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
