"""The release gate: rules read the macro rows of categories.csv, a rule that holds fails the gate, exit 3."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from postforget_lmeval import PairingError
from postforget_lmeval.cli import main
from postforget_lmeval.report import gate
from tests.helpers.lmeval_runs import ours, write_run
from tests.helpers.paths import REFERENCE


def _categories() -> pd.DataFrame:
    """Two categories and OVERALL (macro), and a micro row that the gate must not read."""
    return pd.DataFrame(
        {
            "category": ["STEM", "humanities", "OVERALL", "OVERALL"],
            "average": ["macro", "macro", "macro", "micro"],
            "F_true_mean": [0.05, 0.01, 0.03, 0.50],
            "F_true_lo": [0.03, 0.0, 0.015, 0.40],
            "F_true_hi": [0.07, 0.02, 0.045, 0.60],
            "BT_true_mean": [0.02, math.nan, 0.02, 0.0],
            "median_chars_before_mean": [300.0, 200.0, 250.0, 250.0],
        }
    )


def _failed(verdict: dict) -> list[tuple[str, str]]:
    return [(c["rule"], c["category"]) for c in verdict["checks"] if c["failed"]]


def test_a_rule_reads_overall_by_default_in_percentage_points():
    verdict = gate.evaluate([gate.parse_rule("F_true > 2.9")], _categories())
    assert verdict["passed"] is False
    (check,) = verdict["checks"]
    assert (check["category"], check["column"]) == ("OVERALL", "F_true_mean")
    assert (check["value"], check["threshold"]) == (3.0, 2.9)
    assert gate.evaluate([gate.parse_rule("F_true > 3")], _categories())["passed"] is True  # 3.0 > 3 does not hold
    assert gate.evaluate([gate.parse_rule("F_true >= 3")], _categories())["passed"] is False


def test_a_category_rule_and_the_star_rule():
    cats = _categories()
    assert _failed(gate.evaluate([gate.parse_rule("stem: F_true > 4")], cats)) == [("stem: F_true > 4", "STEM")]
    verdict = gate.evaluate([gate.parse_rule("*:F_true > 2")], cats)
    assert [c["category"] for c in verdict["checks"]] == ["STEM", "humanities", "OVERALL"]  # macro rows only
    assert _failed(verdict) == [("*:F_true > 2", "STEM"), ("*:F_true > 2", "OVERALL")]


def test_interval_reads_the_bound_that_makes_the_failure_certain():
    cats = _categories()
    # estimate 3.0 > 2 holds, but the interval's low end 1.5 does not pass 2: no certain failure
    assert gate.evaluate([gate.parse_rule("F_true > 2")], cats, "interval")["passed"] is True
    assert gate.evaluate([gate.parse_rule("F_true > 1")], cats, "interval")["passed"] is False
    # a floor on a figure reads the upper bound: 4.5 < 5 holds for certain
    verdict = gate.evaluate([gate.parse_rule("F_true < 5")], cats, "interval")
    assert verdict["checks"][0]["column"] == "F_true_hi" and verdict["passed"] is False


def test_a_missing_value_fails_its_rule_with_the_reason():
    verdict = gate.evaluate([gate.parse_rule("humanities:BT_true > 50")], _categories())
    assert verdict["passed"] is False and verdict["checks"][0]["reason"] == "no value"
    assert "no value" in gate.describe(verdict)[1]


@pytest.mark.parametrize("text", ["F_true >> 2", "F_true > two", "F_true", "> 2", "F_true > nan", "F_true > inf"])
def test_a_malformed_rule_says_how_to_write_one(text):
    with pytest.raises(PairingError, match=r"write a rule as \[CATEGORY:\]FIGURE OP NUMBER"):
        gate.parse_rule(text)


def test_unknown_figures_and_categories_are_named_with_what_there_is():
    with pytest.raises(PairingError, match=r"no F_tru_mean in this pairing; figures: BT_true, F_true$"):
        gate.evaluate([gate.parse_rule("F_tru > 2")], _categories())
    with pytest.raises(PairingError, match=r"no category 'law'.*categories: STEM, humanities, OVERALL"):
        gate.evaluate([gate.parse_rule("law:F_true > 2")], _categories())
    with pytest.raises(PairingError, match="no median_chars_before_mean"):  # characters, not a share
        gate.evaluate([gate.parse_rule("median_chars_before > 2")], _categories())
    with pytest.raises(PairingError, match="drop --no-analyses"):
        gate.evaluate([gate.parse_rule("BT_true > 2")], _categories(), "interval")


def test_the_cli_exits_3_writes_the_verdict_and_the_outputs(tmp_path, capsys):
    b, a = tmp_path / "before", tmp_path / "after"
    write_run(b, ours("mmlu_x", "1111111111"))
    write_run(a, ours("mmlu_x", "1111111100"))  # F 20%, F_true 20% (k 4, chance 0 with accuracy 1 before)
    out = tmp_path / "out"
    assert main([str(b), str(a), "-o", str(out), "-q", "--no-plot", "--fail-if", "F_true > 19.9"]) == gate.EXIT_FAILED
    verdict = json.loads((out / "summary.json").read_text())["gate"]
    assert verdict["passed"] is False and verdict["checks"][0]["value"] == pytest.approx(20.0)
    assert "gate FAILED: 1 of 1 check(s) hold" in capsys.readouterr().err
    assert (out / "report.md").exists()  # the report is there to read why
    assert main([str(b), str(a), "-o", str(out), "-q", "--no-plot", "--fail-if", "F_true > 20"]) == 0
    assert json.loads((out / "summary.json").read_text())["gate"]["passed"] is True
    assert main([str(b), str(a), "-o", str(out), "-q", "--no-plot"]) == 0
    assert "gate" not in json.loads((out / "summary.json").read_text())


def test_a_bad_rule_stops_before_anything_is_written(tmp_path):
    b, a = tmp_path / "before", tmp_path / "after"
    write_run(b, ours("mmlu_x", "11"))
    write_run(a, ours("mmlu_x", "10"))
    out = tmp_path / "out"
    assert main([str(b), str(a), "-o", str(out), "-q", "--fail-if", "F_true => 2"]) == 1
    assert main([str(b), str(a), "-o", str(out), "-q", "--fail-if", "F_nope > 2"]) == 1
    assert not out.exists()


def test_the_gate_on_real_logs(tmp_path):
    root = REFERENCE / "lmeval_logs" / "mayflower_mmlu_stem"
    if not root.is_dir():
        pytest.skip("the shared reference logs are not beside the repository")
    out = tmp_path / "out"
    argv = [str(root / "before"), str(root / "after"), "-o", str(out), "-q", "--no-plot"]
    # F_true overall is 3.77% (README's worked example), its 95% interval's low end above 2.5
    assert main([*argv, "--fail-if", "F_true > 3.5"]) == gate.EXIT_FAILED
    assert main([*argv, "--fail-if", "F_true > 3.8"]) == 0
    assert main([*argv, "--fail-if", "F_true > 2.5", "--gate-reads", "interval"]) == gate.EXIT_FAILED
    assert main([*argv, "--fail-if", "F_true > 3.5", "--gate-reads", "interval"]) == 0
