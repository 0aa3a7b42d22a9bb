"""The interface every input format implements, and the item table it yields.

A *source* knows one harness's files (lm-eval's ``results_<time>.json`` + ``samples_*.jsonl``,
LightEval's ``results_<time>.json`` + ``details/*.parquet``). Pairing only sees what is defined here:

* :class:`TaskRun`: one task of one run, found by ``find_runs`` (seed, filters, metrics, ...);
* :class:`ReadRequest` -> :class:`RunRead`: the items of one task run (``read``), one row per item and
  replicate, as :class:`Rows` (:func:`item_rows`); :func:`item_table` stacks the rows of many runs
  into one table with the columns of :data:`ITEM_COLUMNS`;
* :class:`LoadedItem`: one logged item read back in full (``load_item``), for ``show`` and analyses.

No pairing logic lives in a source: it reports what it read and every problem met, the pairing
decides what that means for the figures.
"""

from __future__ import annotations

import hashlib
import math
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # imported where a table is built: readers start without pandas
    import pandas as pd

ITEM_COLUMNS: dict[str, str] = {
    "task": "task name as the harness logged it (categorical)",
    "subtask": "sub-benchmark the item belongs to (a postforget record's subtask, else the task)",
    "category": "paper category (a postforget record's category, else the innermost group, else the task)",
    "doc_id": "int64: the item's index in the task's evaluation set",
    "doc_hash": "str (pandas' str dtype, on Arrow): hash of the logged doc; equal on both sides for the same item",
    "replicate": "int32: generation index when a run samples several per item (lm-eval repeats), else 0",
    "correct": "int8: 0/1 score used for the figures (rescored when rescoring)",
    "k": "float: options of the item for the chance baseline (NaN if unknown)",
    "answer": "str|None: the answer read from the response (short excerpt)",
    "gold": "str|None: the gold answer (short excerpt)",
    "status": "str|None: extraction status of postforget records (answered, invalid, no_answer, unfinished), else None",
    "file": "str (categorical): the file load_item reads the item back from",
    "locator": "int64: where the item is in that file (byte offset of the line, or row index)",
    "seed_value": "str (categorical): the run's seed label ('none' when no seed was logged)",
    "seed_num": "float: the seed as a number, NaN when none (orders the seeds)",
    "response_chars": "float: length of the response (lm-eval: the bytes of its logged JSON string; LightEval: "
    "characters); NaN: unknown or not generative",
    "option_ll": "object: list[float] of per-option log-likelihoods of log-likelihood MC items, else None",
    "cluster": "str|None: the text the item shares with other items (a postforget record's cluster: MCTest's "
    "story, MuSR's narrative); the bootstrap resamples such items together",
}
"""Columns of the per-side item table every source yields (plus ``correct_logged`` when rescoring)."""

Progress = Callable[[int, int], None]
"""Called with (bytes read so far, bytes to read in all)."""


@dataclass(frozen=True)
class TaskRun:
    """One task of one run: where its logged items are and how they were made."""

    task: str
    results_path: Path  # the run's results file; names the run in every message
    date: str  # sorts by age (ISO time from the file name, or the file's mtime)
    samples_path: Path | None  # None: the run logged no per-item data
    seed: int | None
    seed_source: str  # where the seed was read, e.g. "generation_kwargs seed"
    output_type: str | None  # "multiple_choice", "generate_until", ...; None: unknown
    filters: tuple[str, ...]  # in the task config's order
    metrics: tuple[str, ...]  # per-item metric names the results file declares
    group: str | None  # innermost group containing the task
    n_expected: int | None  # items the harness evaluated
    repeats: int = 1
    self_scored: bool = False  # logs its own subtask/category/k/correctness (postforget tasks)
    max_gen_toks: int | None = None  # generation budget from the task config, None if unknown
    response_prefix: str = ""  # prepended to the logged response before re-extraction (base_direct)
    samples_bytes: int = 0
    unusable: str | None = None  # why the samples cannot be read (e.g. a Git LFS pointer); None: usable

    @property
    def seed_label(self) -> str:
        return "none" if self.seed is None else str(self.seed)


@dataclass
class Discovery:
    """Everything one source found under a directory, with what could not be used and why."""

    task_runs: list[TaskRun] = field(default_factory=list)
    problems: list[dict[str, str]] = field(default_factory=list)  # {'path', 'problem'}
    notes: list[str] = field(default_factory=list)  # choices made while reading the layout
    skipped: list[Path] = field(default_factory=list)  # samples of tasks skipped with their problem named


