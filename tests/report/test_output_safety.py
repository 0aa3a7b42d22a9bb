"""Output safety beyond one run: a run never deletes the working folder of another run still going, and a CSV
cell or column name a spreadsheet would run (one led by a tab or carriage return too) is written quoted, a
carriage return inside a cell kept in its cell."""

from __future__ import annotations

import csv
import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd

from postforget_lmeval import pair, write_outputs
from postforget_lmeval.report import files, many
from postforget_lmeval.report.csv_safe import cell, write_csv
from tests.helpers.lmeval_runs import ours, write_run


def runs(tmp_path: Path) -> tuple[Path, Path]:
    b, a = tmp_path / "before", tmp_path / "after"
    write_run(b, ours("mmlu_x", "1100"), seed=1)
    write_run(a, ours("mmlu_x", "1010"), seed=1)
    return b, a


def test_a_second_run_leaves_a_running_one_s_working_folder(tmp_path: Path) -> None:
    b, a = runs(tmp_path)
    out = tmp_path / "out"
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        working = tmp_path / f".out.new-{other.pid}"  # what a concurrent run of process `other` writes into
        working.mkdir()
        (working / "subtasks.csv").write_text("half written", encoding="utf-8")
        write_outputs(pair(b, a, analyses=False), out, plot=False)
        assert (working / "subtasks.csv").read_text(encoding="utf-8") == "half written"
    finally:
        other.kill()
        other.wait()
    assert other.returncode == -signal.SIGKILL  # ended here: the run only asked whether it was alive
    write_outputs(pair(b, a, analyses=False), out, plot=False)  # once it is gone, its leftovers are
    assert not working.exists()


def test_the_working_folder_of_another_user_s_run_is_left(tmp_path: Path, monkeypatch) -> None:
    """A process of another user may not be signalled: os.kill answers EPERM, and that run counts as going."""
    done = subprocess.Popen([sys.executable, "-c", ""])
    done.wait()
    working = tmp_path / f".out.new-{done.pid}"
    working.mkdir()
    real = os.kill

    def kill(pid: int, sig: int) -> None:
        if pid == done.pid:
            raise PermissionError(errno.EPERM, "Operation not permitted")
        real(pid, sig)

    monkeypatch.setattr(os, "kill", kill)
    files._leftovers(tmp_path / "out")
    assert working.is_dir()
    monkeypatch.setattr(os, "kill", real)
    files._leftovers(tmp_path / "out")  # the same folder of a finished run of one's own goes
    assert not working.exists()


def test_cells_led_by_a_tab_or_carriage_return_are_quoted() -> None:
    assert cell("\t=1+1") == "'\t=1+1"
    assert cell("\rcmd") == "'\rcmd"
    assert cell("\t") == "'\t"
    assert cell("-3") == "-3" and cell("+1.5e3") == "+1.5e3"  # plain numbers stay numbers
    assert cell("a\tb") == "a\tb"  # only a leading one


def test_column_names_are_quoted_and_others_kept(tmp_path: Path) -> None:
    frame = pd.DataFrame({"=HYPERLINK(1)": ["x"], "\tpair": [1], "sft→rl": [2.5], "-1": ["@SUM"]})
    write_csv(frame, tmp_path / "t.csv")
    with open(tmp_path / "t.csv", newline="", encoding="utf-8") as f:
        header, row = list(csv.reader(f))
    assert header == ["'=HYPERLINK(1)", "'\tpair", "sft→rl", "-1"]
    assert row == ["x", "1", "2.5", "'@SUM"]
    assert (tmp_path / "t.csv").read_bytes().endswith(b"@SUM\n")


def test_a_carriage_return_in_a_cell_stays_in_its_cell(tmp_path: Path) -> None:
    write_csv(pd.DataFrame({"answer": ["\rB", "A\rB"], "n": [1, 2]}), tmp_path / "t.csv")
    with open(tmp_path / "t.csv", newline="", encoding="utf-8") as f:
        assert list(csv.reader(f)) == [["answer", "n"], ["'\rB", "1"], ["A\rB", "2"]]
    assert pd.read_csv(tmp_path / "t.csv")["n"].tolist() == [1, 2]


def test_multi_pair_labels_are_quoted_as_column_names(tmp_path: Path) -> None:
    b, a = runs(tmp_path)
    out = tmp_path / "pairs"
    labels = ["=cmd|x", "\rsft", "rl"]
    many.run_pairs([many.PairSpec(label, str(b), str(a)) for label in labels], out, plot=False)
    with open(out / "pairs.csv", newline="", encoding="utf-8") as f:
        header = next(csv.reader(f))
    assert header == ["metric", "category", "'=cmd|x", "'\rsft", "rl"]
    long = pd.read_csv(out / "pairs_long.csv", keep_default_na=False)
    assert list(dict.fromkeys(long["pair"])) == ["'=cmd|x", "'\rsft", "rl"]
