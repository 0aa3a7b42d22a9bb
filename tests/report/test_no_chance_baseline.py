"""Ordinary generative tasks (no options to count, so no chance baseline): the category rows, report.md, pairs.md
and the chain table give raw F and BT with the reason and the fix (--k), not a bare dash."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from postforget_lmeval.cli import main
from tests.helpers.lmeval_runs import ordinary, write_run

WHY = "gen_task has no chance baseline"


def runs(tmp_path: Path) -> list[Path]:
    """Three stages of a generative task with exact_match: 1111100000 -> 1110010000 -> 1100011000."""
    dirs = []
    for name, bits in (("base", "1111100000"), ("sft", "1110010000"), ("rl", "1100011000")):
        write_run(tmp_path / name, ordinary("gen_task", bits, metric="exact_match"))
        dirs.append(tmp_path / name)
    return dirs


def test_report_md_gives_raw_f_and_bt_with_the_reason(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    base, sft, _ = runs(tmp_path)
    out = tmp_path / "out"
    assert main([str(base), str(sft), "-o", str(out), "--no-plot"]) == 0
    md = (out / "report.md").read_text()
    # F = 2/10 (items 3, 4 lost), BT = 1/10 (item 5 gained)
    assert "| Overall | raw 20.0 | raw 10.0 | 50.0 | 40.0 | 1 | 1 |" in md
    assert WHY in md and "give --k N" in md
    terminal = capsys.readouterr().out
    assert "raw 20.0" in terminal and WHY in terminal and "--k" in terminal
    assert pd.read_csv(out / "paper_table.csv").iloc[-1, 1] == "–"  # the CSV keeps the paper's figure: undefined


def test_pairs_md_and_the_chain_table_give_raw_f_and_bt_with_the_reason(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    out = tmp_path / "out"
    assert main(["chain", *map(str, runs(tmp_path)), "-o", str(out), "--no-plot"]) == 0
    md = (out / "pairs.md").read_text()
    # base→sft: F 20.0, sft→rl: F 10.0 (item 2), base→rl: F 30.0 (items 2, 3, 4)
    assert "| Overall | raw 20.0 | raw 10.0 | raw 30.0 |" in md
    assert WHY in md and WHY in (out / "pairs.html").read_text()
    terminal = capsys.readouterr().out
    assert "raw 30.0" in terminal and WHY in terminal
