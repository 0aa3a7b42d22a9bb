"""Extraction sensitivity on a scripted pair whose responses the two policies read differently.

Every figure below is worked by hand from the responses (one seed, k = 4, chance baseline
(1 - acc_before)(1 - acc_after)/3).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from postforget_lmeval.cli import main as main_pair
from postforget_lmeval.pairing.results import PairingError, PairResult
from postforget_lmeval.report.sensitivity import compare, markdown, parse_policies, summarise
from postforget_lmeval.scoring.rescoring import rescore
from tests.helpers.lmeval_runs import sample_line, write_run

CAPITALS = ["Paris", "London", "Berlin", "Madrid"]  # gold C
LETTERS4 = ["w", "x", "y", "z"]  # gold A
# (subtask, category, options, gold, before responses, after responses, logged before, logged after)
SCRIPT = [
    (
        "mmlu_geo",
        "Knowledge/QA",
        CAPITALS,
        "C",
        # strict 1 1 1 0; lighteval 1, D (from "Done"), B (from "Berlin"), nothing
        ["Answer: C", "Answer: C\nDone.", "Answer: C) Berlin", "I cannot decide."],
        # strict 0 1 1 1; lighteval the same
        ["Answer: B", "Answer: C", "Answer: C", "Answer: C"],
        [1, 1, 0, 0],  # an older extractor missed item 2 before
        [0, 1, 1, 1],
    ),
    (
        "bbh_toy",
        "Logic",
        LETTERS4,
        "A",
        # strict 1 1; lighteval 1, D (from "Done")
        ["Answer: A", "Answer: (A)\n\nDone"],
        # strict: a hedge is no answer, then 1; lighteval A (first letter after the anchor), 1
        ["The answer is (A) or (D).", "Answer: A"],
        [1, 1],
        [0, 1],
    ),
]


def _side(root: Path, side: int) -> None:
    tasks = {}
    for subtask, category, options, gold, before, after, logged_before, logged_after in SCRIPT:
        responses, logged = (before, logged_before) if side == 0 else (after, logged_after)
        lines = []
        for i, (response, correct) in enumerate(zip(responses, logged, strict=True)):
            doc = {
                "pf_question": f"{subtask} {i}?",
                "pf_options": options,
                "pf_gold": gold,
                "pf_format": "letter",
                "pf_subtask": subtask,
                "pf_category": category,
            }
            read = rescore(response, options, gold, "letter", "strict")
            record = {
                "subtask": subtask,
                "benchmark": subtask.split("_")[0],
                "category": category,
                "variant": "chat",
                "k": 4.0,
                "n_options": 4,
                "answer": read.answer,
                "gold": gold,
                "status": read.status,
                "correct": correct,
            }
            lines.append(sample_line(i, None, doc=doc, record=record, response=response))
        tasks[f"postforget_{subtask}"] = lines
    write_run(root, tasks)


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("sensitivity")
    _side(root / "before", 0)
    _side(root / "after", 1)
    return root / "before", root / "after"


EXPECTED = pd.DataFrame(
    {
        "category": ["Knowledge/QA", "Logic", "OVERALL"],
        "F_true_logged": [0.25 - 0.5 * 0.25 / 3, 0.5, (0.25 - 0.5 * 0.25 / 3 + 0.5) / 2],
        "F_true_strict": [0.25 - 0.25 * 0.25 / 3, 0.5, (0.25 - 0.25 * 0.25 / 3 + 0.5) / 2],
        "F_true_lighteval": [0.25 - 0.75 * 0.25 / 3, 0.0, (0.25 - 0.75 * 0.25 / 3) / 2],
        "BT_true_logged": [0.5 - 0.5 * 0.25 / 3, 0.0, (0.5 - 0.5 * 0.25 / 3) / 2],
        "BT_true_strict": [0.25 - 0.25 * 0.25 / 3, 0.0, (0.25 - 0.25 * 0.25 / 3) / 2],
        "BT_true_lighteval": [0.75 - 0.75 * 0.25 / 3, 0.5, (0.75 - 0.75 * 0.25 / 3 + 0.5) / 2],
        "n_items": [4, 2, 6],
        "changed_strict_vs_logged": [1, 0, 1],
        "changed_lighteval_vs_logged": [1, 2, 3],
        "changed_strict_vs_lighteval": [2, 2, 4],
    }
)


def test_side_by_side_figures_and_changed_items(scripted: tuple[Path, Path]) -> None:
    sens = compare(*scripted, ["strict", "lighteval"], jobs=1, analyses=False)
    pd.testing.assert_frame_equal(sens.table, EXPECTED, check_dtype=False)
    assert sens.scored_by["strict"].startswith("strict/")
    assert sens.scored_by["lighteval"] == "lighteval-0.10/1"
    md = markdown(sens)
    assert "| OVERALL | 35.4 | 36.5 | 9.4 | 22.9 | 11.5 | 59.4 | 6 | 1 | 3 | 4 |" in md


def test_cli_comma_list_writes_the_comparison(scripted: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    code = main_pair(
        [
            str(scripted[0]),
            str(scripted[1]),
            "-o",
            str(out),
            "--rescore",
            "strict,lighteval",
            "--no-plot",
            "-q",
            "--jobs",
            "1",
        ]
    )
    assert code == 0
    table = pd.read_csv(out / "sensitivity.csv")
    assert table["changed_strict_vs_lighteval"].tolist() == [2, 2, 4]
    assert "# Extraction sensitivity" in (out / "sensitivity.md").read_text(encoding="utf-8")
    samples = pd.read_parquet(out / "lighteval" / "samples.parquet")
    assert {"correct_logged_before", "correct_logged_after"} <= set(samples.columns)
    # each scoring's own pairing, counted from SCRIPT: (n_11, n_10, n_01, n_00) per sub-benchmark
    for policy, geo, toy in (("logged", (1, 1, 2, 0), (1, 1, 0, 0)), ("strict", (2, 1, 1, 0), (1, 1, 0, 0))):
        sub = pd.read_csv(out / policy / "subtasks.csv").set_index("subtask")[["n_11", "n_10", "n_01", "n_00"]]
        assert tuple(sub.loc["mmlu_geo"]) == geo and tuple(sub.loc["bbh_toy"]) == toy, policy


def test_cli_comparison_keeps_the_other_pairing_options(scripted: tuple[Path, Path], tmp_path: Path) -> None:
    """--chance-k and --no-analyses reach every scoring's pairing, as they reach a single pairing."""
    out = tmp_path / "out"
    code = main_pair(
        [
            str(scripted[0]),
            str(scripted[1]),
            "-o",
            str(out),
            "--rescore",
            "strict,lighteval",
            "--chance-k",
            "paper",
            "--no-analyses",
            "--no-plot",
            "-q",
            "--jobs",
            "1",
        ]
    )
    assert code == 0
    for scoring in ("logged", "strict", "lighteval"):
        options = json.loads((out / scoring / "summary.json").read_text(encoding="utf-8"))["options"]
        assert options["chance_k"] == "paper"
        assert "significant" not in pd.read_csv(out / scoring / "subtasks.csv").columns


