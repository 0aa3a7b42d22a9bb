"""Beside the paper, a difference is printed only on equal footing: a category this run built from the same
sub-benchmarks as the paper's (recomputed on them where it holds others), the categories both have together, and
the paper's Total only when this run has all the paper averaged in it."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from postforget_lmeval import metrics, pair
from postforget_lmeval.pairing.results import PairResult
from postforget_lmeval.report import paper
from postforget_lmeval.report import paper_table as report
from postforget_lmeval.report.files import write_outputs
from postforget_lmeval.tasks.catalog import suite
from tests.helpers import paths
from tests.helpers.lmeval_runs import ours, write_run

LABEL = "Q2.5 Inst. (7B)"  # F_true: Commonsense 5.4 (full 5.448124), Logic 8.4, Total 8.2


def test_lighteval_fixtures_print_no_difference() -> None:
    """3 categories: Logic with only ARC (which the paper's Logic lacks), Math with 1 of its 9 sub-benchmarks, and
    one not the paper's. Before, Overall printed F_true +8.2 and BT_true +18.5 against the paper's Total."""
    fixtures = paths.FIXTURES / "lighteval" / "v0_10"
    result = pair(fixtures / "before", fixtures / "after", analyses=False)
    table = paper.comparison(result, LABEL).set_index(["metric", "category"])
    assert table["difference"].isna().all()
    assert table.loc[("F_true", "OVERALL"), "paper"] == 8.2 and table.loc[("BT_true", "OVERALL"), "paper"] == 11.0
    assert not table.index.get_level_values("category").str.contains("shared").any()
    text = report.comparison_markdown(result, LABEL)
    assert "| F_true | Overall |" in text and "| 8.2 ± 0.3 (58.6) | – | – |" in text
    assert "Logic: this run has 0 of the paper's 18 sub-benchmarks (its arc_easy not among them)" in text
    assert "Math: this run has 1 of the paper's 9 sub-benchmarks" in text
    assert "synth_reasoning_letter:capitals: not a category of the paper" in text
    assert (
        "This run has all the sub-benchmarks of 0 of them, so the paper's Total is shown without a difference" in text
    )


def test_a_complete_category_is_compared_and_the_total_is_not(tmp_path: Path) -> None:
    """Commonsense complete (PIQA and CommonsenseQA), Logic with ARC only: one shared category."""
    bits = {"before": ("1111111100", "1111100000", "1111111000"), "after": ("1111110010", "1110011100", "1110001100")}
    for side, (piqa, csqa, arc) in bits.items():
        tasks = {
            **ours("piqa_main", piqa, k=2, category="Commonsense"),
            **ours("commonsenseqa_main", csqa, k=5, category="Commonsense"),
            **ours("arc_easy", arc, category="Logic"),
        }
        write_run(tmp_path / side, tasks, model_args="pretrained=m")
    result = pair(tmp_path / "before", tmp_path / "after", analyses=False)
    # by hand: PIQA n11 6, n10 2, n01 1, n00 1, k 2: F 0.2, chance 0.2 * 0.3 / 1 = 0.06, F_true 0.14
    #          CSQA n11 3, n10 2, n01 3, n00 2, k 5: F 0.2, chance 0.5 * 0.4 / 4 = 0.05, F_true 0.15
    commonsense = 100 * (0.14 + 0.15) / 2
    table = paper.comparison(result, LABEL).set_index(["metric", "category"])
    assert table.loc[("F_true", "Commonsense"), "ours"] == pytest.approx(commonsense)
    assert table.loc[("F_true", "Commonsense"), "difference"] == pytest.approx(commonsense - 5.4)
    assert math.isnan(table.loc[("F_true", "Logic"), "difference"])
    shared = table.loc[("F_true", "over 1 shared category")]
    assert shared[["ours", "paper", "difference"]].tolist() == pytest.approx([commonsense, 5.4, commonsense - 5.4])
    assert math.isnan(table.loc[("F_true", "OVERALL"), "difference"])
    assert list(table.index.get_level_values("category"))[-2:] == ["over 1 shared category", "OVERALL"]
    result.summary["paper_pair"] = LABEL  # as --paper-pair names it
    write_outputs(result, tmp_path / "out")
    text = (tmp_path / "out" / "report.md").read_text()
    assert "Compared on equal footing (a difference is printed): Commonsense: the paper's 2 sub-benchmarks." in text
    # F_max: PIQA (2 * 0.8 - 1) / 1 = 0.6, CSQA (5 * 0.5 - 1) / 4 = 0.375; the paper's shared ceiling is its cell's
    assert "| F_true | over 1 shared category | 14.5 (48.8) | 5.4 (60.8) | – | +9.1 |" in text


def _complete() -> PairResult:
    """Every sub-benchmark of the paper, 2 seeds: F_true 0.27333 everywhere but ARC's 0.55333 (k = 4).
    (n11, n10, n01, n00) = (5, 3, 1, 1): acc 0.8 -> 0.6, F 0.3, chance 0.2 * 0.4 / 3; ARC (2, 6, 1, 1): F 0.6,
    chance 0.2 * 0.7 / 3."""
    rows = [
        {"subtask": t.subtask, "category": t.category, "seed": seed,
         **metrics.counts_metrics(*((2, 6, 1, 1) if t.benchmark == "arc" else (5, 3, 1, 1)), 4.0)}
        for t in suite()
        for seed in ("0", "1")
    ]  # fmt: skip
    subtasks = pd.DataFrame(rows)
    empty = pd.DataFrame()
    return PairResult(subtasks, metrics.aggregate(subtasks), empty, empty, {})


def test_all_the_papers_categories_recompute_the_total_the_papers_way() -> None:
    result = _complete()
    f, arc = 100 * (0.3 - 0.2 * 0.4 / 3), 100 * (0.6 - 0.2 * 0.7 / 3)
    table = paper.comparison(result, LABEL).set_index(["metric", "category"])
    # our Overall as run: ARC inside Logic (18 + 2 sub-benchmarks), 9 categories
    as_run = (8 * f + (18 * f + 2 * arc) / 20) / 9
    macro = result.categories.set_index("category")
    assert 100 * macro.loc["OVERALL", "F_true_mean"] == pytest.approx(as_run)
    # the paper's Total: 9 categories without ARC and ARC as a 10th
    total = (9 * f + arc) / 10
    assert table.loc[("F_true", "OVERALL"), ["ours", "difference"]].tolist() == pytest.approx([total, total - 8.2])
    assert table.loc[("F_true", "Logic"), ["ours", "difference"]].tolist() == pytest.approx([f, f - 8.4])
    shared = table.loc[("F_true", "over 9 shared categories")]
    visible = paper.figures()[(paper.figures()["pair"] == LABEL) & (paper.figures()["metric"] == "F_true")]
    visible = visible[visible["category"] != "OVERALL"]
    reference = visible["mean_pct"].fillna(100 * visible["value_full"]).mean()  # Safety: the website's value
    assert shared[["ours", "paper", "difference"]].tolist() == pytest.approx([f, reference, f - reference])
    assert table.loc[("F_true", "Logic"), "ours_std"] == 0.0
    compared, not_compared = paper.footing(result, LABEL)
    assert "Logic: recomputed on the paper's 18 sub-benchmarks, without arc_challenge, arc_easy" in compared
    assert (
        "Safety/Truthfulness: recomputed on the paper's 4 sub-benchmarks, without saladbench_mrq, truthfulqa_mc1"
        in (compared)
    )
    assert not not_compared


def test_a_pair_without_a_base_model_has_its_full_safety_category() -> None:
    members = paper.paper_categories("LIMO v2 (32B)")
    assert {"truthfulqa_mc1", "saladbench_mrq"} <= members["Safety/Truthfulness"]
    assert len(paper.paper_categories(LABEL)["Safety/Truthfulness"]) == 4
    assert members[paper.HIDDEN] == {"arc_easy", "arc_challenge"} and "arc_easy" not in members["Logic"]
