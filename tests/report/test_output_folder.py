"""The output folder holds one pairing's complete set, or the previous set untouched: never stale files of an
earlier pairing, never a mix after Ctrl-C, kill -9 or a full disk, and nothing left beside it by a later run."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from postforget_lmeval import PairingError, pair, write_outputs
from postforget_lmeval.pairing import SUBTASK_COLUMNS
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


def test_the_set_holds_the_result_s_tables_as_they_are(tmp_path):
    """subtasks.csv has each column once, samples.parquet only the samples' columns (no index column), and
    without a plot no forgetting.png."""
    b, a = runs(tmp_path)
    result = pair(b, a)
    written = write_outputs(result, tmp_path / "out", plot=False)
    header = (tmp_path / "out" / "subtasks.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header == ",".join(result.subtasks.columns) and len(result.subtasks.columns) > len(SUBTASK_COLUMNS)
    assert pq.read_schema(tmp_path / "out" / "samples.parquet").names == list(result.samples.columns)
    assert "forgetting.png" not in {p.name for p in written} | set(os.listdir(tmp_path / "out"))


def test_values_a_caller_adds_to_the_summary_are_written_as_plain_json(tmp_path):
    """numpy scalars and arrays and paths a caller of the API puts into ``summary`` are written as JSON values,
    and every NaN or infinity (Python, numpy, inside lists and arrays) as null, so strict readers (jq, JavaScript)
    load the file; anything else is named."""
    b, a = runs(tmp_path)
    result = pair(b, a, analyses=False)
    result.summary["mine"] = {
        "n": np.int64(3), "share": np.float32(0.25), "none": np.float32("nan"), "flag": np.bool_(True),
        "path": Path("runs/base"), "array": np.array([1, 2]), "nan": float("nan"), "inf": np.float64("inf"),
        "nested": [(0.5, float("-inf"))], "float_array": np.array([np.nan, 2.0]),
    }  # fmt: skip
    write_outputs(result, tmp_path / "out", plot=False)

    def refuse(constant: str) -> None:
        raise AssertionError(f"summary.json holds a bare {constant}")

    text = (tmp_path / "out" / "summary.json").read_text(encoding="utf-8")
    mine = json.loads(text, parse_constant=refuse)["mine"]
    assert mine == {
        "n": 3, "share": 0.25, "none": None, "flag": True, "path": "runs/base", "array": [1, 2], "nan": None,
        "inf": None, "nested": [[0.5, None]], "float_array": [None, 2.0],
    }  # fmt: skip
    assert type(mine["n"]) is int and type(mine["flag"]) is bool
    result.summary["mine"] = object()
    with pytest.raises(TypeError, match="^not JSON serialisable: object$"):
        write_outputs(result, tmp_path / "out", plot=False)


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
    result = pair(b, a, analyses=False)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    to_do = "each run replaces its output folder whole: give a new or empty folder with -o"
    with pytest.raises(PairingError, match=rf"holds files that no pairing wrote \(e.g. notes.txt\); {to_do}$"):
        write_outputs(result, mine, plot=False)
    assert contents(mine) == {"notes.txt": b"keep me"}
    with pytest.raises(PairingError, match="notes.txt exists and is not a folder: give a new or empty folder with -o$"):
        write_outputs(result, mine / "notes.txt", plot=False)
    assert contents(mine) == {"notes.txt": b"keep me"}
    with pytest.raises(PairingError, match="current folder"):
        write_outputs(result, "", plot=False)


def test_an_empty_folder_is_taken(tmp_path):
    b, a = runs(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    written = write_outputs(pair(b, a, analyses=False), empty, plot=False)
    assert sorted(os.listdir(empty)) == sorted([files.MARKER, *(p.name for p in written)])


@pytest.mark.skipif(sys.platform != "linux", reason="renameat2 is Linux's")
def test_two_folders_are_swapped_in_one_step(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # relative names, as `-o out` gives them
    for name in ("a", "b"):
        Path(name).mkdir()
        (Path(name) / f"{name}.txt").write_text(name, encoding="utf-8")
    assert files._exchange(Path("a"), Path("b")) is True
    assert contents(Path("a")) == {"b.txt": b"b"} and contents(Path("b")) == {"a.txt": b"a"}


def test_without_renameat2_the_new_set_still_replaces_the_old(tmp_path, monkeypatch):
    monkeypatch.setattr(files.ctypes, "CDLL", lambda *args, **kwargs: object())  # a C library without it (macOS)
    b, a = runs(tmp_path)
    out = tmp_path / "out"
    write_outputs(pair(b, a), out, plot=False)
    second = write_outputs(pair(b, a, analyses=False), out, plot=False)
    assert sorted(os.listdir(out)) == sorted([files.MARKER, *(p.name for p in second)])
    assert beside(out) == []


def finished_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", ""])
    done.wait()
    return done.pid


@pytest.mark.parametrize("swapped", [False, True])
def test_what_a_run_killed_mid_swap_left_is_undone(tmp_path, swapped):
    """Killed between its two renames (the previous set moved aside, ``out`` missing) or after them (the
    previous set not yet removed): the set that was complete in ``out`` last is in ``out``, nothing beside it."""
    out, pid = tmp_path / "out", finished_pid()
    previous, new = tmp_path / f".out.old-{pid}", out if swapped else tmp_path / f".out.new-{pid}"
    for folder, text in ((previous, "previous"), (new, "new")):
        folder.mkdir()
        (folder / "summary.json").write_text(text, encoding="utf-8")
    files._leftovers(out)
    assert contents(out) == {"summary.json": b"new" if swapped else b"previous"}
    assert beside(out) == []


def test_only_the_leftovers_of_this_output_folder_go(tmp_path):
    pid = finished_pid()
    another, this = tmp_path / f".another.new-{pid}", tmp_path / f".out.new-{pid}"
    another.mkdir()
    this.mkdir()
    files._leftovers(tmp_path / "out")
    assert another.is_dir() and not this.exists()  # the run writing `another` cleans its own


def test_a_leftover_another_run_removed_first_is_no_error(tmp_path, monkeypatch):
    """Two runs starting at once both list a finished run's leftover; the second finds it gone."""
    leftover = tmp_path / f".out.new-{finished_pid()}"
    leftover.mkdir()

    def removed_meanwhile(pid: int) -> bool:
        shutil.rmtree(leftover)
        return False

    monkeypatch.setattr(files, "_alive", removed_meanwhile)
    files._leftovers(tmp_path / "out")
    assert beside(tmp_path / "out") == []


def test_multi_leaves_no_pair_folder_of_an_earlier_run(tmp_path):
    from postforget_lmeval.report import many

    b, a = runs(tmp_path)
    out = tmp_path / "pairs"
    many.run_pairs([many.parse_pair(f"one={b},{a}"), many.parse_pair(f"two={a},{b}")], out, plot=False)
    assert (out / "two").is_dir()
    many.run_pairs([many.parse_pair(f"one={b},{a}")], out, plot=False)
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["one"]
    assert beside(out) == []
