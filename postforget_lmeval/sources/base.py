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

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from postforget_lmeval.sources.columns import Coded, Texts

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
    "response_chars": "float: length of the response in characters (NaN: unknown or not generative)",
    "option_ll": "object: list[float] of per-option log-likelihoods of log-likelihood MC items, else None",
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

    root: Path
    task_runs: list[TaskRun] = field(default_factory=list)
    problems: list[dict[str, str]] = field(default_factory=list)  # {'path', 'problem'}
    notes: list[str] = field(default_factory=list)  # choices made while reading the layout


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
    """The items of one task run as read: per-row columns, not yet a DataFrame.

    A DataFrame per run costs about a millisecond to build and as much again to send back from a
    reading process, more than reading the run's log; so runs travel as columns and pairing stacks
    all runs of a side into one table (:func:`item_table`).
    """

    run: TaskRun
    file: str  # the file load_item reads the items back from
    columns: dict[str, Sequence[Any]]  # per-row ITEM_COLUMNS (see item_rows)

    def __len__(self) -> int:
        return len(self.columns["doc_id"])

    @property
    def has_repeats(self) -> bool:
        """Whether the run logs several replicates of an item."""
        replicate = self.columns.get("replicate")
        return replicate is not None and len(replicate) > 0 and int(np.max(replicate)) > 0


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


UNREADABLE = (OSError, ValueError, KeyError, IndexError)
"""What reading an item back raises when its file is gone or has changed, or its line is cut or malformed."""


def responses_one_by_one(
    load_item: Callable[[str, int], LoadedItem], file: str, locators: Sequence[int]
) -> list[list[str] | None]:
    """:meth:`Source.load_responses` with ``load_item`` called per locator."""
    out: list[list[str] | None] = []
    for locator in locators:
        try:
            out.append(load_item(file, locator).responses)
        except UNREADABLE:
            out.append(None)
    return out


class Source(ABC):
    """One input format. Implementations are stateless; one instance serves both sides."""

    name: str  # as --format spells it
    layout: str  # what a run's files look like, for "nothing found" messages

    @abstractmethod
    def matches(self, root: Path) -> bool:
        """Whether ``root`` holds runs of this format (cheap: file names, a few bytes)."""

    @abstractmethod
    def find_runs(self, root: Path) -> Discovery:
        """Every task run under ``root`` (any depth), unusable files listed as problems."""

    @abstractmethod
    def read(self, requests: Sequence[ReadRequest], jobs: int, progress: Progress | None) -> list[RunRead]:
        """One :class:`RunRead` per request, in order; ``jobs`` processes at most."""

    def start(self, requests: Sequence[ReadRequest], jobs: int) -> Callable[[Progress | None], list[RunRead]]:
        """Begin reading; the returned call waits for and returns what :meth:`read` would.

        A source that reads in other processes starts them here, so the caller can do other work
        meanwhile; by default the reading happens in the returned call.
        """
        return lambda progress: self.read(requests, jobs, progress)

    @abstractmethod
    def load_item(self, file: str, locator: int) -> LoadedItem:
        """The item stored at ``locator`` of ``file`` (a ``file``/``locator`` pair of the item table)."""

    def load_responses(self, file: str, locators: Sequence[int]) -> list[list[str] | None]:
        """``load_item(file, locator).responses`` per locator, None where that raises :data:`UNREADABLE`.

        The failure modes read back thousands of replies, a few per file: a source may read each file once
        for all of them (lm-eval does); by default each item is loaded in full.
        """
        return responses_one_by_one(self.load_item, file, locators)


_NUMERIC = {
    "doc_id": np.int64, "replicate": np.int32, "correct": np.int8, "k": float, "locator": np.int64,
    "response_chars": float, "correct_logged": np.int8,
}  # fmt: skip
_REPEATED = ("subtask", "category", "status", "answer", "gold")  # text columns with few distinct values per run
_MISSING = {"replicate": 0, "k": math.nan, "response_chars": math.nan}  # per-row columns a source may leave out


def item_rows(run: TaskRun, file: str, columns: dict[str, Sequence[Any]]) -> Rows:
    """The rows of one run from per-row ``columns``: numeric columns as arrays, text and lists as given
    (doc_hash as a list of strings or a :class:`~postforget_lmeval.sources.columns.Texts`).

    ``columns`` holds the per-row ITEM_COLUMNS (doc_id, doc_hash, correct, locator required; the
    others are filled in by :func:`item_table`: subtask/category from the run, replicate 0,
    k/response_chars NaN, answer/gold/status/option_ll None) and may add ``correct_logged``.
    """
    cols = {name: np.asarray(v, dtype=_NUMERIC[name]) if name in _NUMERIC else v for name, v in columns.items()}
    for name in _REPEATED:
        if name in cols:
            cols[name] = _coded(cols[name])
    return Rows(run, file, cols)