def test_policy_lists_are_checked() -> None:
    assert parse_policies(" lighteval , strict") == ["lighteval", "strict"]
    with pytest.raises(PairingError, match="unknown policy lenient; give one or more of strict, lighteval"):
        parse_policies("strict,lenient")
    with pytest.raises(PairingError, match="named twice"):
        parse_policies("strict,strict")


def _constructed(before: list[int], after: list[int], logged: tuple[list[int], list[int]] | None) -> PairResult:
    samples = pd.DataFrame(
        {
            "subtask": ["s", "s", "m"],
            "category": pd.Categorical(["Logic", "Logic", "Math"]),
            "doc_id": [0, 1, 0],
            "seed": 0,
            "replicate": 0,
            "before": before,
            "after": after,
        }
    )
    if logged:
        samples["correct_logged_before"], samples["correct_logged_after"] = logged
    categories = pd.DataFrame(
        {
            "category": ["Logic", "Math", "OVERALL", "Logic"],
            "average": ["macro"] * 3 + ["micro"],
            "F_true_mean": [0.1, 0.2, 0.15, 9.0],
            "BT_true_mean": [0.3, 0.4, 0.35, 9.0],
        }
    )
    return PairResult(pd.DataFrame({"scored_by": ["x/1"]}), categories, samples, pd.DataFrame(), {})


def test_summarise_counts_changes_on_either_side() -> None:
    logged = ([1, 0, 1], [1, 1, 0])
    sens = summarise(
        {
            "logged": _constructed(*logged, None),
            "strict": _constructed([1, 1, 1], [1, 1, 0], logged),  # item 1 before changed
            "lighteval": _constructed([0, 1, 1], [1, 1, 1], logged),  # item 0 before, 1 before, Math after
        }
    )
    table = sens.table.set_index("category")
    assert table.index.tolist() == ["Logic", "Math", "OVERALL"]
    assert table["F_true_strict"].tolist() == [0.1, 0.2, 0.15]  # macro rows only
    assert table["n_items"].tolist() == [2, 1, 3]
    assert table["changed_strict_vs_logged"].tolist() == [1, 0, 1]
    assert table["changed_lighteval_vs_logged"].tolist() == [2, 1, 3]
    assert table["changed_strict_vs_lighteval"].tolist() == [1, 1, 2]
