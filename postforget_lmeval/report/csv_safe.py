"""CSV files that are safe to open in a spreadsheet.

Task, sub-benchmark and pair names, answers and golds come from files others wrote. A spreadsheet
runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return) as a formula,
so such a text cell is written with a leading ``'`` (OWASP's advice on CSV injection), as report.html
escapes markup. Numbers, and text that is a plain number (``-3``), are written as they are.
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
    text = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c]) and frame[c].dtype != bool]
    safe = frame.assign(**{str(c): frame[c].astype(object).map(cell) for c in text}) if text else frame
    safe = safe.set_axis([cell(c) for c in frame.columns], axis=1)
    safe.to_csv(path, index=False)