def walk(root: Path, found: Discovery, hidden: list[str] | None = None) -> Iterator[tuple[Path, list[str]]]:
    """Every folder under ``root`` (sorted, links to folders followed) with its sorted file names.

    Runs are often reached through symbolic links (a shared disk, a folder per seed): missing them
    would pair fewer seeds without a word. A link that leads back into a folder already searched (a
    loop, or the same runs twice) is named in ``found.notes``; a folder that cannot be listed is a
    problem. Hidden folders are not searched; ``hidden`` collects them (``.git`` aside).
    """
    seen: set[str] = set()

    def unreadable(error: OSError) -> None:
        cause = error.strerror or type(error).__name__
        found.problems.append({"path": str(error.filename or root), "problem": f"folder cannot be read ({cause}); "
                               "its runs are not read: give this user read access, or pair a copy"})  # fmt: skip

    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen:
            found.notes.append(f"{dirpath} is a link to {real}, already searched; not read twice")
            dirnames[:] = []
            continue
        seen.add(real)
        if hidden is not None:
            hidden.extend(str(Path(dirpath) / d) for d in dirnames if d.startswith(".") and d != ".git")
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        yield Path(dirpath), sorted(filenames)


@dataclass(frozen=True)
class ReadRequest:
    """What pairing asks of one task run (picklable, for worker processes)."""

    run: TaskRun
    filter: str | None  # None: the first filter seen
    metric: str | None  # ordinary tasks; None: the source's default binary metric
    rescore: str | None = None  # a rescoring policy for self-scored items, or None to trust the log


@dataclass(frozen=True)
class Problem:
    """Something met while reading a file; ``kind`` groups the counts of summary.json."""

    path: str
    message: str
    kind: str = "file"
    count: int = 1


@dataclass(frozen=True)
class Rows:
    """The items of one task run as read: per-row lists, which :func:`item_table` stacks with the rows of
    the other runs of a side into one DataFrame."""

    run: TaskRun
    file: str  # the file load_item reads the items back from
    columns: dict[str, list[Any]]  # per-row ITEM_COLUMNS (see item_rows)

    def __len__(self) -> int:
        return len(self.columns["doc_id"])


@dataclass
class RunRead:
    """The items of one task run and what reading it met."""

    request: ReadRequest
    rows: Rows  # ITEM_COLUMNS (+ correct_logged when rescored), as columns
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)  # lines, filter, metric, ... for summary["runs"]

    @property
    def items(self) -> pd.DataFrame:
        """This run's item table (pairing stacks the rows of all runs instead)."""
        return item_table([self.rows])


@dataclass(frozen=True)
class LoadedItem:
    """One logged item in full, as ``show`` and the analyses need it."""

    question: str
    options: list[str]
    gold: str | None
    responses: list[str]  # one per replicate, full text (MC: the options' log-likelihoods as text)
    prompt: str | None
    doc: dict[str, Any]
    doc_id: int | None = None


def error_text(error: BaseException) -> str:
    """What an error says; a reason given as bytes (ijson's C backend, which puts the file's bytes around the place
    on the lines after its first) as the first line of its text rather than as b'...'."""
    reason = error.args[0] if len(error.args) == 1 else None
    if isinstance(reason, bytes):
        return next(iter(reason.decode("utf-8", "replace").strip().splitlines()), "")
    return str(error)


def item_id(sample_id: int | str) -> int:
    """An item's id as int64 (a doc_id): an int id as it is, a string id by a stable hash, so 1 and "1" differ."""
    if isinstance(sample_id, int):
        return sample_id
    return int(hashlib.sha256(str(sample_id).encode("utf-8")).hexdigest()[:15], 16)


UNREADABLE = (OSError, ValueError, KeyError, IndexError)
"""What reading an item back raises when its file is gone or has changed, or its line is cut or malformed."""


class Source(ABC):
    """One input format. Implementations are stateless; one instance serves both sides."""

    name: str  # as --format spells it
    layout: str  # what a run's files look like, for "nothing found" messages
    produced_by: str  # what to point at instead, for the same messages

    @abstractmethod
    def matches(self, root: Path) -> bool:
        """Whether ``root`` holds runs of this format (cheap: file names, a few bytes)."""

    @abstractmethod
    def find_runs(self, root: Path) -> Discovery:
        """Every task run under ``root`` (any depth), unusable files listed as problems."""

    @abstractmethod
    def read(self, requests: Sequence[ReadRequest], jobs: int, progress: Progress | None) -> list[RunRead]:
        """One :class:`RunRead` per request, in order; ``jobs`` processes at most."""

    @abstractmethod
    def load_item(self, file: str, locator: int) -> LoadedItem:
        """The item stored at ``locator`` of ``file`` (a ``file``/``locator`` pair of the item table)."""


