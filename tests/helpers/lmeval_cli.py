"""The real ``lm_eval`` CLI with the HF backend on CPU, and the samples it logs, for the end-to-end tests."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def run_hf(
    model: Path,
    include_path: Path,
    tasks: list[str],
    out: Path,
    *,
    dtype: str,
    max_gen_toks: int,
    extra: Sequence[str] = (),
) -> None:
    """``lm_eval`` on ``model`` over ``tasks`` (found under ``include_path``), seed 7, samples logged under ``out``;
    ``extra``: more CLI options. Fails the test with lm_eval's stderr if it fails."""
    command = [
        sys.executable, "-m", "lm_eval", "--model", "hf", "--model_args", f"pretrained={model},dtype={dtype}",
        "--device", "cpu", "--include_path", str(include_path), "--tasks", ",".join(tasks),
        "--gen_kwargs", f"max_gen_toks={max_gen_toks}", "--seed", "7", "--log_samples", "--output_path", str(out),
        *extra,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=out.parent)
    assert done.returncode == 0, done.stderr[-4000:]


def logged_samples(run_dir: Path, twins: bool = False) -> dict[tuple[str, int], dict[str, Any]]:
    """(subtask, doc_id) -> the sample line of a postforget task, read straight from lm-eval's logs: the generative
    tasks' lines, or with ``twins`` their log-likelihood twins' (variant ``ll``), which share the keys."""
    found = {}
    for path in run_dir.rglob("samples_*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            sample = json.loads(line)
            if (sample["postforget"]["variant"] == "ll") == twins:
                found[(sample["postforget"]["subtask"], sample["doc_id"])] = sample
    return found
