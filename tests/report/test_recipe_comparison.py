"""Pairs with one before are compared item by item in the many-pairs outputs (comparisons.csv, pairs.md, terminal)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from postforget_lmeval.cli import main
from tests.report.test_multipair import _macro, stages  # noqa: F401 (stages: the fixture of four checkpoints)


def test_pairs_sharing_a_before_are_compared(stages: dict[str, Path], tmp_path: Path, capsys) -> None:  # noqa: F811
    out = tmp_path / "out"
    argv = ["multi", "--pair", f"sft={stages['base']},{stages['sft']}", "--pair", f"rl={stages['sft']},{stages['rl']}"]
    argv += ["--pair", f"merge={stages['base']},{stages['merge']}", "-o", str(out), "--no-plot"]
    assert main(argv) == 0
    compared = pd.read_csv(out / "comparisons.csv")
    assert set(zip(compared["pair_a"], compared["pair_b"])) == {("sft", "merge")}  # rl has another before
    for category in ("Commonsense", "Logic", "OVERALL"):
        row = compared[compared["category"] == category].iloc[0]
        sft, merge = _macro(out / "sft", category), _macro(out / "merge", category)
        # every item is paired in both pairs, so each side's figure is that pair's own headline figure
        assert row["F_true_a"] == pytest.approx(sft["F_true_mean"])
        assert row["F_true_b"] == pytest.approx(merge["F_true_mean"])
        assert row["F_true_diff"] == pytest.approx(sft["F_true_mean"] - merge["F_true_mean"])
        assert row["BT_true_diff"] == pytest.approx(sft["BT_true_mean"] - merge["BT_true_mean"])
        assert row["F_true_diff_lo"] <= row["F_true_diff"] <= row["F_true_diff_hi"]
    overall = compared[compared["category"] == "OVERALL"].iloc[0]
    # 2 sub-benchmarks x 2 seeds x 10 items. Right before, lost by sft and kept by merge (counted from STAGES):
    # piqa seed 0 items 6, 7; arc seed 0 items 3, 4; piqa seed 1 items 5, 6; arc seed 1 item 5. merge loses none.
    assert overall["n_items"] == 40
    assert (overall["forgot_a_only"], overall["forgot_b_only"]) == (7, 0)
    assert "sft vs merge: F_true" in capsys.readouterr().out
    assert "## Pairs with one before, compared item by item" in (out / "pairs.md").read_text(encoding="utf-8")


def test_no_comparison_without_the_analyses_or_a_shared_before(stages: dict[str, Path], tmp_path: Path) -> None:  # noqa: F811
    shared = ["--pair", f"sft={stages['base']},{stages['sft']}", "--pair", f"merge={stages['base']},{stages['merge']}"]
    assert main(["multi", *shared, "-o", str(tmp_path / "a"), "--no-plot", "-q", "--no-analyses"]) == 0
    assert not (tmp_path / "a" / "comparisons.csv").exists()
    assert main(["chain", str(stages["base"]), str(stages["sft"]), "-o", str(tmp_path / "b"), "--no-plot", "-q"]) == 0
    assert not (tmp_path / "b" / "comparisons.csv").exists()  # one pair: nothing to compare
