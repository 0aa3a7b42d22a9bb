"""The lm-eval source: runs of ``lm_eval ... --log_samples`` (0.4.0 and later).

Finding runs and reading results files: :mod:`._lmeval_runs`; what a sample says: :mod:`._lmeval_samples`.
This module reads samples files line by line, in worker processes (a file per task) when there is much
to read, turns what reading met into problems and notes, and reads items back by their locator.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from postforget_lmeval.sources import _lmeval_runs
from postforget_lmeval.sources._base import (
    Discovery,
    LoadedItem,
    Problem,
    Progress,
    ReadRequest,
    RunRead,
    Source,
    item_rows,
    walk,
)
from postforget_lmeval.sources._lmeval_samples import AUTO_METRICS, SamplesRead, is_sample, loaded_item, parse_line

PARALLEL_MIN_BYTES = 64 << 20  # less than this is read here: starting worker processes would cost more
READ_BYTES = 1 << 20  # the file buffer: lines are taken from reads of this size


def _array(f: BinaryIO) -> list[Any] | None:
    """The elements of a 0.4.0-0.4.2 log (one JSON array), open at its start; None for JSON lines.

    Only a bad element may be lost: an array that does not parse whole is parsed element by element
    (lm-eval wrote it with ``indent=2``, so each element opens on a line of its own), a corrupt element
    is None. A JSON-lines file whose first line happens to start with ``[`` is JSON lines: its other
    lines start with ``{`` at the line start, which no element of an indented array does.
    """
    if f.read(64).lstrip()[:1] != b"[":
        return None
    f.seek(0)
    data = f.read()
    try:
        elements = orjson.loads(data)
    except orjson.JSONDecodeError:
        if re.search(rb"\n\{", data):
            return None
        return _elements(data)
    return elements if isinstance(elements, list) else [elements]


def _elements(data: bytes) -> list[Any]:
    """Each element of an indented JSON array that does not parse whole, parsed alone; None where it fails."""
    first = re.search(rb"\[\s*?\n([ \t]+)\{", data)
    if first is None:  # not indented: elements cannot be told apart, the array is one malformed element
        return [None]
    starts = [m.start() for m in re.finditer(rb"^" + re.escape(first[1]) + rb"\{", data, re.M)]
    out = []
    for start, end in zip(starts, [*starts[1:], len(data)]):
        chunk = data[start:end].rstrip()
        chunk = chunk[:-1].rstrip() if end == len(data) and chunk.endswith(b"]") else chunk
        try:
            out.append(orjson.loads(chunk.removesuffix(b",")))
        except orjson.JSONDecodeError:
            out.append(None)
    return out


def read_file(request: ReadRequest) -> RunRead:
    """Every sample of the request's samples file, one line at a time (a JSON-array log: one element at a time)."""
    read = SamplesRead(request)
    try:
        with open(str(request.run.samples_path), "rb", buffering=READ_BYTES) as f:
            array = _array(f)
            if array is not None:
                read.unit = "element"
                for i, element in enumerate(array):
                    read.sample(element, i)
            else:
                f.seek(0)
                offset = 0
                for line in f:
                    read.line(line, offset)
                    offset += len(line)
    except OSError as e:  # gone or locked since the runs were found
        read.unreadable = e.strerror or type(e).__name__
    return _run_read(request, read)


def _ignore_ctrl_c() -> None:
    """Workers leave Ctrl-C to the main process: one message, not a traceback per worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _size(path: str) -> int:
    """Bytes of a samples file to read; 0 when it has gone (reading it names the cause)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def read_files(requests: Sequence[ReadRequest], jobs: int, progress: Progress | None) -> list[RunRead]:
    """One RunRead per request, in order; files are read by up to ``jobs`` worker processes when there is much
    to read. ``progress`` is told the bytes read as each file is done."""
    sizes = [_size(str(r.run.samples_path)) for r in requests]
    total, done = sum(sizes), 0
    out: list[Any] = [None] * len(requests)
    if jobs <= 1 or len(requests) <= 1 or total < PARALLEL_MIN_BYTES:
        for i, request in enumerate(requests):
            out[i] = read_file(request)
            done += sizes[i]
            if progress:
                progress(done, total)
        return out
    with ProcessPoolExecutor(max_workers=min(jobs, len(requests)), initializer=_ignore_ctrl_c) as pool:
        futures = {pool.submit(read_file, request): i for i, request in enumerate(requests)}
        for future in as_completed(futures):
            i = futures[future]
            out[i] = future.result()
            done += sizes[i]
            if progress:
                progress(done, total)
    return out


def _problems(request: ReadRequest, read: SamplesRead) -> list[Problem]:
    """Every problem met while reading one file, worded for the user."""
    run, path = request.run, str(request.run.samples_path)
    out = []
    if read.unreadable:
        out.append(Problem(path, f"cannot be read ({read.unreadable}); its items are not read", "unreadable"))
    if run.n_expected is not None and read.lines and read.filter_lines < run.n_expected:
        message = f"holds {read.filter_lines} of the {run.n_expected} items lm-eval evaluated"
        out.append(Problem(path, message, "incomplete"))
    if read.truncated is not None:
        out.append(
            Problem(
                path,
                f"ends mid-line at byte {read.truncated} (interrupted run?); the incomplete last line is ignored",
                "truncated",
            )
        )
    if read.malformed:
        n = len(read.malformed)
        why = ", ".join(f"{count} {reason}" for reason, count in read.malformed_why.items())
        first = f"{read.unit} {read.malformed[0]}"
        out.append(Problem(path, f"{n} malformed line(s) skipped ({why}; first at {first})", "malformed", n))
    if read.n_non_binary:
        out.append(
            Problem(
                path,
                f"{read.n_non_binary} sample(s) with a non-binary score (e.g. {', '.join(read.non_binary)}) "
                "skipped: a score in (0,1) is not a transition",
                "non_binary",
                read.n_non_binary,
            )
        )
    if read.no_metric:
        wanted = request.metric or "/".join(AUTO_METRICS)
        out.append(
            Problem(
                path,
                f"{read.no_metric} sample(s) without metric {wanted} (logged: {', '.join(read.metrics_seen)}) skipped",
                "no_metric",
                read.no_metric,
            )
        )
    if read.bad_k:
        out.append(
            Problem(
                path,
                f"{read.bad_k} item(s) without a usable chance k (a number above 1; {', '.join(read.bad_k_items)}): "
                "their sub-benchmark gets no chance baseline (F_chance, F_true and BT_true left empty)",
                "bad_k",
                read.bad_k,
            )
        )
    if read.not_rescorable:
        out.append(
            Problem(
                path,
                f"{read.not_rescorable} sample(s) cannot be rescored (no logged response, or a doc without "
                "pf_options/pf_gold/pf_format); their logged score is used",
                "not_rescored",
                read.not_rescorable,
            )
        )
    return out


def _run_read(request: ReadRequest, read: SamplesRead) -> RunRead:
    run = request.run
    notes = []
    used = read.filter_seen or request.filter
    if len(run.filters) > 1:
        notes.append(f"task {run.task} logs filters {', '.join(run.filters)}; using '{used}' (choose with --filter)")
    if run.repeats > 1 and read.rows and max(row.replicate for row in read.rows) == 0:
        notes.append(
            f"task {run.task} ran with repeats={run.repeats} but logs one score per item "
            "(its filter keeps one generation), so it has no replicates to pair"
        )
    info = {
        "filter": used,
        "metric": read.metric_used,
        "lines": read.lines,
        "items": len({row.doc_id for row in read.rows}),
        "extractors": read.extractors,
    }
    rows = item_rows(run, str(run.samples_path), read.columns())
    return RunRead(request, rows, _problems(request, read), notes, info)


def _sample_at(f: BinaryIO, locator: int, array: list[Any] | None) -> dict[str, Any]:
    """The sample at ``locator``: an element of ``array`` (a JSON-array log, parsed), else the line at that
    byte offset of ``f``; raises one of :data:`UNREADABLE` where there is none."""
    if array is not None:
        found = array[locator]
    else:
        f.seek(locator)
        found = parse_line(f.readline())
    if not is_sample(found):
        raise ValueError(f"no logged sample at {locator}")
    return found


class LmEvalSource(Source):
    """lm-eval 0.4.x output directories."""

    name = "lmeval"
    layout = "lm-eval results_<time>.json (0.4.3+) or results.json (0.4.0-0.4.2)"
    produced_by = "the output directory of an `lm_eval ... --log_samples` run (or of LightEval, or inspect_ai logs)"

    def matches(self, root: Path) -> bool:
        return any(
            _lmeval_runs.SAMPLES_RE.match(n) or n.endswith(".jsonl")
            for _, names in walk(root, Discovery())
            for n in names
        )

    def find_runs(self, root: Path) -> Discovery:
        return _lmeval_runs.find_runs(root)

    def read(self, requests: Sequence[ReadRequest], jobs: int, progress: Progress | None) -> list[RunRead]:
        return read_files(requests, jobs, progress)

    def load_item(self, file: str, locator: int) -> LoadedItem:
        with open(file, "rb") as f:
            return loaded_item(_sample_at(f, int(locator), _array(f)))


SOURCE = LmEvalSource()
