"""The output folder holds one pairing's complete set, or the previous set untouched: never stale files of an
earlier pairing, never a mix after Ctrl-C, kill -9 or a full disk, and nothing left beside it by a later run."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from postforget_lmeval import PairingError, pair, write_outputs
from postforget_lmeval.report import files
from tests.helpers.lmeval_runs import ours, write_run

ROOT = Path(__file__).resolve().parents[2]


def runs(tmp_path: Path) -> tuple[Path, Path]:
    b, a = tmp_path / "before", tmp_path / "after"
    write_run(b, ours("mmlu_x", "1100"), seed=1)
    write_run(a, ours("mmlu_x", "1010"), seed=1)
    return b, a


def contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def beside(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def test_a_new_pairing_leaves_no_file_of_an_earlier_one(tmp_path):
    b, a = runs(tmp_path)
    out = tmp_path / "out"
    first = write_outputs(pair(b, a), out, plot=False)
    extra = {p.name for p in first} - {"subtasks.csv", "categories.csv", "samples.parquet", "summary.json"}
    assert {"significance.csv", "report.html"} <= extra
    second = write_outputs(pair(b, a, analyses=False), out, plot=False)
    assert {p.name for p in second} < {p.name for p in first}  # the bare pairing writes fewer tables
    assert sorted(os.listdir(out)) == sorted([files.MARKER, *(p.name for p in second)])
    assert beside(out) == []


@pytest.mark.parametrize("fail_at", [1, 3, 5, 6])
def test_a_failed_write_leaves_the_previous_set_untouched(tmp_path, monkeypatch, fail_at):
    b, a = runs(tmp_path)
    out = tmp_path / "out"
    write_outputs(pair(b, a), out, plot=False)
    before = contents(out)
    real, calls = files.atomic_write, []

    def full_disk(path, write):
        calls.append(path)
        if len(calls) == fail_at:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, write)

    monkeypatch.setattr(files, "atomic_write", full_disk)
    with pytest.raises(OSError, match="No space"):
        write_outputs(pair(b, a, analyses=False), out, plot=False)
    assert contents(out) == before
    assert beside(out) == []


KILLER = """
import os, sys
from postforget_lmeval import pair, write_outputs
from postforget_lmeval.report import files
b, a, out, at = sys.argv[1:5]
real, calls = files.atomic_write, []
def killed(path, write):
    calls.append(path)
    if len(calls) == int(at):
        os._exit(9)  # as kill -9: no cleanup runs
    return real(path, write)
files.atomic_write = killed
write_outputs(pair(b, a, analyses=False), out, plot=False)
"""


def _run(script: str, *args: object) -> int:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script), *map(str, args)], env=env).returncode


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", [1, 4, 6])
def test_a_killed_pairing_leaves_the_previous_set_and_the_next_run_cleans_up(tmp_path, kill_at):
    b, a = runs(tmp_path)
    out = tmp_path / "out"
    write_outputs(pair(b, a), out, plot=False)
    before = contents(out)
    assert _run(KILLER, b, a, out, kill_at) == 9
    assert contents(out) == before
    assert len(beside(out)) == 1  # the half-written set of the killed run
    written = write_outputs(pair(b, a, analyses=False), out, plot=False)
    assert sorted(os.listdir(out)) == sorted([files.MARKER, *(p.name for p in written)])
    assert beside(out) == []


SWAP_CUT = """
import os, sys
from postforget_lmeval import pair, write_outputs
from postforget_lmeval.report import files
b, a, out = sys.argv[1:4]
files._exchange = lambda new, old: False  # a system without renameat2: two renames
real = os.rename
def rename(src, dst):
    real(src, dst)
    if ".old-" in str(dst):
        os._exit(9)  # killed between moving the old set aside and moving the new one in
files.os.rename = rename
write_outputs(pair(b, a, analyses=False), out, plot=False)
"""


@pytest.mark.slow
def test_a_run_killed_mid_swap_is_undone_by_the_next(tmp_path):
    b, a = runs(tmp_path)
    out = tmp_path / "out"
    write_outputs(pair(b, a), out, plot=False)
    before = contents(out)
    assert _run(SWAP_CUT, b, a, out) == 9
    assert not out.exists()
    files._leftovers(out)
    assert contents(out) == before
    assert beside(out) == []


def test_a_folder_of_other_files_is_not_replaced(tmp_path):
    b, a = runs(tmp_path)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(PairingError, match=r"holds files that no pairing wrote \(e.g. notes.txt\)"):
        write_outputs(pair(b, a), mine, plot=False)
    assert contents(mine) == {"notes.txt": b"keep me"}
    with pytest.raises(PairingError, match="current folder"):
        write_outputs(pair(b, a), "", plot=False)


def test_multi_leaves_no_pair_folder_of_an_earlier_run(tmp_path):
    from postforget_lmeval.report import many

    b, a = runs(tmp_path)
    out = tmp_path / "pairs"
    many.run_pairs([many.parse_pair(f"one={b},{a}"), many.parse_pair(f"two={a},{b}")], out, plot=False)
    assert (out / "two").is_dir()
    many.run_pairs([many.parse_pair(f"one={b},{a}")], out, plot=False)
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["one"]
    assert beside(out) == []
