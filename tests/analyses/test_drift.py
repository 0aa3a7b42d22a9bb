"""Drift before the flip on crafted option log-likelihoods, with hand-worked values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval.analyses._drift import drift_summary, item_drift


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
