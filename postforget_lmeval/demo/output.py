"""The demos' output folder: refused when it holds anything but an earlier demo, cleared of that demo's runs,
and marked with ``demo.json`` (``running`` until the demo ends, then its numbers and timings)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from postforget_lmeval.pairing.results import PairingError

MARKER = "demo.json"


def prepare(out: Path, runs: Sequence[str]) -> None:
    """Use ``out`` only if it is empty or an earlier demo's; its folders ``runs`` go (stale lm_eval runs would
    be paired with the new ones). Anything in a folder the demo did not make is refused, not deleted."""
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).exists())):
        raise RuntimeError(f"{out} exists and is not a postforget demo directory; choose another --out")
    for sub in runs:
        shutil.rmtree(out / sub, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text(json.dumps({"status": "running"}) + "\n")


def run_in(out: Path, runs: Sequence[str], console: Console, demo: Callable[[], dict[str, Any]]) -> int:
    """Prepare ``out``, run ``demo`` and write what it returns to ``demo.json``: 0, or 1 after one message for a
    failure the message explains (``RuntimeError``, :class:`PairingError`)."""
    try:
        prepare(out, runs)
        record = demo()
    except (RuntimeError, PairingError) as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}")
        return 1
    (out / MARKER).write_text(json.dumps(record, indent=2) + "\n")
    console.print(f"Everything is in {out} ({MARKER} has the numbers and timings).")
    return 0
