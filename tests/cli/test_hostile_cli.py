"""Careless or hostile command lines and names: outputs stay inside -o, CSV cells never run as formulas,
Ctrl-C is one line and exit 130."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from postforget_lmeval.cli import main
from postforget_lmeval.report import many
from tests.helpers.lmeval_runs import ordinary, ours, write_run


def runs(tmp_path: Path) -> tuple[Path, Path]:
    b, a = tmp_path / "before", tmp_path / "after"
    write_run(b, ours("mmlu_x", "1100"), seed=1)
    write_run(a, ours("mmlu_x", "1010"), seed=1)
    return b, a


@pytest.mark.parametrize("name", ["..", ".", ".hidden", "../../up"])
def test_multi_pair_names_stay_inside_their_output_folder(tmp_path, capsys, name):
    b, a = runs(tmp_path)
    out = tmp_path / "deep" / "out"
    assert main(["multi", "--pair", f"{name}={b},{a}", "-o", str(out), "-q", "--no-plot"]) == 0
    folders = [p for p in out.iterdir() if p.is_dir()]
    assert len(folders) == 1 and not folders[0].name.startswith(".")
    assert (folders[0] / "subtasks.csv").is_file()
    assert sorted(p.name for p in (tmp_path / "deep").iterdir()) == ["out"]  # nothing written beside -o


def test_dot_and_dot_dot_pairs_get_folders_of_their_own(tmp_path):
    specs = [many.parse_pair("..=b,a"), many.parse_pair(".=b,a")]
    assert [s.directory for s in specs] == ["pair", "pair"]  # the same folder: run_pairs refuses, naming it


@pytest.mark.parametrize("argv", [["multi", "--pair", "x=b,a"], ["chain", "b", "a"], ["b", "a"]])
def test_an_empty_output_name_is_a_usage_error(tmp_path, capsys, argv, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        main([*argv, "-o", ""])
    assert e.value.code == 2
    assert "name the output folder" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_dot_as_output_is_refused_before_anything_is_replaced(tmp_path, capsys, monkeypatch):
    b, a = runs(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main([str(b), str(a), "-o", ".", "-q", "--no-plot"]) == 1
    assert "current folder" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["after", "before"]


def runs_as_formula(text: str) -> bool:
    if text.startswith(("=", "+", "@")):
        return True
    try:
        float(text)
    except ValueError:
        return text.startswith("-")
    return False


def test_csv_cells_that_a_spreadsheet_would_run_are_escaped(tmp_path):
    b, a = tmp_path / "before", tmp_path / "after"
    hostile = {"=HYPERLINK(1)": "10", "+cmd": "01", "-2+3": "11", "@SUM": "00"}
    for task, bits in hostile.items():
        write_run(b, ordinary(task, bits[0] * 2), seed=1, model_dir=f"m{len(bits)}{ord(task[0])}")
        write_run(a, ordinary(task, bits[1] * 2), seed=1, model_dir=f"m{len(bits)}{ord(task[0])}")
    out = tmp_path / "out"
    assert main([str(b), str(a), "-o", str(out), "-q", "--no-plot", "--no-analyses"]) == 0
    with open(out / "subtasks.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["subtask"] for r in rows) == ["'+cmd", "'-2+3", "'=HYPERLINK(1)", "'@SUM"]
    assert {r["n"] for r in rows} == {"2"}  # numbers as they are
    for path in out.glob("*.csv"):
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.reader(f):
                assert not any(runs_as_formula(c) for c in row), (path.name, row)


def test_ctrl_c_is_one_line_and_exit_130(tmp_path, capsys, monkeypatch):
    b, a = runs(tmp_path)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    from postforget_lmeval.cli import pair as pair_command

    monkeypatch.setattr(pair_command, "pair", interrupted)
    assert main([str(b), str(a), "-o", str(tmp_path / "out"), "-q"]) == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "interrupted" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
