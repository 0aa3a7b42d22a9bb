"""The inspect_ai source: evaluation logs written by inspect_ai (``inspect eval``, ``eval()``, ``eval_set``, and
LightEval's inspect backend), ``.eval`` and ``.json`` alike, read through inspect_ai's own reader.

One log is one task of one run: its task is ``eval.task`` (file names mangle it), its seed
``plan.config.seed`` when the run set one, else ``eval.model_generate_config.seed``. Folders are searched
at any depth; an ``eval_set`` folder's ``logs.json``, ``eval-set.json`` and ``.eval-set-id`` are not logs.
Recognising a log needs only its first bytes, so a folder of logs is detected (and told which extra to
install) without inspect_ai; reading it needs the ``inspect`` extra (:mod:`._inspect_log`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from postforget_lmeval.errors import PairingError
from postforget_lmeval.sources._base import (
    Discovery,
    LoadedItem,
    Progress,
    ReadRequest,
    RunRead,
    Source,
    error_text,
    read_each,
    walk,
)

NOT_LOGS = {"logs.json", "eval-set.json", ".eval-set-id"}  # what eval_set writes beside its logs
ZIP_MAGIC = b"PK\x03\x04"
JSON_HEAD = re.compile(rb'^\{\s*"version":\s*\d+,\s*"status":')  # how inspect_ai opens a .json log
SORTED_HEAD = re.compile(rb'^\{\s*"(?:error|eval)":\s*\{')  # the same log re-written with its keys sorted


def is_log(path: Path) -> bool:
    """Whether ``path`` is an inspect_ai log, from its name and first bytes."""
    if path.name in NOT_LOGS or path.suffix not in (".eval", ".json"):
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(1024)  # room for a log re-indented deeply, before its first field's value
    except OSError:
        return False
    if path.suffix == ".eval":
        return head.startswith(ZIP_MAGIC)
    return bool(JSON_HEAD.match(head) or SORTED_HEAD.match(head))


def _logs(root: Path, found: Discovery) -> Iterator[Path]:
    """The logs under ``root``, at any depth, in name order (hidden folders left out, links followed)."""
    for dirpath, names in walk(root, found):
        yield from (p for n in names if is_log(p := dirpath / n))


class InspectSource(Source):
    """inspect_ai evaluation logs (``.eval`` or ``.json``), one task run per log."""

    name = "inspect"
    layout = "inspect_ai evaluation logs (*.eval or *.json)"
    produced_by = "the --log-dir of an `inspect eval` run (or of eval_set)"

    def matches(self, root: Path) -> bool:
        return next(_logs(root, Discovery()), None) is not None

    def find_runs(self, root: Path) -> Discovery:
        from postforget_lmeval.sources._inspect_log import BadLog, task_run

        found = Discovery()
        for path in _logs(Path(root), found):
            try:
                found.task_runs.append(task_run(path))
            except PairingError:
                raise
            except BadLog as e:
                found.problems.append({"path": str(path), "problem": str(e)})
            except Exception as e:  # inspect_ai's reader raises many kinds for a foreign or broken file
                found.problems.append(
                    {"path": str(path), "problem": f"is not a readable inspect_ai log: {error_text(e)}"}
                )
        return found

    def read(self, requests: Sequence[ReadRequest], jobs: int, progress: Progress | None) -> list[RunRead]:
        from postforget_lmeval.sources._inspect_log import read_run

        return read_each(requests, read_run, progress)

    def load_item(self, file: str, locator: int) -> LoadedItem:
        from postforget_lmeval.sources._inspect_log import loaded_item

        return loaded_item(file, locator)


SOURCE = InspectSource()