def read_each(
    requests: Sequence[ReadRequest], read_one: Callable[[ReadRequest], RunRead], progress: Progress | None
) -> list[RunRead]:
    """``read_one`` of each request in turn, ``progress`` told after each (sources that read in this process)."""
    total, done, out = sum(r.run.samples_bytes for r in requests), 0, []
    for req in requests:
        out.append(read_one(req))
        done += req.run.samples_bytes
        if progress:
            progress(done, total)
    return out


_NUMERIC = {"doc_id": "int64", "replicate": "int32", "correct": "int8", "k": "float64", "locator": "int64",
            "response_chars": "float64", "correct_logged": "int8"}  # fmt: skip
_DEFAULTS = {"replicate": 0, "k": math.nan, "response_chars": math.nan}  # of a numeric column a source leaves out


def item_rows(run: TaskRun, file: str, columns: dict[str, Sequence[Any]]) -> Rows:
    """The rows of one run from per-row ``columns`` (each a sequence, one value per row).

    ``columns`` holds the per-row ITEM_COLUMNS (doc_id, doc_hash, correct, locator required; the
    others are filled in by :func:`item_table`: subtask/category from the run, replicate 0,
    k/response_chars NaN, answer/gold/status/option_ll None) and may add ``correct_logged``.
    """
    return Rows(run, file, {name: list(values) for name, values in columns.items()})


def _per_run(values: Sequence[str], sizes: Sequence[int]) -> pd.Categorical:
    """A per-run value repeated over the run's rows; categories in order of first appearance."""
    import pandas as pd

    codes: dict[str, int] = {}
    for value in values:
        codes.setdefault(value, len(codes))
    rows = np.repeat(np.array([codes[v] for v in values], dtype=np.int32), sizes)
    return pd.Categorical.from_codes(rows, pd.Index(list(codes), dtype=object))


def _stacked(parts: Sequence[Rows], name: str, fills: Sequence[Any]) -> list[Any]:
    """Column ``name`` of all parts, in order; a part's rows without a value (None, or no column) take its fill."""
    out: list[Any] = []
    for part, fill in zip(parts, fills):
        values = part.columns.get(name)
        if values is None:
            out.extend([fill] * len(part))
        elif fill is None or None not in values:
            out.extend(values)
        else:
            out.extend(fill if v is None else v for v in values)
    return out


def item_table(parts: Sequence[Rows]) -> pd.DataFrame:
    """One item table (ITEM_COLUMNS, + correct_logged if any part has it) from the rows of runs, in order.

    Per-run values are filled in (task, file, seed as categoricals; subtask/category where a row
    names none), dtypes fixed. A run that was not rescored logs its own score, so where another part
    has ``correct_logged`` its ``correct_logged`` is its ``correct``.
    """
    import pandas as pd

    sizes = [len(p) for p in parts]
    runs = [p.run for p in parts]
    none = [None] * len(parts)

    def objects(name: str, fills: Sequence[Any] = none) -> pd.Series:
        return pd.Series(_stacked(parts, name, fills), dtype=object)

    def numbers(name: str) -> np.ndarray:
        return np.array(_stacked(parts, name, [_DEFAULTS.get(name)] * len(parts)), dtype=_NUMERIC[name])

    frame = {
        "task": _per_run([r.task for r in runs], sizes),
        "subtask": objects("subtask", [r.task for r in runs]),
        "category": objects("category", [r.group or r.task for r in runs]),
        "doc_id": numbers("doc_id"),
        "doc_hash": pd.array(_stacked(parts, "doc_hash", none), dtype="str"),
        "replicate": numbers("replicate"),
        "correct": numbers("correct"),
        "k": numbers("k"),
        "answer": objects("answer"),
        "gold": objects("gold"),
        "status": objects("status"),
        "file": _per_run([p.file for p in parts], sizes),
        "locator": numbers("locator"),
        "seed_value": _per_run([r.seed_label for r in runs], sizes),
        "seed_num": np.repeat([math.nan if r.seed is None else float(r.seed) for r in runs], sizes).astype(float),
        "response_chars": numbers("response_chars"),
        "option_ll": objects("option_ll"),
        "cluster": objects("cluster"),
    }
    if any("correct_logged" in p.columns for p in parts):
        logged = [p.columns.get("correct_logged", p.columns["correct"]) for p in parts]
        frame["correct_logged"] = np.array([v for values in logged for v in values], dtype="int8")
    return pd.DataFrame(frame)
