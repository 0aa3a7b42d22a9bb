"""The shared-seed flag: when the headline pairs runs that drew from the same sampling seed on both sides, every
output says that the beyond-noise figures are biased by correlated guesses, and what to do instead."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
from rich.console import Console

from postforget_lmeval import pair
from postforget_lmeval.analyses import _noise as noise
from postforget_lmeval.cli import main
from postforget_lmeval.report.paper_table import rich_table
from tests.helpers.lmeval_runs import ours, write_run

BEFORE = ["1111111100", "1111100110"]
AFTER = ["1111110010", "1111110011"]  # both sides sample: their seeds disagree on some item


def _runs(root: Path, seeds: dict[str, list[int]]) -> None:
    for side, bits in (("before", BEFORE), ("after", AFTER)):
        for seed, b in zip(seeds[side], bits):
            write_run(root / side / f"s{seed}", ours("arc_easy", b, category="Logic"), seed=seed)


def test_every_output_flags_a_shared_seed(tmp_path: Path, capsys) -> None:
    _runs(tmp_path, {"before": [0, 1], "after": [0, 1]})
    out = tmp_path / "out"
    assert main([str(tmp_path / "before"), str(tmp_path / "after"), "-o", str(out), "--no-plot"]) == 0
    captured = capsys.readouterr()
    assert "noise floor:" in captured.err and "--seed-match order" in captured.err
    assert "different seeds" in captured.err
    md = (out / "report.md").read_text()
    assert f"**⚠ arc_easy seed 0, arc_easy seed 1: {noise.SHARED}**" in md and "] ⚠ shared seed |" in md
    html = (out / "report.html").read_text()
    assert "<p><strong>⚠ arc_easy seed 0, arc_easy seed 1: shared sampling seed" in html
    flag = json.loads((out / "summary.json").read_text())["analyses"]["noise_floor"]["shared_seed"]
    assert flag["flagged"] and flag["rows"] == ["arc_easy seed 0", "arc_easy seed 1"]
    assert flag["warning"] == noise.SHARED
    subtasks = pd.read_csv(out / "subtasks.csv", keep_default_na=False)
    assert subtasks["noise_shared_seed"].tolist() == [True, True]
    assert all(noise.SHARED in note for note in subtasks["noise_note"])
    overall = pd.read_csv(out / "categories.csv", keep_default_na=False).query("category == 'OVERALL'").iloc[0]
    assert noise.SHARED in overall["noise_note"]
    console = Console(file=io.StringIO(), width=400)
    console.print(rich_table(pair(tmp_path / "before", tmp_path / "after")))
    assert "(shared seed!)" in console.file.getvalue()


def test_different_seeds_per_side_raise_no_flag(tmp_path: Path, capsys) -> None:
    _runs(tmp_path, {"before": [0, 1], "after": [2, 3]})
    out = tmp_path / "out"
    code = main([str(tmp_path / "before"), str(tmp_path / "after"), "-o", str(out), "--no-plot", "-q"])
    assert code == 0
    assert "noise floor:" not in capsys.readouterr().err
    md = (out / "report.md").read_text()
    assert "**⚠" not in md and "] ⚠ shared seed" not in md
    assert "<strong>⚠" not in (out / "report.html").read_text()
    flag = json.loads((out / "summary.json").read_text())["analyses"]["noise_floor"]["shared_seed"]
    assert flag == {"flagged": False, "rows": []}
    subtasks = pd.read_csv(out / "subtasks.csv", keep_default_na=False)
    assert subtasks["noise_shared_seed"].tolist() == [False, False]
    assert subtasks["noise_floor_from"].tolist() == ["pooled", "pooled"]
