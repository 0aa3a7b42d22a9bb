"""The paper's published figures (package data), its chance-k policy, and the comparison with a user's pair."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from postforget_lmeval import pair
from postforget_lmeval.pairing import chance_k
from postforget_lmeval.pairing.results import PairingError
from postforget_lmeval.report import paper
from postforget_lmeval.report import paper_table as report
from postforget_lmeval.report.files import write_outputs
from tests.helpers import paths
from tests.helpers.lmeval_runs import ours, write_run

REFERENCE = paths.REFERENCE / "paper"


def test_official_k_is_the_bbh_table_and_4_elsewhere() -> None:
    assert chance_k.official_k("bbh_navigate") == 2
    assert chance_k.official_k("bbh_object_counting") == 19
    assert chance_k.official_k("bbh_reasoning_about_colored_objects") == 18
    assert chance_k.official_k("piqa_main") == 4  # really 2 options: the official code's fillna(4)
    assert chance_k.official_k("commonsenseqa_main") == 4
    assert chance_k.official_k("mmlu_virology") == 4
    assert chance_k.official_k("demo_world") is None  # not a paper sub-benchmark: k stays per item
    assert chance_k.official_k("arc_easy_plain") is None
    assert len(chance_k.BBH_K) == 24


def test_apply_official_k_replaces_k_and_names_what_it_kept() -> None:
    items = pd.DataFrame({"subtask": ["piqa_main", "piqa_main", "bbh_ruin_names", "gsm8k"], "k": [2.0, 2.0, 4.0, 5.0]})
    out, kept = chance_k.apply_official_k(items)
    assert out["k"].tolist() == [4.0, 4.0, 6.0, 5.0]
    assert kept == ["gsm8k"]
    assert items["k"].tolist() == [2.0, 2.0, 4.0, 5.0]  # input untouched


def test_figures_hold_every_appendix_e_cell() -> None:
    fig = paper.figures()
    cells = fig.dropna(subset=["mean_pct"])
    assert len(cells) == 854  # every cell of Tables 2-35
    assert set(cells["table"].astype(int)) == set(range(2, 36))
    row = fig[(fig["pair"] == "Q2.5 Inst. (7B)") & (fig["category"] == "Commonsense") & (fig["metric"] == "F_true")]
    assert row[["mean_pct", "std_pct", "ceiling_pct"]].iloc[0].tolist() == [5.4, 0.1, 60.8]
    assert row["value_full"].iloc[0] == pytest.approx(0.05448124)
    assert row[["before_model", "after_model"]].iloc[0].tolist() == ["Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-7B-Instruct"]
    # Safety for a base pair: not in the tables, full-precision value from the website
    safety = fig[(fig["pair"] == "Q2.5 Inst. (7B)") & (fig["category"] == "Safety/Truthfulness")]
    assert safety["mean_pct"].isna().all() and safety["value_full"].notna().all()
    assert len(paper.labels()) == 31 + 16  # 31 model pairs, 16 merge columns (Tables 24-35, F and BT tables paired)


def test_table_cells_are_the_full_values_rounded() -> None:
    """Two independent sources of the same figures must agree: a typo in either shows up here."""
    both = paper.figures().dropna(subset=["mean_pct", "value_full"])
    assert len(both) > 400
    assert ((both["mean_pct"] - (100 * both["value_full"]).round(1)).abs() <= 0.051).all()


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="reference tables not beside the checkout")
def test_figures_match_the_reference_tables() -> None:
    ref = pd.read_csv(REFERENCE / "paper_appendixE_tables.csv")
    ours_cells = paper.figures().dropna(subset=["mean_pct"])
    assert sorted(ours_cells["mean_pct"].round(1)) == sorted(ref["F_or_BT_true_mean_pct"].round(1))
    assert sorted(ours_cells["ceiling_pct"].round(1)) == sorted(ref["ceiling_pct_Fmax_or_BTmax"].round(1))
    pairs = pd.read_csv(REFERENCE / "model_pairs.csv")
    shipped = paper.figures().drop_duplicates("pair").set_index("pair")
    for r in pairs.itertuples(index=False):
        assert shipped.loc[r.paper_label, ["before_model", "after_model"]].tolist() == [r.before_model, r.after_model]


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (["Qwen/Qwen2.5-7B"], ["Qwen/Qwen2.5-7B-Instruct"], "Q2.5 Inst. (7B)"),
        (["/models/Qwen/Qwen2.5-7B/"], ["/ckpt/qwen2.5-7b-instruct"], "Q2.5 Inst. (7B)"),
        (["Qwen/Qwen2.5-32B-Instruct"], ["GAIR/LIMO-v2"], "LIMO v2 (32B)"),
        (["Qwen/Qwen2.5-7B"], ["Qwen/Qwen2.5-Math-7B"], "Q2.5 Math (7B)"),
        (["Qwen/Qwen2.5-7B"], ["someone/else"], None),
        (["Qwen/Qwen2.5-7B-Instruct"], ["Qwen/Qwen2.5-7B"], None),  # reversed is not the paper's pair
    ],
)
def test_identify_from_model_names(before: list[str], after: list[str], expected: str | None) -> None:
    assert paper.identify(before, after) == expected


def test_unknown_label_suggests_close_ones() -> None:
    assert paper.check_label("LIMO (32B)") == "LIMO (32B)"
    with pytest.raises(PairingError, match=r"did you mean .*Q2.5 Inst. \(7B\)"):
        paper.check_label("Q2.5 Inst (7B)")


def _runs(root: Path, before_model: str, after_model: str) -> tuple[Path, Path]:
    """Two seeds of a PIQA (k=2) and an ARC sub-benchmark, models named in model_args as lm-eval logs them."""
    bits = {
        "before": {0: ("1111111100", "1111111000"), 1: ("1111111110", "1111110000")},
        "after": {0: ("1111110010", "1110001100"), 1: ("1111100001", "1111000011")},
    }
    for side, model in (("before", before_model), ("after", after_model)):
        for seed, (piqa, arc) in bits[side].items():
            tasks = {**ours("piqa_main", piqa, k=2, category="Commonsense"), **ours("arc_easy", arc, category="Logic")}
            write_run(root / side / f"seed{seed}", tasks, seed=seed, model_args=f"pretrained={model},dtype=bfloat16")
    return root / "before", root / "after"


def test_synthetic_pair_named_like_the_papers_is_compared(tmp_path: Path) -> None:
    before, after = _runs(tmp_path, "Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-7B-Instruct")
    result = pair(before, after)
    assert paper.run_models(result, "before") == ["Qwen/Qwen2.5-7B"]
    assert paper.paper_pair(result) == "Q2.5 Inst. (7B)"
    table = paper.comparison(result, "Q2.5 Inst. (7B)").set_index(["metric", "category"])
    macro = result.categories[result.categories["average"] == "macro"].set_index("category")
    ours_f = 100 * macro.loc["Commonsense", "F_true_mean"]
    assert table.loc[("F_true", "Commonsense"), "ours"] == pytest.approx(ours_f)
    assert table.loc[("F_true", "Commonsense"), "paper"] == 5.4
    # PIQA alone is 1 of the paper's 2 Commonsense sub-benchmarks: shown beside it, no difference
    assert math.isnan(table.loc[("F_true", "Commonsense"), "difference"])
    assert table.loc[("BT_true", "OVERALL"), "paper"] == 11.0
    # Safety: no table cell for this base pair, so the difference is taken from the full value
    assert math.isnan(table.loc[("F_true", "Safety/Truthfulness"), "ours"])
    assert table.loc[("F_true", "Safety/Truthfulness"), "paper_full"] == pytest.approx(6.928589)

    write_outputs(result, tmp_path / "out")
    text = (tmp_path / "out" / "report.md").read_text()
    assert "## Beside the paper: Q2.5 Inst. (7B)" in text
    row = macro.loc["Commonsense"]
    cell = report.cell(row["F_true_mean"], row["F_true_std"], row["F_max_mean"])
    assert f"| F_true | Commonsense | {cell} | 5.4 ± 0.1 (60.8) | 5.45 |" in text
    assert "--chance-k paper" in text and "docs/paper-differences.md" in text
    html = (tmp_path / "out" / "report.html").read_text()
    assert 'id="paper-comparison"' in html and "recognised from the model names" in html


def test_unrelated_models_get_no_comparison(tmp_path: Path) -> None:
    before, after = _runs(tmp_path, "me/base-1b", "me/sft-1b")
    result = pair(before, after)
    assert paper.paper_pair(result) is None
    write_outputs(result, tmp_path / "out")
    assert "Beside the paper" not in (tmp_path / "out" / "report.md").read_text()
    assert 'id="paper-comparison"' not in (tmp_path / "out" / "report.html").read_text()


def test_named_paper_pair_wins_over_model_names(tmp_path: Path) -> None:
    before, after = _runs(tmp_path, "me/base-1b", "me/sft-1b")
    result = pair(before, after)
    result.summary["paper_pair"] = "OpenThinker3 (7B)"
    assert paper.paper_pair(result) == "OpenThinker3 (7B)"
    result.summary["paper_pair"] = "OpenThinker 9"
    with pytest.raises(PairingError, match="not a pair of the paper"):
        paper.paper_pair(result)


def test_lighteval_runs_are_recognised_from_config_general() -> None:
    """LightEval logs the model in ``config_general.model_name``: its runs are compared with the paper too."""
    fixtures = paths.FIXTURES / "lighteval" / "v0_10"
    result = pair(fixtures / "before", fixtures / "after", analyses=False)
    assert paper.run_models(result, "after") == ["Qwen/Qwen2.5-7B-Instruct"]
    assert paper.paper_pair(result) == "Q2.5 Inst. (7B)"
