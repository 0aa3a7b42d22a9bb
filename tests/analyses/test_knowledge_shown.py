"""Where the knowledge labels show beyond report.md's own table: the terminal, ``show`` and the failure-mode split,
on a hand-worked pair of a generative task whose misses are partly unanswered, and its log-likelihood twin."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from postforget_lmeval import pair, write_outputs
from postforget_lmeval.cli import main
from postforget_lmeval.cli.show import show_items
from postforget_lmeval.report.paper_table import rich_table
from tests.analyses.test_knowledge import MC, twin
from tests.helpers.lmeval_runs import pf_record, sample_line, write_run

# item:     012345
GEN = ("111100", "000011")  # 1->0: items 0-3; 0->1: items 4, 5
UNANSWERED_AFTER = {2, 3}  # after's replies to items 2, 3 give no answer: no_answer; 0, 1 a wrong option: wrong
TWIN = ("000010", "111000")  # after: 0, 1, 2 kept, 3 lost; before: 4 there before, 5 not


def _generative(bits: str, unanswered: set[int]) -> dict[str, list[str]]:
    lines = []
    for i, b in enumerate(bits):
        status = "no_answer" if i in unanswered else "answered"
        answer = None if i in unanswered else ("A" if b == "1" else "B")
        rec = pf_record("arc_easy", int(b), answer=answer, status=status)
        lines.append(sample_line(i, None, record=rec, response="I am not sure." if i in unanswered else "(B)"))
    return {"postforget_arc_easy": lines}


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shown")
    for side, unanswered in ((0, set()), (1, UNANSWERED_AFTER)):
        tasks = {**_generative(GEN[side], unanswered), **twin("arc_easy", TWIN[side], "Logic")}
        write_run(root / str(side), tasks, configs={"postforget_arc_easy_ll": MC})
    result = pair(root / "0", root / "1")
    write_outputs(result, root / "out", plot=False)
    return root / "out"


def test_failure_modes_split_by_knowledge(out: Path) -> None:
    table = pd.read_csv(out / "failure_modes.csv")
    counts = [c for c in table.columns if c.startswith("n_")]
    assert len(counts) == 2 + 12 + 12 and (table[counts].dtypes == "int64").all()  # written as 2, not 2.0
    row = table.iloc[0]
    assert (row["n_10_wrong"], row["n_10_no_answer"]) == (2, 2)
    assert (row["n_10_wrong_kept"], row["n_10_wrong_lost"]) == (2, 0)
    assert (row["n_10_no_answer_kept"], row["n_10_no_answer_lost"]) == (1, 1)
    assert row[[c for c in row.index if c.endswith(("_kept", "_lost"))]].sum() == 4  # every 1->0 has a twin


def test_report_md_failure_modes_say_which_knowledge(out: Path) -> None:
    md = (out / "report.md").read_text(encoding="utf-8")
    section = md.split("### Why were items forgotten?")[1].split("###")[0]
    assert "| 1→0 | 2 | 0 | 2 | 0 | 0 | 0 |" in section
    assert "| 1→0, knowledge kept | 2 | 0 | 1 | 0 | 0 | 0 |" in section
    assert "| 1→0, knowledge lost | 0 | 0 | 1 | 0 | 0 | 0 |" in section


def _terminal(result) -> list[str]:
    console = Console(width=100, record=True, emoji=False)
    console.print(rich_table(result))
    return console.export_text().splitlines()


def test_the_terminal_gives_the_knowledge_split(out: Path) -> None:
    root = out.parent
    lines = _terminal(pair(root / "0", root / "1"))
    assert all(len(line) <= 100 for line in lines)
    text = "\n".join(lines)
    assert "generated answers lost (1→0): 4; knowledge kept by the after model in 3 (75.0 [" in text
    assert "generated answers gained (0→1): 2; knowledge there before in 1 (50.0 [" in text


def test_the_terminal_says_none_where_nothing_flipped_that_way(tmp_path: Path) -> None:
    for side, (gen, bits) in enumerate((("00", "00"), ("01", "00"))):  # item 1: 0->1, knowledge not there before
        write_run(tmp_path / str(side), {**_generative(gen, set()), **twin("arc_easy", bits, "Logic")}, configs={})
    text = "\n".join(_terminal(pair(tmp_path / "0", tmp_path / "1")))
    assert "  generated answers lost (1→0): none\n" in text
    assert "generated answers gained (0→1): 1; knowledge there before in 0 (0.0 [" in text


def test_the_terminal_says_nothing_of_knowledge_without_twins(tmp_path: Path) -> None:
    for side in (0, 1):
        write_run(tmp_path / str(side), _generative(GEN[side], set()))
    assert "knowledge" not in "\n".join(_terminal(pair(tmp_path / "0", tmp_path / "1"))).lower()


def test_show_labels_each_flipped_item(out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items, _ = show_items(out, "arc_easy", "forgotten")
    assert [(it["doc_id"], it["knowledge"]) for it in items] == [(0, "kept"), (1, "kept"), (2, "kept"), (3, "lost")]
    gained, _ = show_items(out, "arc_easy", "gained")
    assert [it["knowledge"] for it in gained] == ["there before", "not there before"]
    assert main(["show", str(out), "--subtask", "arc_easy", "--transition", "forgotten"]) == 0
    printed = capsys.readouterr().out
    assert printed.count("knowledge kept: the after model still ranks the gold option first") == 3
    assert printed.count("knowledge lost: the after model no longer ranks the gold option first") == 1
