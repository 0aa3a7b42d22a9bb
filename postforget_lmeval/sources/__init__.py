"""Input formats: one module set per harness, chosen per directory.

Each format's module (``_<name>.py``) exposes ``SOURCE``, an instance of :class:`Source`.
:func:`present` asks each in :data:`FORMATS` order whether a directory holds its files; :func:`detect`
takes the first, with lm-eval the fallback, so a directory with no recognisable run gets lm-eval's
explanation of what is missing. A directory that holds several harnesses' files is the pairing's to
settle (:mod:`postforget_lmeval.pairing.reading`), so that no harness's runs are left out unsaid.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

from postforget_lmeval.sources._base import (
    ITEM_COLUMNS,
    UNREADABLE,
    Discovery,
    LoadedItem,
    Problem,
    Progress,
    ReadRequest,
    Rows,
    RunRead,
    Source,
    TaskRun,
    item_id,
    item_rows,
    item_table,
)  # fmt: skip
from postforget_lmeval.sources._lmeval_samples import AUTO_METRICS, doc_hash

__all__ = [
    "AUTO_METRICS", "FORMATS", "ITEM_COLUMNS", "UNREADABLE", "Discovery", "LoadedItem", "Problem", "Progress",
    "ReadRequest", "Rows", "RunRead", "Source", "TaskRun", "by_name", "detect", "doc_hash", "item_id", "item_rows",
    "item_table", "present",
]  # fmt: skip

FORMATS = ("lmeval", "lighteval", "inspect")
"""Names accepted by ``--format``, each the module ``_<name>.py`` of this package."""
FALLBACK = "lmeval"


def by_name(name: str) -> Source:
    """The source of a format name (as ``--format`` and samples.parquet's ``source_*`` columns spell it)."""
    if name not in FORMATS:
        raise ValueError(f"unknown input format {name!r}; choose one of {', '.join(FORMATS)}")
    return importlib.import_module(f"{__name__}._{name}").SOURCE


def present(root: str | os.PathLike[str]) -> list[str]:
    """The formats whose files are under ``root``, in :data:`FORMATS` order (cheap: names and first bytes)."""
    return [fmt for fmt in FORMATS if by_name(fmt).matches(Path(root))]


def detect(root: str | os.PathLike[str], name: str | None = None) -> Source:
    """The source for ``root``: the named one, else the first whose files are there (lm-eval last), else lm-eval."""
    if name is not None:
        return by_name(name)
    found = [fmt for fmt in present(root) if fmt != FALLBACK]
    return by_name(found[0] if found else FALLBACK)
