"""CSV files that are safe to open in a spreadsheet.

Task, sub-benchmark and pair names, answers and golds come from files others wrote. A spreadsheet
runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return) as a formula,
so such a text cell is written with a leading ``'`` (OWASP's advice on CSV injection), as report.html
escapes markup. Numbers, and text that is a plain number (``-3``), are written as they are.

A carriage return inside a cell ends the row for a spreadsheet or Python's ``csv`` reader unless the cell is
quoted, and the ``csv`` writer quotes only on the characters of the line ending; so a file with such a cell is
written with CRLF line endings (RFC 4180's), which quotes it, and every other file with LF.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def cell(value: Any) -> Any:
    """``value`` as a spreadsheet shows it, never as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def write_csv(frame: pd.DataFrame, path: str | Path) -> None:
    """``frame.to_csv(path, index=False)`` with every text cell and column name made safe."""
    text = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]  # bool is numeric to pandas
    safe = frame.assign(**{str(c): frame[c].astype(object).map(cell) for c in text})
    safe = safe.set_axis([cell(c) for c in frame.columns], axis=1)
    texts = [*frame.columns, *(v for c in text for v in frame[c])]
    ending = "\r\n" if any(isinstance(v, str) and "\r" in v for v in texts) else "\n"
    safe.to_csv(path, index=False, lineterminator=ending)
