"""Writing one :class:`PairResult` to its output directory.

Every file is written to a temporary name in the output directory and moved into place with
``os.replace``, so an interrupted run never leaves a half-written file that looks complete.
The renderers (report.md, report.html, forgetting.png) live in :mod:`postforget_lmeval.report.html`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from postforget_lmeval.pairing.results import SUBTASK_COLUMNS, PairResult
from postforget_lmeval.report import html as report_html


def atomic_write(path: Path, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` on a temporary name beside ``path`` and move it into place."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return None if math.isnan(value) else float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def write_outputs(result: PairResult, out_dir: str | os.PathLike[str], plot: bool = True) -> list[Path]:
    """subtasks.csv, categories.csv, samples.parquet, agreement.csv, one <name>.csv per extra table,
    summary.json, report.md and forgetting.png (``plot``); returns the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sub = result.subtasks[[*SUBTASK_COLUMNS, *(c for c in result.subtasks.columns if c not in SUBTASK_COLUMNS)]]
    written = [
        atomic_write(out / "subtasks.csv", lambda p: sub.to_csv(p, index=False)),
        atomic_write(out / "categories.csv", lambda p: result.categories.to_csv(p, index=False)),
        atomic_write(out / "samples.parquet", lambda p: result.samples.to_parquet(p, index=False)),
    ]
    if not result.agreement.empty:
        written.append(atomic_write(out / "agreement.csv", lambda p: result.agreement.to_csv(p, index=False)))
    for name, table in result.tables.items():
        written.append(atomic_write(out / f"{name}.csv", lambda p, t=table: t.to_csv(p, index=False)))
    text = json.dumps(result.summary, indent=2, default=_json_default, ensure_ascii=False)
    written.append(atomic_write(out / "summary.json", lambda p: p.write_text(text + "\n", encoding="utf-8")))
    for name, write in report_html.renderers(result, plot=plot).items():
        written.append(atomic_write(out / name, write))
    return written
