"""report.html stands alone after a pip install (no link into a docs/ folder it does not ship: the method inline),
and with one seed of log-likelihood runs ranks the most forgotten items by the drop in the gold option's
probability, not by name."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval import pair
from postforget_lmeval.report import html as report_html
from tests.helpers import paths

MMLU = paths.REFERENCE / "lmeval_logs" / "mayflower_mmlu_stem"


@pytest.fixture(scope="module")
def mmlu():
    if not MMLU.is_dir():
        pytest.skip("the reference logs are not beside the checkout")
    return pair(MMLU / "before", MMLU / "after", jobs=1)


def test_report_html_links_no_docs_page_and_carries_the_method(mmlu):
    text = report_html.render(mmlu, None)
    assert "docs/" not in text  # the noise legend pointed at docs/method.md
    assert '<section id="method">' in text and "F_chance = BT_chance = (1 − acc_before)(1 − acc_after)/(k − 1)" in text
    assert "(ICLR 2026, arXiv 2510.17776)" in text


def test_one_seed_log_likelihood_items_rank_by_the_drop_in_the_gold_probability(mmlu):
    drift = mmlu.tables["drift_items"]
    forgotten = drift[drift["transition"].astype(str) == "1->0"].sort_values("dp_gold")
    gained = drift[drift["transition"].astype(str) == "0->1"].sort_values("dp_gold", ascending=False)
    text = report_html.render(mmlu, None)
    cards = re.findall(r"<b>(mmlu_\w+)</b> doc_id (\d+) · (1->0|0->1)", text)
    expect = [(r.subtask, str(r.doc_id), "1->0") for r in forgotten.head(report_html.N_ITEMS).itertuples()]
    expect += [(r.subtask, str(r.doc_id), "0->1") for r in gained.head(report_html.N_ITEMS).itertuples()]
    assert cards == expect
    assert cards[0] != ("mmlu_abstract_algebra", "0", "1->0")  # the first forgotten item by name


def test_ranked_items_break_ties_in_seed_count_by_strength():
    samples = pd.DataFrame(
        {"subtask": ["a", "a", "b", "b", "c"], "doc_id": [0, 1, 0, 1, 0], "transition": ["1->0"] * 5}
    )
    strength = np.array([0.1, np.nan, 0.9, 0.5, 0.3])
    top = report_html.ranked_items(samples, "1->0", n=5, strength=strength)
    assert list(zip(top["subtask"], top["doc_id"])) == [("b", 0), ("b", 1), ("c", 0), ("a", 0), ("a", 1)]
    plain = report_html.ranked_items(samples, "1->0", n=5)
    assert list(zip(plain["subtask"], plain["doc_id"])) == [("a", 0), ("a", 1), ("b", 0), ("b", 1), ("c", 0)]
