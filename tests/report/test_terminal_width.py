"""The terminal's tables fit 100 columns with no cell cut, and significance says which way the rows moved."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from rich.console import Console

from postforget_lmeval import pair
from postforget_lmeval.report import paper_table as report
from tests.helpers.lmeval_runs import ours, write_run
from tests.test_figures_unchanged import CASES

WIDTH = 100


def rendered(renderable: object, width: int = WIDTH) -> str:
    console = Console(file=io.StringIO(), width=width, emoji=False)
    console.print(renderable)
    return console.file.getvalue()


@pytest.mark.parametrize("case", ["mmlu_stem", "gsm8k", "copa", "synthetic", "lighteval_v0_13"])
def test_the_terminal_tables_fit_100_columns_uncut(case, tmp_path):
    inputs, _ = CASES[case]
    before, after = inputs(tmp_path)
    text = rendered(report.rich_table(pair(before, after, jobs=1)))
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= WIDTH
    assert "Overall" in text and "noise floor" in text


def test_a_long_category_with_large_spreads_fits_uncut(tmp_path):
    rows = {"before": ["1111111111", "0000000000"], "after": ["0000000000", "1111111111"]}  # std 70.7
    for side, bits in rows.items():
        for seed, b in enumerate(bits):
            write_run(
                tmp_path / side / f"s{seed}", ours("truthfulqa_mc1", b, category="Safety/Truthfulness"), seed=seed
            )
    text = rendered(report.rich_table(pair(tmp_path / "before", tmp_path / "after")))
    assert "…" not in text and "Safety/Truthfulness" in text
    assert "50.0 → 50.0" in text  # accuracy before → after in one cell


def test_the_mmlu_headline_names_the_models_and_the_direction_of_significance(tmp_path):
    inputs, _ = CASES["mmlu_stem"]
    result = pair(*inputs(tmp_path), jobs=1)
    text = rendered(report.rich_table(result))
    assert "google/gemma-3-4b-it → Qwen/Qwen2.5-3B-Instruct" in text
    overall = report.analyses_table(result).iloc[-1]
    assert overall["significant rows"] == "9 of 19, all gains"


@pytest.mark.parametrize(
    ("n_10", "n_01", "significant", "text"),
    [
        ([9, 1, 2], [1, 9, 2], [True, True, False], "2 of 3: 1 loss, 1 gain"),
        ([9, 8, 1], [1, 1, 9], [True, True, True], "3 of 3: 2 losses, 1 gain"),
        ([9, 8], [1, 1], [True, True], "2 of 2, all losses"),
        ([9, 8], [1, 1], [False, False], "0 of 2"),
    ],
)
def test_significance_gives_its_direction(n_10, n_01, significant, text):
    rows = pd.DataFrame({"n_10": n_10, "n_01": n_01, "significant": significant})
    assert report.significance_text(rows) == text


def test_piped_output_takes_the_width_columns_sets(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert report.stdout_console().width == WIDTH
