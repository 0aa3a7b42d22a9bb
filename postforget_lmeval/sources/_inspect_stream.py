"""Streaming an inspect_ai log: its samples one at a time, and the header of a ``.json`` log in any key order.

inspect_ai's ``read_eval_log`` holds every sample of a log at once, so memory grows with the log's unpacked size (a
compressed ``.eval`` can unpack to far more than its own size), and its ``read_eval_log_samples`` reopens the zip
for each sample. Here an ``.eval`` log's zip is opened once and its ``samples/`` members are parsed one at a time,
and a ``.json`` log's ``samples`` array is parsed item by item (ijson, which inspect_ai reads with too): memory is
bounded by the largest sample. A member is one sample, so it is parsed whole with ``json`` (Python's NaN accepted,
as inspect_ai's own fallback does), its large fields dropped before validation.
Each sample is validated by inspect_ai's own ``EvalSample``; one that does not parse or validate is handed
back as the error, named by its member (or place), so the reader can report it and go on.

A ``.json`` log whose keys were re-written in sorted order (``"eval"`` first, ``"version"`` last) is valid
JSON that inspect_ai's header reader refuses, as it stops at ``samples``; :func:`header` reads its header
fields around the samples instead.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from typing import Any

import ijson
from inspect_ai._util.constants import LOG_SCHEMA_VERSION, get_deserializing_context
from inspect_ai.log import EvalLog, EvalSample
from pydantic import ValidationError

from postforget_lmeval.sources._base import error_text

SAMPLES_DIR = "samples/"
_OPEN, _CLOSE = ("start_map", "start_array"), ("end_map", "end_array")


def _fields(events: Iterator[tuple[str, str, Any]], skip: set[str]) -> dict[str, Any]:
    """The top-level fields of the JSON object whose events ``events`` yields, those in ``skip`` passed over
    without being built (so a log's samples never sit in memory)."""
    out: dict[str, Any] = {}
    for prefix, event, value in events:
        if prefix != "" or event != "map_key":
            continue
        builder = None if value in skip else ijson.ObjectBuilder()
        depth = 0
        for _, inner, inner_value in events:
            if builder is not None:
                builder.event(inner, inner_value)
            depth += (inner in _OPEN) - (inner in _CLOSE)
            if depth == 0:
                break
        if builder is not None:
            out[value] = builder.value
    return out


def header(log: Any, path: str) -> EvalLog:
    """The log's header (no samples): inspect_ai's reader, else, for a ``.json`` log with its keys in another
    order than inspect_ai writes them, the header fields read around the samples; a log format newer than the
    installed inspect_ai reads raises as inspect_ai's reader does."""
    try:
        return log.read_eval_log(path, header_only=True)
    except ValueError as e:
        if not (path.endswith(".json") and "version of log format" in str(e.__cause__)):
            raise
    with open(path, "rb") as f:
        values = _fields(ijson.parse(f, use_float=True), {"samples"})
    found = EvalLog.model_validate(values, context=get_deserializing_context())
    if found.version > LOG_SCHEMA_VERSION:
        raise ValueError(f"Unable to read version {found.version} of log format.")
    return found


def _sample(data: dict[str, Any], skip: set[str]) -> EvalSample:
    return EvalSample.model_validate(
        {k: v for k, v in data.items() if k not in skip}, context=get_deserializing_context()
    )


def samples(path: str, skip: set[str]) -> Iterator[tuple[str, EvalSample | Exception]]:
    """(where, sample) per sample of the log, in the log's order, each parsed alone without the fields in
    ``skip``; where a sample cannot be read, the error in its place. An unreadable log raises (OSError,
    zipfile.BadZipFile, ijson's errors)."""
    if path.endswith(".eval"):
        with zipfile.ZipFile(path) as archive:
            for member in (n for n in archive.namelist() if n.startswith(SAMPLES_DIR) and n.endswith(".json")):
                try:
                    yield member, _sample(json.loads(archive.read(member)), skip)
                except Exception as e:  # zlib/zstd, JSON or pydantic errors of this member only
                    yield member, e
        return
    with open(path, "rb") as f:
        for n, data in enumerate(ijson.items(f, "samples.item", use_float=True)):
            try:
                yield f"samples[{n}]", _sample(data, skip)
            except Exception as e:  # pydantic's errors of this sample only
                yield f"samples[{n}]", e


def cause(error: Exception) -> str:
    """A one-line reason: pydantic's first errors by field, else the error's type and first line."""
    if isinstance(error, ValidationError):
        found = error.errors()
        shown = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in found[:2])
        return shown + (f" (and {len(found) - 2} more)" if len(found) > 2 else "")
    kind = type(error)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    text = next(iter(error_text(error).strip().splitlines()), "")
    return f"{name}: {text}" if text else name
