"""The interface every input format implements, and the item table it yields.

A *source* knows one harness's files (lm-eval's ``results_<time>.json`` + ``samples_*.jsonl``,
LightEval's ``results_<time>.json`` + ``details/*.parquet``). Pairing only sees what is defined here:

* :class:`TaskRun`: one task of one run, found by ``find_runs`` (seed, filters, metrics, ...);
* :class:`ReadRequest` -> :class:`RunRead`: the item table of one task run (``read``), one row per
  item and replicate, with the columns of :data:`ITEM_COLUMNS` built by :func:`item_frame`;
* :class:`LoadedItem`: one logged item read back in full (``load_item``), for ``show`` and analyses.

No pairing logic lives in a source: it reports what it read and every problem met, the pairing
decides what that means for the figures.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ITEM_COLUMNS: dict[str, str] = {
    "task": "task name as the harness logged it (categorical)",
    "subtask": "sub-benchmark the item belongs to (a postforget record's subtask, else the task)",
    "category": "paper category (a postforget record's category, else the innermost group, else the task)",
    "doc_id": "int64: the item's index in the task's evaluation set",
    "doc_hash": "str: hash of the logged doc; equal on both sides for the same item",
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


@dataclass
class RunRead:
    """The item table of one task run and what reading it met."""

    request: ReadRequest
    items: pd.DataFrame  # ITEM_COLUMNS (+ correct_logged when rescored)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)  # lines, filter, metric, ... for summary["runs"]


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

    @abstractmethod
    def load_item(self, file: str, locator: int) -> LoadedItem:
        """The item stored at ``locator`` of ``file`` (a ``file``/``locator`` pair of the item table)."""


def _constant(value: str, n: int) -> pd.Categorical:
    return pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), pd.Index([value], dtype=object))


def _objects(values: Sequence[Any] | None, n: int, fill: Any = None) -> pd.Series:
    """An object column as given (no conversion to pandas' string dtype: that costs more than the read)."""
    if values is None:
        out = np.empty(n, dtype=object)
        out[:] = fill
    else:
        out = np.fromiter(values, dtype=object, count=n)  # keeps list values (option_ll) as elements
        if fill is not None and None in values:  # rows that do not name it take the run's value
            out[out == None] = fill  # noqa: E711 - elementwise on an object array
    return pd.Series(out, dtype=object, copy=False)


def item_frame(run: TaskRun, file: str, columns: dict[str, Sequence[Any]]) -> pd.DataFrame:
    """The item table of one run from per-row ``columns``; per-run values filled in, dtypes fixed.

    ``columns`` holds the per-row ITEM_COLUMNS (missing optional ones are filled: subtask/category
    from the run, response_chars NaN, option_ll None) and may add ``correct_logged``.
    """
    n = len(columns["doc_id"])
    nan = np.full(n, math.nan)
    frame = {
        "task": _constant(run.task, n),
        "subtask": _objects(columns.get("subtask"), n, run.task),
        "category": _objects(columns.get("category"), n, run.group or run.task),
        "doc_id": np.asarray(columns["doc_id"], dtype=np.int64),
        "doc_hash": _objects(columns["doc_hash"], n),
        "replicate": np.asarray(columns["replicate"], dtype=np.int32) if "replicate" in columns else np.zeros(n, np.int32),
        "correct": np.asarray(columns["correct"], dtype=np.int8),
        "k": np.asarray(columns["k"], dtype=float) if "k" in columns else nan,
        "answer": _objects(columns.get("answer"), n),
        "gold": _objects(columns.get("gold"), n),
        "status": _objects(columns.get("status"), n),
        "file": _constant(file, n),
        "locator": np.asarray(columns["locator"], dtype=np.int64),
        "seed_value": _constant(run.seed_label, n),
        "seed_num": np.full(n, math.nan if run.seed is None else float(run.seed)),
        "response_chars": np.asarray(columns["response_chars"], dtype=float) if "response_chars" in columns else nan,
        "option_ll": _objects(columns.get("option_ll"), n),
    }
    if "correct_logged" in columns:
        frame["correct_logged"] = np.asarray(columns["correct_logged"], dtype=np.int8)
    return pd.DataFrame(frame, copy=False)
