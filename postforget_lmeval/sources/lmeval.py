"""The lm-eval source: runs of ``lm_eval ... --log_samples`` (0.4.0 and later).

Layout and results files: :mod:`.lmeval_layout`; the per-line reader: :mod:`.lmeval_scan`. This
module reads whole files, over byte ranges in worker processes when they are large, turns what
the reader met into problems and notes; reading items back is :mod:`.lmeval_replies`.
"""

from __future__ import annotations

import mmap
import multiprocessing
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from postforget_lmeval.sources import lmeval_layout, lmeval_replies
from postforget_lmeval.sources.base import (
    Discovery,
    LoadedItem,
    Problem,
    Progress,
    ReadRequest,
    RunRead,
    Source,
    item_rows,
)
from postforget_lmeval.sources.lmeval_scan import AUTO_METRICS, Buffer, Chunk, Scanner

RANGE_BYTES = 64 << 20  # unit of parallel work and of progress updates
BLOCK_BYTES = 8 << 20  # unit of scanning within a range (memory: one block of the file mapped at a time)
PARALLEL_MIN_BYTES = 128 << 20  # below this, starting worker processes costs more than it saves


def _is_array(path: str) -> bool:
    """A 0.4.0-0.4.2 log (one indented JSON array) rather than JSON lines."""
    with open(path, "rb") as f:
        return _array_head(f)


def _array_head(f: BinaryIO) -> bool:
    """Whether the file open at its start is a JSON array (see :func:`_is_array`)."""
    return f.read(64).lstrip()[:1] == b"["


def scan_range(request: ReadRequest, start: int, end: int) -> Chunk:
    """Read the lines that *begin* in ``[start, end)`` of the request's samples file.

    A line straddling ``start`` belongs to the previous range, so ranges can be read in any order
    by any process and together read every line once. A JSON-array log is one range.
    """
    scanner = Scanner(request)
    path = str(request.run.samples_path)
    with open(path, "rb") as f:
        if start == 0 and _array_head(f):
            f.seek(0)
            try:
                elements = orjson.loads(f.read())
            except orjson.JSONDecodeError:
                scanner.out.malformed.append(0)
                return scanner.out
            for i, element in enumerate(elements if isinstance(elements, list) else [elements]):
                scanner.element(element, i)
            return scanner.out
        size = os.fstat(f.fileno()).st_size
        if not size:
            return scanner.out
        try:
            buf: Buffer = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)  # searched in place: no copy
        except (OSError, ValueError):  # a file system that cannot map files: the bytes, read
            f.seek(0)
            buf = f.read()
    try:
        pos = start
        if start and buf[start - 1] != 0x0A:  # mid-line: that line belongs to the previous range
            nl = buf.find(b"\n", start)
            pos = size if nl < 0 else nl + 1
        stop = pos
        if min(end, size) > pos:  # through the end of the last line that begins in the range
            nl = buf.find(b"\n", min(end, size) - 1)
            stop = size if nl < 0 else nl + 1
        cut = max(pos, buf.rfind(b"\n", pos, stop) + 1)
        _blocks(scanner, buf, pos, cut)
        if stop > cut:  # no newline at the end of the file: complete, or cut mid-line
            before = len(scanner.out.malformed)
            scanner.line(buf[cut:stop], cut)
            if len(scanner.out.malformed) > before:  # cut mid-line: an interrupted run
                scanner.out.malformed.pop()
                scanner.out.lines -= 1
                scanner.out.truncated = cut
    finally:
        if not isinstance(buf, bytes):
            buf.close()
    return scanner.out


def _blocks(scanner: Scanner, buf: Buffer, pos: int, cut: int) -> None:
    """Scan ``buf[pos:cut]`` (whole lines) in blocks of about BLOCK_BYTES, unmapping each block once read.

    The file's pages stay in the page cache; dropping them from this process keeps its memory at one
    block, however long the responses and the file are.
    """
    while pos < cut:
        end = cut if cut - pos <= BLOCK_BYTES else buf.find(b"\n", pos + BLOCK_BYTES - 1) + 1
        scanner.block(buf, pos, end)
        if hasattr(buf, "madvise"):  # a mapping, not on Windows
            start = pos - pos % mmap.PAGESIZE
            buf.madvise(mmap.MADV_DONTNEED, start, end - start)
        pos = end


