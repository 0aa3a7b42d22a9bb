"""Writing one :class:`PairResult` to its output directory.

A whole output set is written into a new folder beside the output folder and swapped into its place
in one step (:func:`output_folder`): after Ctrl-C, kill -9 or a full disk the output folder holds the
previous set untouched, and a new set never sits beside files of an older one (stale drift tables,
an older report.html). The next run removes what an interrupted one left beside it.
The renderers (report.md, report.html, forgetting.png) live in :mod:`postforget_lmeval.report.html`.
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import re
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from postforget_lmeval.errors import PairingError
from postforget_lmeval.pairing.results import SUBTASK_COLUMNS, PairResult
from postforget_lmeval.report import html as report_html
from postforget_lmeval.report.csv_safe import write_csv

MARKER = ".postforget-output"
"""Written into every output folder: a folder holding it may be replaced whole by the next run."""
OWN_FILES = (MARKER, "summary.json", "subtasks.csv", "samples.parquet", "pairs.csv", "sensitivity.csv", "curve.csv")
"""A folder holding one of these was written by a pairing (earlier versions wrote no marker, and an
interrupted one may lack summary.json)."""
_RENAME_EXCHANGE = 2  # Linux renameat2 flag: swap two paths in one step
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap folders ``a`` and ``b`` in one step (Linux ``renameat2``); False where the system cannot."""
    try:
        renameat2 = ctypes.CDLL(None).renameat2
    except (OSError, AttributeError, TypeError):
        return False
    return renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _leftovers(out: Path) -> None:
    """Undo what an interrupted run left beside ``out``: a previous set moved aside comes back when
    ``out`` is missing, half-written sets go. Folders of a run still going are left alone."""
    pattern = re.compile(rf"^\.{re.escape(out.name)}\.(new|old)-(\d+)$")
    for entry in sorted(out.parent.iterdir()):  # output_folder made the parent
        m = pattern.match(entry.name)
        if not m or int(m[2]) == os.getpid() or _alive(int(m[2])):
            continue
        if m[1] == "old" and not out.exists():
            os.rename(entry, out)
        else:
            shutil.rmtree(entry, ignore_errors=True)


def _check_ours(out: Path) -> None:
    """Refuse to replace a folder of other files: a wrong ``-o`` must not delete them."""
    if out.exists() and not out.is_dir():
        raise PairingError(f"output folder {out} exists and is not a folder: give a new or empty folder with -o")
    if out.is_dir() and not any((out / name).exists() for name in OWN_FILES):
        first = next(iter(sorted(out.iterdir())), None)
        if first is not None:
            raise PairingError(
                f"output folder {out} holds files that no pairing wrote (e.g. {first.name}); each run replaces "
                "its output folder whole: give a new or empty folder with -o"
            )


@contextmanager
def output_folder(out_dir: str | os.PathLike[str]) -> Iterator[Path]:
    """A new folder to write a whole output set into; when the block ends it takes ``out_dir``'s place
    in one step (the previous set is removed), when the block fails it is removed."""
    out = Path(out_dir)
    out = out.resolve() if out.is_symlink() else out
    if not out.name or out.absolute() == Path.cwd():
        raise PairingError(f"output folder {str(out_dir)!r} is the current folder: name a folder of its own with -o")
    _check_ours(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    _leftovers(out)
    new = out.with_name(f".{out.name}.new-{os.getpid()}")
    shutil.rmtree(new, ignore_errors=True)
    new.mkdir()
    try:
        (new / MARKER).write_text("written by postforget-lmeval: the next run replaces this folder whole\n")
        yield new
        if not out.exists():
            os.rename(new, out)
        elif not _exchange(new, out):  # two steps: a run cut between them is undone by _leftovers
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            os.rename(out, old)
            os.rename(new, out)
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(new, ignore_errors=True)


def moved(paths: Sequence[Path], new: Path, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Where ``paths`` written under ``new`` are once :func:`output_folder` has put it in place."""
    return [Path(out_dir) / p.relative_to(new) for p in paths]


def atomic_write(path: Path, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` on a temporary name beside ``path`` and move it into place."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _plain(value: Any) -> Any:
    """``value`` as strict JSON values: numpy scalars and arrays as their Python twins, paths as text, and a NaN or
    infinite float as null (Python's json would write it bare, which jq and JavaScript refuse)."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, (np.integer, np.bool_)):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    return value


def _unknown(value: Any) -> Any:
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def write_outputs(result: PairResult, out_dir: str | os.PathLike[str], plot: bool = True) -> list[Path]:
    """Every output of one pairing, as one set in ``out_dir`` (see :func:`output_folder`); returns the
    paths written."""
    with output_folder(out_dir) as new:
        written = _write_set(result, new, plot)
    return moved(written, new, out_dir)


def _write_set(result: PairResult, out: Path, plot: bool) -> list[Path]:
    """subtasks.csv, categories.csv, samples.parquet, agreement.csv, one <name>.csv per extra table,
    summary.json, report.md and forgetting.png (``plot``) in the new folder ``out``."""
    sub = result.subtasks[[*SUBTASK_COLUMNS, *(c for c in result.subtasks.columns if c not in SUBTASK_COLUMNS)]]
    written = [
        atomic_write(out / "subtasks.csv", lambda p: write_csv(sub, p)),
        atomic_write(out / "categories.csv", lambda p: write_csv(result.categories, p)),
        atomic_write(out / "samples.parquet", lambda p: result.samples.to_parquet(p, index=False)),
    ]
    if not result.agreement.empty:
        written.append(atomic_write(out / "agreement.csv", lambda p: write_csv(result.agreement, p)))
    for name, table in result.tables.items():
        written.append(atomic_write(out / f"{name}.csv", lambda p, t=table: write_csv(t, p)))
    text = json.dumps(_plain(result.summary), indent=2, default=_unknown, ensure_ascii=False, allow_nan=False)
    written.append(atomic_write(out / "summary.json", lambda p: p.write_text(text + "\n", encoding="utf-8")))
    for name, write in report_html.renderers(result, plot=plot).items():
        written.append(atomic_write(out / name, write))
    return written
