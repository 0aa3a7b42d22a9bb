"""Choosing what to read: the runs of each side, one per (task, seed), and what to ask of each.

Everything a pairing meets on the way (problems, superseded runs, dropped tasks, notes) is
collected in one :class:`Collected`, which the summary and the terminal report in full.
"""

from __future__ import annotations

import fnmatch
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from postforget_lmeval.errors import PairingError
from postforget_lmeval.sources import AUTO_METRICS, ReadRequest, Source, TaskRun

SIDES = ("before", "after")


def listing(items: Sequence[Any], limit: int = 10, sep: str = ", ") -> str:
    """The first ``limit`` items whole, then how many more: long messages are never cut mid-word."""
    shown = sep.join(str(i) for i in items[:limit])
    return shown + (f"{sep}... ({len(items) - limit} more)" if len(items) > limit else "")


@dataclass
class Collected:
    """What a pairing collects on the way, for the summary and the terminal."""

    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {s: [] for s in SIDES})
    superseded: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {s: [] for s in SIDES})
    dropped: list[dict[str, Any]] = field(default_factory=list)
    runs: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {s: [] for s in SIDES})

    def problem(self, side: str, path: str | Path, problem: str, kind: str = "file", count: int = 1) -> None:
        self.problems[side].append({"path": str(path), "problem": problem, "kind": kind, "count": count})
        self.warnings.append(f"{side}: {path}: {problem}")

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def _match(patterns: Sequence[str] | None, task: str) -> bool:
    return any(fnmatch.fnmatchcase(task, p) for p in patterns or ())


def check_roots(roots: dict[str, Any]) -> None:
    paths = {side: Path(roots[side]).resolve() for side in SIDES}
    for side in SIDES:
        if not paths[side].is_dir():
            raise PairingError(
                f"{side} directory {roots[side]} does not exist or is not a directory: "
                "give the output directory of an lm_eval (--output_path) or LightEval run"
            )
    b, a = paths["before"], paths["after"]
    if b == a or b in a.parents or a in b.parents:
        raise PairingError(
            f"before ({b}) and after ({a}) overlap: runs in the inner one would be read on both sides; "
            "give two separate directories"
        )


def discover(
    side: str,
    root: str | os.PathLike[str],
    source: Source,
    tasks: Sequence[str] | None,
    exclude: Sequence[str] | None,
    got: Collected,
) -> list[TaskRun]:
    """The task runs of one side that have readable per-item logs and pass the task filters."""
    found = source.find_runs(Path(root))
    for n in found.notes:
        got.note(f"{side}: {n}")
    if not found.task_runs:
        seen = listing([f"{p['path']}: {p['problem']}" for p in found.problems] + found.notes, 3, "; ")
        raise PairingError(
            f"no {source.layout} found under {side} directory {root} (searched its readable subfolders, "
            "following links, hidden folders aside)"
            + (f" [{seen}]" if seen else "")
            + f": point at {source.produced_by}"
        )
    for p in found.problems:
        got.problem(side, p["path"], p["problem"])
    runs = [r for r in found.task_runs if (not tasks or _match(tasks, r.task)) and not _match(exclude, r.task)]
    if not runs:
        names = sorted({r.task for r in found.task_runs})
        raise PairingError(f"no task under {root} matches --tasks/--exclude; tasks found: {listing(names, 20)}")
    usable = [r for r in runs if r.samples_path is not None and r.unusable is None]
    stubs = [r for r in runs if r.unusable is not None]  # the sources set it only on a samples file they found
    if not usable and stubs:
        raise PairingError(
            f"every samples file under {side} directory {root} is unusable: {stubs[0].samples_path} "
            f"{stubs[0].unusable} ({len(stubs)} file(s) alike)"
        )
    if not usable:
        raise PairingError(
            f"the runs under {side} directory {root} were made without --log_samples (e.g. {runs[0].results_path.name} "
            f"has no per-item samples of task {runs[0].task} beside it): re-run lm_eval with --log_samples"
        )
    for r in runs:
        if r.samples_path is None:
            got.problem(
                side, r.results_path, f"task {r.task}: no samples file (run without --log_samples?); task skipped"
            )
        elif r.unusable is not None:
            got.problem(side, r.samples_path, f"{r.unusable}; task {r.task} skipped", kind="unusable")
    return usable


def newest(side: str, runs: list[TaskRun], got: Collected) -> list[TaskRun]:
    """One run per (task, seed): the newest; the others are reported, not read."""
    by_key: dict[tuple[str, str], list[TaskRun]] = defaultdict(list)
    for r in runs:
        by_key[(r.task, r.seed_label)].append(r)
    chosen = []
    for (task, seed), group in sorted(by_key.items()):
        group.sort(key=lambda r: r.date, reverse=True)
        new = group[0]
        chosen.append(new)
        for old in group[1:]:
            got.superseded[side].append(
                {
                    "task": task,
                    "seed": seed,
                    "results": str(old.results_path),
                    "used_instead": str(new.results_path),
                    "n_samples": old.n_expected,
                    "n_samples_used": new.n_expected,
                }
            )
            differs = (
                ""
                if old.n_expected == new.n_expected
                else f" (it has {old.n_expected} samples, the newest {new.n_expected})"
            )
            got.warnings.append(
                f"{side}: task {task} seed {seed} was run more than once; using the newest "
                f"({new.results_path}), ignoring {old.results_path}{differs}"
            )
    return chosen


def plan(
    side: str, runs: list[TaskRun], metric: str | None, filter_: str | None, rescore: str | None, got: Collected
) -> list[tuple[str, ReadRequest]]:
    """Choose filter and metric per task run; tasks without a usable metric are dropped with the reason."""
    planned = []
    for r in runs:
        if filter_ is not None and filter_ in r.filters:
            chosen_filter: str | None = filter_
        elif filter_ is not None and len(r.filters) > 1:
            raise PairingError(
                f"task {r.task} ({r.results_path}) has filters {', '.join(r.filters)}; "
                f"--filter {filter_} is not one of them"
            )
        else:
            chosen_filter = r.filters[0]
        if not r.self_scored and r.metrics:
            reason = None
            if metric is not None and metric not in r.metrics:
                reason = f"metric {metric} not logged (it logs {', '.join(r.metrics)})"
            elif metric is None and not any(m in r.metrics for m in AUTO_METRICS):
                reason = (
                    f"no per-sample binary metric ({'/'.join(AUTO_METRICS)}); "
                    f"it logs {', '.join(r.metrics)}: pass --metric"
                )
            if reason:
                got.dropped.append({"side": side, "task": r.task, "kind": "metric", "reason": reason})
                continue
        request = ReadRequest(r, chosen_filter, None if r.self_scored else metric, rescore if r.self_scored else None)
        planned.append((side, request))
    return planned


def check_metric(metric: str, planned: list[tuple[str, ReadRequest]], got: Collected) -> None:
    """An explicit --metric that no ordinary task declares is a typo, not a reason to drop every task."""
    ordinary = [req for _, req in planned if not req.run.self_scored]
    missing = [d for d in got.dropped if d.get("kind") == "metric"]
    if missing and not ordinary:
        examples = listing([f"{d['task']}: {d['reason']}" for d in missing], 3, "; ")
        raise PairingError(f"unknown metric {metric!r}: no task declares it in its results file ({examples})")
    if not ordinary and not missing:
        got.note(f"--metric {metric} ignored: postforget tasks log their own correctness")
