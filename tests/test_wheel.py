"""The built wheel carries the whole task suite, so --include_path works without the source tree."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from postforget_lmeval import task_dir
from postforget_lmeval.tasks.catalog import suite
from postforget_lmeval.tasks.generate import render
from tests.helpers import paths

ROOT = paths.ROOT
LM_EVAL = Path(sys.executable).with_name("lm-eval")


def _listed(include_path: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> set[str]:
    """Task names ``lm-eval ls tasks --include_path`` prints."""
    out = subprocess.run(
        [str(LM_EVAL), "ls", "tasks", "--include_path", include_path],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    ).stdout
    return {cell.strip() for line in out.splitlines() for cell in line.split("|")[1:2] if cell.strip()}


def _expected() -> set[str]:
    return {s.task for s in suite()} | {s.base_task for s in suite()} | {s.ll_task for s in suite() if s.has_ll_twin}


@pytest.mark.slow
def test_wheel_ships_every_task_file_and_lm_eval_lists_the_suite(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("postforget_lmeval-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {n.removeprefix("postforget_lmeval/task_configs/") for n in names if "/task_configs/" in n}
    assert set(render()) | {"utils.py"} <= shipped
    assert "postforget_lmeval/report/paper_figures.csv" in names
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt")))
    assert b"postforget-pair" in entry_points and b"postforget =" in entry_points

    # a plain install of that wheel, away from the source tree
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    installed = subprocess.run(
        [sys.executable, "-c", "import postforget_lmeval as p; print(p.task_dir())"],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    ).stdout.strip()
    assert Path(installed) == target / "postforget_lmeval" / "task_configs"
    listed = _listed(installed, env=env, cwd=tmp_path)
    assert len(suite()) == 94 and _expected() <= listed


@pytest.mark.slow
def test_the_source_install_lists_the_suite_from_the_top_level_folder() -> None:
    assert Path(task_dir()) == ROOT / "task_configs"
    assert _expected() <= _listed(task_dir())
