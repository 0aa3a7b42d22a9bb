"""Drift before the flip on crafted option log-likelihoods, with hand-worked values."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval.analyses._drift import AT_RISK_DROP, ITEM_COLUMNS, LABELS, drift_summary, item_drift


def _ll(*probs: float) -> list[float]:
    """Log-likelihoods whose softmax is ``probs`` (shifted: lm-eval's values are not normalised)."""
    return [math.log(p) - 3.0 for p in probs]


CASES = [
    # doc_id, transition, gold, before probs, after probs
    (0, "1->0", "A", (0.7, 0.1, 0.1, 0.1), (0.2, 0.6, 0.1, 0.1)),  # all 0.5 lost went to B: drift
    (1, "1->0", "A", (0.7, 0.1, 0.1, 0.1), (0.25, 0.26, 0.25, 0.24)),  # spread: 0.16/0.45 to B: mass loss
    (2, "1->1", "A", (0.9, 0.05, 0.03, 0.02), (0.5, 0.3, 0.1, 0.1)),  # kept, gold fell 0.4: at risk
    (3, "1->1", "A", (0.6, 0.2, 0.1, 0.1), (0.5, 0.3, 0.1, 0.1)),  # kept, fell 0.1: not at risk
    (4, "1->0", "B", (0.2, 0.8), (0.7, 0.3)),  # two options
    (5, "1->0", "A", (0.4, 0.35, 0.25), (0.45, 0.5499, 0.0001)),  # gold grew, B grew past it: overtaken
    (6, "0->0", "C", (0.5, 0.3, 0.2), (0.6, 0.3, 0.1)),
]


def _samples() -> pd.DataFrame:
    rows = [
        {
            "subtask": "s",
            "category": "C",
            "seed": "0",
            "doc_id": d,
            "transition": t,
            "gold": g,
            "option_ll_before": _ll(*b),
            "option_ll_after": _ll(*a),
        }
        for d, t, g, b, a in CASES
    ]
    rows.append(
        {
            "subtask": "s",
            "category": "C",
            "seed": "0",
            "doc_id": 7,
            "transition": "1->0",
            "gold": "A",
            "option_ll_before": None,
            "option_ll_after": None,
        }
    )  # generative item: no figures
    return pd.DataFrame(rows)


def test_item_drift_hand_worked() -> None:
    items = item_drift(_samples()).set_index("doc_id")
    assert 7 not in items.index
    assert items.loc[0, "dp_gold"] == pytest.approx(-0.5)
    assert items.loc[0, "lost_mass"] == pytest.approx(0.5)
    assert items.loc[0, "top_gain_share"] == pytest.approx(1.0)
    assert items.loc[0, "label"] == "drift"
    assert items.loc[1, "lost_mass"] == pytest.approx(0.45)
    assert items.loc[1, "top_gain_share"] == pytest.approx(0.16 / 0.45)
    assert items.loc[1, "label"] == "mass_loss"
    assert items.loc[2, "dp_gold"] == pytest.approx(-0.4)
    assert items.loc[4, "p_gold_before"] == pytest.approx(0.8)
    assert items.loc[4, "label"] == "two_options" and math.isnan(items.loc[4, "top_gain_share"])
    assert items.loc[5, "label"] == "overtaken"
    assert pd.isna(items.loc[6, "label"]) and math.isnan(items.loc[6, "lost_mass"])


def test_drift_summary_hand_worked() -> None:
    summary = drift_summary(item_drift(_samples())).iloc[0]
    assert summary["n_mc"] == 7
    assert summary["n_at_risk"] == 1 and summary["at_risk_share"] == pytest.approx(0.5)
    assert summary["dp_gold_median_11"] == pytest.approx((-0.4 - 0.1) / 2)
    labels = ("n_10_drift", "n_10_mass_loss", "n_10_two_options", "n_10_overtaken")
    assert [summary[c] for c in labels] == [1, 1, 1, 1]
    assert summary["drift_share"] == pytest.approx(0.5)


def test_generative_samples_have_no_drift() -> None:
    samples = _samples().drop(columns=["option_ll_before", "option_ll_after"])
    assert item_drift(samples).empty
    assert drift_summary(item_drift(samples)).empty
    only_generative = _samples().iloc[[7]]
    assert item_drift(only_generative).empty


def test_numpy_arrays_from_parquet_are_read(tmp_path) -> None:
    path = tmp_path / "s.parquet"
    _samples().to_parquet(path)
    back = pd.read_parquet(path)
    assert isinstance(back["option_ll_before"].iloc[0], np.ndarray)
    pd.testing.assert_frame_equal(item_drift(back), item_drift(_samples()))


def test_a_top_gain_share_of_exactly_one_half_is_drift() -> None:
    """Gold A falls from 1 to 0 and B and C gain 0.5 each: the top gain is exactly half the lost mass, which is
    ``DRIFT_SHARE``: drift (the bound is reached, ``>=``). Log-likelihoods of -1000 give a probability of exactly 0."""
    far = -1000.0
    samples = pd.DataFrame(
        {
            "subtask": "s", "category": "C", "seed": "0", "doc_id": [0], "transition": ["1->0"], "gold": ["A"],
            "option_ll_before": [[0.0, far, far, far]], "option_ll_after": [[far, 0.0, 0.0, far]],
        }
    )  # fmt: skip
    items = item_drift(samples)
    assert items["lost_mass"].tolist() == [1.0] and items["top_gain_share"].tolist() == [0.5]
    assert items["label"].tolist() == ["drift"]
    assert drift_summary(items)["drift_share"].tolist() == [1.0]


def _rows(*items: tuple) -> pd.DataFrame:
    """Sample rows of (subtask, doc_id, transition, gold, log-likelihoods before, after)."""
    return pd.DataFrame(
        [
            {"subtask": s, "category": "C", "seed": "0", "doc_id": d, "transition": t, "gold": g,
             "option_ll_before": b, "option_ll_after": a}
            for s, d, t, g, b, a in items
        ]
    )  # fmt: skip


def test_columns_and_types_of_the_tables() -> None:
    items = item_drift(_samples())
    assert list(items.columns) == ["subtask", "category", "seed", "doc_id", "transition", *ITEM_COLUMNS]
    assert items["k"].dtype == np.int64
    figures = ["p_gold_before", "p_gold_after", "dp_gold", "lost_mass", "top_gain_share"]
    assert (items[figures].dtypes == np.float64).all()
    summary = drift_summary(items)
    counts = ["n_mc", "n_at_risk", *(f"n_10_{lab}" for lab in LABELS)]
    assert (summary[counts].dtypes == np.int64).all()  # drift.csv writes 1, not 1.0
    assert (summary[["dp_gold_median_11", "at_risk_share", "drift_share"]].dtypes == np.float64).all()


def test_very_negative_log_likelihoods_keep_their_probabilities() -> None:
    """A long option's log-likelihood is a sum over its tokens and can fall below -745, where exp() is 0: each
    item is normalised by its own largest value, so an item near -800 keeps its probabilities beside one near 0."""
    ll = _ll(0.7, 0.1, 0.1, 0.1), _ll(0.2, 0.6, 0.1, 0.1)
    long_options = [[v - 800.0 for v in side] for side in ll]
    samples = _rows(("s", 0, "1->0", "A", *ll), ("s", 1, "1->0", "A", *long_options))
    items = item_drift(samples)
    assert items["p_gold_before"].tolist() == pytest.approx([0.7, 0.7])
    assert items["p_gold_after"].tolist() == pytest.approx([0.2, 0.2])
    assert items["top_gain_share"].tolist() == pytest.approx([1.0, 1.0])


def test_golds_that_name_no_option_give_no_figures() -> None:
    """Drift needs the gold option: a gold given as text, a missing gold and a letter past the options (a task
    whose target indexes past its choices) leave the item out, and Z is the 26th option."""
    four = _ll(0.7, 0.1, 0.1, 0.1), _ll(0.2, 0.6, 0.1, 0.1)
    far = -1000.0
    z_before = [far] * 25 + [0.0]
    z_after = [0.0] + [far] * 24 + [0.0]
    samples = _rows(
        ("s", 0, "1->0", "Paris", *four),
        ("s", 1, "1->0", None, *four),
        ("s", 2, "1->0", "E", *four),
        ("s", 3, "0->0", "Paris", None, None),
        ("s", 4, "1->0", "Z", z_before, z_after),
        ("s", 5, "1->0", "A", *four),
        ("s", 6, "1->1", "A", four[0], _ll(0.5, 0.3, 0.2)),
        ("s", 7, "1->1", "A", [-1.0], [-2.0]),
        ("s", 8, "0->1", "A", None, four[1]),
        ("s", 9, "1->0", "A", four[0], None),
    )
    items = item_drift(samples)
    assert items["doc_id"].tolist() == [4, 5]
    # Paris, no gold, E, doc 6 (4 options before, 3 after) and doc 7 (one option); not 3, 8 or 9 (a side without)
    assert items.attrs["left_out"] == 5
    assert items["k"].tolist() == [26, 4]
    assert items["p_gold_before"].tolist() == pytest.approx([1.0, 0.7])
    assert items["p_gold_after"].tolist() == pytest.approx([0.5, 0.2])


def test_a_drop_of_exactly_one_fifth_is_not_at_risk() -> None:
    """At risk is a fall of MORE than ``AT_RISK_DROP``: gold A falls from 1/1.875 (the other options at 1/2, 1/4,
    1/8 of its probability) to 1/3 (tied with B and C, still the first maximum): dp_gold is exactly -0.2."""
    before, after = [0.0, math.log(0.5), math.log(0.25), math.log(0.125)], [0.0, 0.0, 0.0, -1000.0]
    items = item_drift(_rows(("s", 0, "1->1", "A", before, after)))
    assert items["dp_gold"].tolist() == [-AT_RISK_DROP]
    summary = drift_summary(items)
    assert summary["n_at_risk"].tolist() == [0] and summary["at_risk_share"].tolist() == [0.0]


def test_gold_that_kept_its_probability() -> None:
    """Items whose gold probability did not move: the model paired with itself (1->1, no option moved), and gold B
    kept its 1/2 while A rose to tie it and, first of the two, took the answer (1->0). The lost mass is 0: no share,
    overtaken, and no division warning. A three-option flip whose mass went to B is drift. One retained item in a
    sub-benchmark gives an at-risk share, not NaN."""
    half, quarter, far = 0.0, math.log(0.5), -1000.0
    same = [0.0, math.log(0.3), math.log(0.2)]
    samples = _rows(
        ("s", 0, "1->1", "A", same, same),
        ("s", 1, "1->0", "B", [quarter, half, quarter], [0.0, 0.0, far]),
        ("s", 2, "1->0", "A", [0.0, quarter, quarter], [quarter, 0.0, quarter]),
        ("t", 0, "1->1", "A", same, same),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        items = item_drift(samples)
    assert items["lost_mass"].tolist()[1:3] == [0.0, 0.25]
    assert math.isnan(items["top_gain_share"][1]) and items["top_gain_share"][2] == 1.0
    assert items["label"].tolist()[1:3] == ["overtaken", "drift"]
    assert items["dp_gold"].tolist() == [0.0, 0.0, -0.25, 0.0]
    summary = drift_summary(items).set_index("subtask")
    assert summary["at_risk_share"].tolist() == [0.0, 0.0]
    assert summary.loc["s", "drift_share"] == 1.0 and math.isnan(summary.loc["t", "drift_share"])