def _coded(values: Sequence[Any]) -> Sequence[Any]:
    """A text column with few distinct values as :class:`Coded` (see :mod:`.columns`); a column with an
    unhashable value (a list) is kept as it is."""
    if isinstance(values, Coded):
        return values
    try:
        return Coded(values)
    except TypeError:
        return values


def _per_run(values: Sequence[str], sizes: Sequence[int]) -> pd.Categorical:
    """A per-run value repeated over the run's rows; categories in order of first appearance."""
    import pandas as pd

    names: dict[str, int] = {}
    codes = np.array([names.setdefault(v, len(names)) for v in values], dtype=np.int32)
    return pd.Categorical.from_codes(np.repeat(codes, sizes), pd.Index(list(names), dtype=object))


def _objects(parts: Sequence[Rows], name: str, n: int, fills: Sequence[Any] | None = None) -> pd.Series:
    """An object column over all parts (kept as objects: pandas' string dtype costs more than the read).

    ``fills``: per part, the value of rows that do not name one (None, or the column missing).
    """
    import pandas as pd

    columns = [p.columns.get(name) for p in parts]
    if columns and all(isinstance(c, Coded) for c in columns):  # the usual case: one take
        out = Coded.joined(columns, fills if fills is not None else [None] * len(parts))  # type: ignore[arg-type]
        return pd.Series(out, dtype=object, copy=False)
    values = chain.from_iterable(repeat(None, len(p)) if c is None else c for p, c in zip(parts, columns))
    out = np.fromiter(values, dtype=object, count=n)  # keeps list values (option_ll) as elements
    if fills is not None:
        missing = out == None  # noqa: E711 - elementwise on an object array
        if missing.any():
            out[missing] = np.repeat(np.array(fills, dtype=object), [len(p) for p in parts])[missing]
    return pd.Series(out, dtype=object, copy=False)


def _numbers(parts: Sequence[Rows], name: str, fallback: str | None = None) -> np.ndarray:
    """A numeric column over all parts; a part without it takes ``fallback``'s column or the default."""
    dtype = _NUMERIC[name]
    arrays = [
        np.asarray(p.columns[name] if name in p.columns else p.columns[fallback] if fallback else
                   np.full(len(p), _MISSING[name]), dtype=dtype)
        for p in parts
    ]  # fmt: skip
    return np.concatenate(arrays) if arrays else np.empty(0, dtype=dtype)


def item_table(parts: Sequence[Rows]) -> pd.DataFrame:
    """One item table (ITEM_COLUMNS, + correct_logged if any part has it) from the rows of runs, in order.

    Per-run values are filled in (task, file, seed as categoricals; subtask/category where a row
    names none), dtypes fixed. A run that was not rescored logs its own score, so where another part
    has ``correct_logged`` its ``correct_logged`` is its ``correct``.
    """
    import pandas as pd

    sizes = [len(p) for p in parts]
    n = sum(sizes)
    runs = [p.run for p in parts]
    frame = {
        "task": _per_run([r.task for r in runs], sizes),
        "subtask": _objects(parts, "subtask", n, [r.task for r in runs]),
        "category": _objects(parts, "category", n, [r.group or r.task for r in runs]),
        "doc_id": _numbers(parts, "doc_id"),
        "doc_hash": Texts.joined([p.columns["doc_hash"] for p in parts]),
        "replicate": _numbers(parts, "replicate"),
        "correct": _numbers(parts, "correct"),
        "k": _numbers(parts, "k"),
        "answer": _objects(parts, "answer", n),
        "gold": _objects(parts, "gold", n),
        "status": _objects(parts, "status", n),
        "file": _per_run([p.file for p in parts], sizes),
        "locator": _numbers(parts, "locator"),
        "seed_value": _per_run([r.seed_label for r in runs], sizes),
        "seed_num": np.repeat([math.nan if r.seed is None else float(r.seed) for r in runs], sizes).astype(float),
        "response_chars": _numbers(parts, "response_chars"),
        "option_ll": _objects(parts, "option_ll", n),
    }
    if any("correct_logged" in p.columns for p in parts):
        frame["correct_logged"] = _numbers(parts, "correct_logged", fallback="correct")
    return pd.DataFrame(frame, copy=False)
