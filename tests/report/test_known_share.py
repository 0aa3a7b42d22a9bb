"""F_max / BT_max are the shares of items known before / after under the paper's guessing model, not bounds on
F_true / BT_true: rows where the measured figure exceeds them are flagged with why, the legend and the docs say so,
and the plots draw them as a marker beside the bar, not as a box around it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from postforget_lmeval import pair
from postforget_lmeval.report import paper_table as report
from postforget_lmeval.report import plots
from postforget_lmeval.report.analyses_md import analyses_markdown
from postforget_lmeval.report.files import write_outputs
from tests.helpers import paths
from tests.helpers.lmeval_runs import ordinary, ours, write_run


def _pair(tmp_path: Path):
    """k = 4: mmlu_x 1111100000 -> 0000011111 (every item flips), mmlu_y 1111111100 -> 1111110010 (method.md §1)."""
    for side, x, y in (("before", "1111100000", "1111111100"), ("after", "0000011111", "1111110010")):
        write_run(tmp_path / side, {**ours("mmlu_x", x, category="Math"), **ours("mmlu_y", y, category="Math")})
    return pair(tmp_path / "before", tmp_path / "after")


def test_f_true_above_f_max_is_flagged(tmp_path: Path) -> None:
    """By hand (docs/method.md §1): acc 0.5 -> 0.5, F = BT = 0.5, chance 0.5 * 0.5 / 3, F_true = BT_true = 0.41667;
    F_max = BT_max = (4 * 0.5 - 1) / 3 = 0.33333. mmlu_y: F_true 0.18 < F_max 0.7333, BT_true 0.08 < BT_max 0.6."""
    result = _pair(tmp_path)
    rows = result.subtasks.set_index("subtask")
    assert rows.loc["mmlu_x", ["F_true", "BT_true"]].tolist() == pytest.approx([0.5 - 0.25 / 3] * 2)
    assert rows.loc["mmlu_x", ["F_max", "BT_max"]].tolist() == pytest.approx([1 / 3] * 2)
    assert rows["F_true_above_max"].tolist() == [True, False]
    assert rows["BT_true_above_max"].tolist() == [True, False]
    text = analyses_markdown(result)
    assert "### Rows above F_max / BT_max" in text
    assert "- mmlu_x, seed 0: F_true 41.7% > F_max 33.3%" in text
    assert "- mmlu_x, seed 0: BT_true 41.7% > BT_max 33.3%" in text
    assert "mmlu_y, seed" not in text.split("### Rows above F_max / BT_max")[1]
    assert "sampling noise" in text and "worse than chance" in text and "not a bound" in text
    write_outputs(result, tmp_path / "out", plot=False)
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert '<section id="above-max">' in html and "<li>mmlu_x, seed 0: F_true 41.7% &gt; F_max 33.3%</li>" in html


def test_no_k_flags_nothing(tmp_path: Path) -> None:
    for side, x in (("before", "1111100000"), ("after", "0000011111")):
        write_run(tmp_path / side, ordinary("gsm8k", x, metric="exact_match"))  # generative: no k
    result = pair(tmp_path / "before", tmp_path / "after")
    assert result.subtasks["F_max"].isna().all()
    assert not result.subtasks["F_true_above_max"].any() and not result.subtasks["BT_true_above_max"].any()
    assert "Rows above F_max" not in analyses_markdown(result)


def test_the_legend_and_the_docs_call_it_the_known_share_not_a_bound() -> None:
    legend = report.LEGEND
    assert "share of items known before / after under the paper's guessing model" in legend
    assert "max possible forgetting" in legend and "not a bound" in legend
    assert "the most that could be forgotten" not in legend
    method = (paths.ROOT / "docs" / "method.md").read_text(encoding="utf-8")
    assert "the most forgetting possible" not in method and "They are not bounds on" in method
    readme = (paths.ROOT / "README.md").read_text(encoding="utf-8").split("![")[0]
    assert "max possible forgetting" in readme and "the most that could be forgotten" not in readme


def test_the_plot_marks_f_max_and_draws_no_cap(tmp_path: Path) -> None:
    result = _pair(tmp_path)
    fig = plots.categories_figure(result)
    cats = result.categories[result.categories["average"] == "macro"].set_index("category")
    for ax, (metric, known, _) in zip(fig.axes, plots.PANELS):
        marks = [line for line in ax.lines if line.get_marker() == plots.KNOWN_MARKER]
        assert len(marks) == 1
        expected = 100 * cats.loc[["Math", "OVERALL"], f"{known}_mean"].to_numpy()
        assert np.asarray(marks[0].get_ydata(), dtype=float) == pytest.approx(expected)
        assert all(patch.get_fill() for patch in ax.patches)  # no outline box at F_max
        assert f"diamond: {known}" in ax.get_title() and "not a cap" in ax.get_title()
        heights = [patch.get_height() for patch in ax.patches]
        assert heights == pytest.approx(100 * cats.loc[["Math", "OVERALL"], f"{metric}_mean"].to_numpy())
