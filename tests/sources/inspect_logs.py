"""Copies of the inspect_ai test logs (``tests/fixtures/inspect``, written by inspect_ai's own ``eval()``) with
zip members changed, as a corrupt or hand-edited log would be: for the reader's errors and its memory."""

from __future__ import annotations

import json
import shutil
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from postforget_lmeval.sources import ReadRequest, RunRead, TaskRun
from postforget_lmeval.sources._inspect import SOURCE
from tests.helpers import paths

FIXTURES = paths.FIXTURES / "inspect"
CAPITALS_LOG = "*synth-capitals*.eval"
ALGEBRA_LOG = "*abstract-algebra*.eval"
CAPITALS = "synth_capitals"


def copy_side(folder: str, dest: Path) -> Path:
    """A copy of one fixture folder (``before_eval`` ...) at ``dest``."""
    shutil.copytree(FIXTURES / folder, dest)
    return dest


def task_run(folder: Path, task: str = CAPITALS) -> TaskRun:
    """The run of ``task`` that the inspect source finds in ``folder``."""
    (run,) = [r for r in SOURCE.find_runs(folder).task_runs if r.task == task]
    return run


def read_task(folder: Path, task: str = CAPITALS, rescore: str | None = None) -> tuple[TaskRun, RunRead]:
    """The run of ``task`` in ``folder`` and what the inspect source reads of it (rescored with ``rescore``)."""
    run = task_run(folder, task)
    (read,) = SOURCE.read([ReadRequest(run, None, None, rescore)], 1, None)
    return run, read


def changed_capitals(
    tmp_path: Path, changes: dict[str, Callable[[dict[str, Any]], object]], rescore: str | None = None
) -> tuple[Path, RunRead]:
    """A copy of the capitals log of ``before_eval`` in ``tmp_path`` with the JSON of the members named in
    ``changes`` edited in place by their function, and what the inspect source reads of it."""
    log = next(copy_side("before_eval", tmp_path / "before").glob(CAPITALS_LOG))
    rewrite(log, {member: edit_json(change) for member, change in changes.items()})
    return log, read_task(log.parent, rescore=rescore)[1]


def rewrite(log: Path, changes: dict[str, Callable[[bytes], bytes | None]]) -> None:
    """Write ``log`` again, each member named in ``changes`` replaced by what its function returns for its bytes
    (None: the member is left out). Members are deflated, as inspect_ai wrote them before zstd."""
    with zipfile.ZipFile(log) as archive:
        members = [(info, archive.read(info)) for info in archive.infolist()]
    with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, data in members:
            if info.filename in changes and (data := changes[info.filename](data)) is None:
                continue
            archive.writestr(info.filename, data, zipfile.ZIP_DEFLATED)


def edit_json(change: Callable[[dict[str, Any]], object]) -> Callable[[bytes], bytes]:
    """A member change that edits the member's JSON object in place."""

    def apply(data: bytes) -> bytes:
        doc = json.loads(data)
        change(doc)
        return json.dumps(doc).encode()

    return apply


def break_deflate(log: Path, member: str) -> None:
    """Make the deflated data of ``member`` undecodable (a reserved block type), its zip entry intact."""
    with zipfile.ZipFile(log) as archive:
        info = archive.getinfo(member)
    with open(log, "r+b") as f:
        f.seek(info.header_offset + 26)
        name_len, extra_len = (int.from_bytes(f.read(2), "little") for _ in range(2))
        f.seek(info.header_offset + 30 + name_len + extra_len)
        f.write(b"\xff")


def overstate_size(log: Path, member: str) -> None:
    """Write ``log`` again with its members stored (not deflated), ``member``'s recorded sizes larger than its data,
    as where a member was cut short: reading it runs past the end of the file."""
    with zipfile.ZipFile(log) as archive:
        members = [(info.filename, archive.read(info)) for info in archive.infolist()]
    with zipfile.ZipFile(log, "w", zipfile.ZIP_STORED) as archive:
        for name, data in members:
            archive.writestr(name, data)
    with zipfile.ZipFile(log) as archive:
        info = archive.getinfo(member)
    raw = bytearray(log.read_bytes())
    name, entry = member.encode(), raw.index(b"PK\x01\x02")  # the central directory's first entry
    while raw[entry + 28 : entry + 30] != struct.pack("<H", len(name)) or not raw.startswith(name, entry + 46):
        entry = raw.index(b"PK\x01\x02", entry + 46)
    for at in (info.header_offset + 18, entry + 20):  # compressed and uncompressed size: local header, directory
        struct.pack_into("<II", raw, at, len(raw), len(raw))
    log.write_bytes(bytes(raw))


def byte_not_utf8_in_last_sample(text: bytes) -> bytes:
    """A ``.json`` log's ``text`` with a field holding a byte that is not UTF-8, put in its last sample."""
    at = text.rfind(b'"target": ')
    return text[:at] + b'"bad": "\xff", ' + text[at:]