def split_ranges(size: int, range_bytes: int) -> list[tuple[int, int]]:
    """Byte ranges of about ``range_bytes`` covering a file of ``size`` bytes."""
    if size <= range_bytes:
        return [(0, max(size, 1))]
    return [(s, min(s + range_bytes, size)) for s in range(0, size, range_bytes)]


Unit = tuple[int, int, int, bool]  # request index, start byte, end byte, whole file


def _work(batch: Sequence[tuple[ReadRequest, int, int, bool]]) -> list[Chunk | RunRead]:
    """A batch of reading: a whole file becomes its RunRead right there (in the worker), a range a Chunk."""
    out: list[Chunk | RunRead] = []
    for request, start, end, whole in batch:
        chunk = scan_range(request, start, end)
        out.append(_run_read(request, chunk) if whole else chunk)
    return out


def _batches(units: list[Unit], jobs: int) -> list[list[Unit]]:
    """Consecutive units of about RANGE_BYTES each (at least 4 batches per process): few round trips."""
    total = sum(end - start for _, start, end, _ in units)
    limit = min(RANGE_BYTES, max(1, total // (4 * jobs)))
    batches: list[list[Unit]] = [[]]
    size = 0
    for unit in units:
        if batches[-1] and size + unit[2] - unit[1] > limit:
            batches.append([])
            size = 0
        batches[-1].append(unit)
        size += unit[2] - unit[1]
    return batches


def start_reading(requests: Sequence[ReadRequest], jobs: int) -> Callable[[Progress | None], list[RunRead]]:
    """Start reading every request's file; the returned call waits and gives one RunRead per request.

    Large logs are read as byte ranges by a pool of worker processes, which start here (forked from
    the caller as it is now, so before it imports anything heavy); small ones are read in the
    returned call. A file read in one piece is turned into its item table by the process that read
    it; the ranges of a larger file are joined in the returned call.
    """
    units: list[Unit] = []
    for i, req in enumerate(requests):
        path = str(req.run.samples_path)
        size = os.path.getsize(path)
        one = size <= RANGE_BYTES or _is_array(path)  # a small file is one range anyway: no need to open it here
        ranges = [(0, max(size, 1))] if one else split_ranges(size, RANGE_BYTES)
        units.extend((i, start, end, len(ranges) == 1) for start, end in ranges)
    total = sum(end - start for _, start, end, _ in units)
    if jobs <= 1 or total < PARALLEL_MIN_BYTES:
        here = (([u], _work([(requests[u[0]], *u[1:])])) for u in units)  # read one by one when collected
        return lambda progress: _gather(requests, here, total, progress)
    # fork: every worker starts at the first submit, before the caller starts any thread
    ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)
    try:
        futures = {
            pool.submit(_work, [(requests[i], s, e, whole) for i, s, e, whole in batch]): batch
            for batch in _batches(units, jobs)
        }
    except BaseException:
        pool.shutdown(cancel_futures=True)
        raise

    def collect(progress: Progress | None) -> list[RunRead]:
        with pool:
            return _gather(requests, ((futures[f], f.result()) for f in as_completed(futures)), total, progress)

    return collect


def _gather(
    requests: Sequence[ReadRequest],
    finished: Iterable[tuple[list[Unit], list[Chunk | RunRead]]],
    total: int,
    progress: Progress | None,
) -> list[RunRead]:
    """One RunRead per request from the batches of units as they finish (with their parts), following progress."""
    parts: dict[tuple[int, int], Chunk | RunRead] = {}
    done = 0
    for batch, results in finished:
        for (i, start, end, _), part in zip(batch, results):
            parts[(i, start)] = part
            done += end - start
        if progress:
            progress(done, total)
    return _join_parts(requests, parts)


def _join_parts(requests: Sequence[ReadRequest], parts: dict[tuple[int, int], Chunk | RunRead]) -> list[RunRead]:
    """One RunRead per request from its parts (a RunRead, or the Chunks of its byte ranges in order)."""
    out: list[Chunk | RunRead] = []
    for (i, _), part in sorted(parts.items(), key=lambda kv: kv[0]):
        if i == len(out):
            out.append(part)
        else:
            out[i].extend(part)  # type: ignore[union-attr,arg-type] - ranges of one file are Chunks
    return [part if isinstance(part, RunRead) else _run_read(requests[i], part) for i, part in enumerate(out)]


def _problems(req: ReadRequest, chunk: Chunk) -> list[Problem]:
    """Every problem met while reading one file, worded for the user."""
    run, path = req.run, str(req.run.samples_path)
    out = []
    if run.n_expected is not None and chunk.lines and chunk.filter_lines < run.n_expected:
        out.append(Problem(path, f"holds {chunk.filter_lines} of the {run.n_expected} items lm-eval evaluated", "incomplete"))
    if chunk.truncated is not None:
        out.append(
            Problem(
                path,
                f"ends mid-line at byte {chunk.truncated} (interrupted run?); the incomplete last line is ignored",
                "truncated",
            )
        )
    if chunk.malformed:
        n = len(chunk.malformed)
        out.append(Problem(path, f"{n} malformed line(s) skipped (first at byte {chunk.malformed[0]})", "malformed", n))
    if chunk.n_non_binary:
        out.append(
            Problem(
                path,
                f"{chunk.n_non_binary} sample(s) with a non-binary score (e.g. {', '.join(chunk.non_binary)}) "
                "skipped: a score in (0,1) is not a transition",
                "non_binary",
                chunk.n_non_binary,
            )
        )
    if chunk.no_metric:
        wanted = req.metric or "/".join(AUTO_METRICS)
        out.append(
            Problem(
                path,
                f"{chunk.no_metric} sample(s) without metric {wanted} (logged: {', '.join(chunk.metrics_seen)}) skipped",
                "no_metric",
                chunk.no_metric,
            )
        )
    if chunk.not_rescorable:
        out.append(
            Problem(
                path,
                f"{chunk.not_rescorable} sample(s) cannot be rescored (no logged response, or a doc without "
                "pf_options/pf_gold/pf_format); their logged score is used",
                "not_rescored",
                chunk.not_rescorable,
            )
        )
    return out


def _run_read(req: ReadRequest, chunk: Chunk) -> RunRead:
    run = req.run
    notes = []
    used = chunk.filter_seen or req.filter
    if len(run.filters) > 1:
        notes.append(f"task {run.task} logs filters {', '.join(run.filters)}; using '{used}' (choose with --filter)")
    if run.repeats > 1 and chunk.doc_id and max(chunk.replicate) == 0:
        notes.append(
            f"task {run.task} ran with repeats={run.repeats} but logs one score per item "
            "(its filter keeps one generation), so it has no replicates to pair"
        )
    info = {
        "filter": used,
        "metric": chunk.metric_used,
        "lines": chunk.lines,
        "items": len(set(chunk.doc_id)),
        "slow_path": chunk.slow_lines,
        "extractors": chunk.extractors,
    }
    rows = item_rows(run, str(run.samples_path), chunk.columns())
    return RunRead(req, rows, _problems(req, chunk), notes, info)


def _read_line(path: str, locator: int) -> dict[str, Any]:
    """The sample at ``locator``: a line's byte offset, or an element's index in a 0.4.0-0.4.2 JSON array
    (one item for ``show``; the failure modes read many at once, :mod:`.lmeval_replies`)."""
    with open(path, "rb") as f:
        if _array_head(f):
            f.seek(0)
            return orjson.loads(f.read())[locator]
        f.seek(locator)
        return orjson.loads(f.readline())


class LmEvalSource(Source):
    """lm-eval 0.4.x output directories."""

    name = "lmeval"
    layout = "lm-eval results_<time>.json (0.4.3+) or results.json (0.4.0-0.4.2)"

    def matches(self, root: Path) -> bool:
        return any(
            lmeval_layout.SAMPLES_RE.match(n) or n.endswith(".jsonl")
            for _, _, names in os.walk(root)
            for n in names
        )

    def find_runs(self, root: Path) -> Discovery:
        return lmeval_layout.find_runs(root)

    def read(self, requests: Sequence[ReadRequest], jobs: int, progress: Progress | None) -> list[RunRead]:
        return start_reading(requests, jobs)(progress)

    def start(self, requests: Sequence[ReadRequest], jobs: int) -> Callable[[Progress | None], list[RunRead]]:
        return start_reading(requests, jobs)

    def load_item(self, file: str, locator: int) -> LoadedItem:
        return lmeval_replies.loaded_item(_read_line(file, int(locator)))

    def load_responses(self, file: str, locators: Sequence[int]) -> list[list[str] | None]:
        return lmeval_replies.load_responses(file, locators)


SOURCE = LmEvalSource()
