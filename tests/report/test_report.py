"""The paper-shaped table: ``F_true ± std (F_max)``, ``BT_true ± std (BT_max)``, accuracy in its own columns."""

from __future__ import annotations

import io
import math
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from postforget_lmeval import pair
from postforget_lmeval.cli import main
from postforget_lmeval.report import paper_table as report
from postforget_lmeval.report.files import write_outputs
from tests.helpers.lmeval_runs import ours, write_run


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ((0.18, 0.01, 0.7333), "18.0 ± 1.0 (73.3)"),
        ((0.18, math.nan, 0.7333), "18.0 (73.3)"),  # one seed: no std
        ((0.18, 0.01, math.nan), "18.0 ± 1.0"),  # k unknown: no ceiling
        ((math.nan, 0.01, 0.5), "–"),
    ],
)
def test_cell(args: tuple[float, float, float], text: str) -> None:
    assert report.cell(*args) == text


@pytest.fixture()
def worked(tmp_path: Path) -> Path:
    """The worked example of docs/method.md, k = 4, on two seeds with the same bits (std 0)."""
    for side, bits in (("before", "1111111100"), ("after", "1111110010")):
        for seed in (0, 1):
            write_run(tmp_path / side / f"s{seed}", ours("arc_easy", bits, category="Logic"), seed=seed)
    return tmp_path


def test_paper_table_puts_the_ceiling_in_parentheses(worked: Path) -> None:
    result = pair(worked / "before", worked / "after")
    table = report.paper_table(result)
    assert list(table.columns) == list(report.PAPER_COLUMNS)
    # F = 0.2, F_chance = 0.2 * 0.3 / 3 = 0.02, F_true = 0.18, F_max = (4 * 0.8 - 1) / 3; BT_true = 0.08, BT_max = 0.6
    assert table.values.tolist() == [
        ["Logic", "18.0 ± 0.0 (73.3)", "8.0 ± 0.0 (60.0)", "80.0", "70.0", 1, 2],
        ["Overall", "18.0 ± 0.0 (73.3)", "8.0 ± 0.0 (60.0)", "80.0", "70.0", 1, 2],
    ]


def test_table_in_markdown_csv_and_terminal(worked: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main([str(worked / "before"), str(worked / "after"), "-o", str(out), "-q"]) == 0
    csv = pd.read_csv(out / "paper_table.csv")
    assert csv.iloc[-1].tolist() == ["Overall", "18.0 ± 0.0 (73.3)", "8.0 ± 0.0 (60.0)", 80.0, 70.0, 1, 2]
    md = (out / "report.md").read_text()
    assert (
        "| Category | Forgetting F_true ± std (F_max) | Backward transfer BT_true ± std (BT_max) | acc before |" in md
    )
    assert "| Overall | 18.0 ± 0.0 (73.3) | 8.0 ± 0.0 (60.0) | 80.0 | 70.0 | 1 | 2 |" in md
    assert "| Logic | arc_easy | 10 | 4.00 | 2 | 6 | 2 | 1 | 1 |" in md  # the four transitions per sub-benchmark
    console = Console(file=io.StringIO(), width=240)
    console.print(report.rich_table(pair(worked / "before", worked / "after")))
    text = console.file.getvalue()
    assert "F_true ± std (F_max)" in text and "18.0 ± 0.0 (73.3)" in text and "8.0 ± 0.0 (60.0)" in text
    headline, analyses = [[c.strip() for c in line.split("│")] for line in text.splitlines() if "Overall" in line]
    assert headline[1:7] == ["Overall", "80.0 → 70.0", "18.0 ± 0.0 (73.3)", "8.0 ± 0.0 (60.0)", "2", "1"]
    # the analyses' table: no 1->0 item lost to format, and neither seed's 2-vs-1 flips is significant
    assert "F lost to format" in text and "significant rows" in text
    assert analyses[2] == "0.0" and analyses[3] == "0 of 2"
    # both seeds of each side logged the same answers: the floor says so instead of a bare 0
    assert analyses[4] == "0.0 (seeds agree)" and analyses[5] == "18.0" and analyses[6] == "8.0"


def test_chance_k_paper_uses_the_official_k(tmp_path: Path) -> None:
    """PIQA has 2 options; the paper's code used k = 4: chance 0.2*0.3/1 = 0.06 becomes 0.02."""
    for side, bits in (("before", "1111111100"), ("after", "1111110010")):
        write_run(tmp_path / side, ours("piqa_main", bits, k=2, category="Commonsense"), seed=0)
    item = pair(tmp_path / "before", tmp_path / "after")
    official = pair(tmp_path / "before", tmp_path / "after", chance_k="paper")
    assert item.subtasks["k"].tolist() == [2.0] and official.subtasks["k"].tolist() == [4.0]
    assert item.subtasks["F_true"].iloc[0] == pytest.approx(0.2 - 0.06)
    assert official.subtasks["F_true"].iloc[0] == pytest.approx(0.2 - 0.02)
    assert official.summary["options"]["chance_k"] == "paper"
    write_outputs(official, tmp_path / "out")
    assert "chance k: paper" in (tmp_path / "out" / "report.md").read_text()


def test_paper_pair_option_is_checked(worked: Path, tmp_path: Path) -> None:
    out = tmp_path / "named"
    argv = [str(worked / "before"), str(worked / "after"), "-o", str(out), "-q"]
    assert main([*argv, "--paper-pair", "s1.1 (7B)"]) == 0
    assert "## Beside the paper: s1.1 (7B)" in (out / "report.md").read_text()
    assert main([*argv, "--paper-pair", "s1.2 (7B)"]) == 1
