"""Exact-number tests for postforget_lmeval.metrics (docs/method.md §1 worked examples, §2 aggregation)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from postforget_lmeval.metrics import (
    METRIC_COLUMNS,
    RATE_METRICS,
    SEED_AGREEMENT_COLUMNS,
    aggregate,
    aggregate_micro,
    k_eff,
    seed_agreement_metrics,
    transition_metrics,
)

CHANCE_COLUMNS = ("F_chance", "BT_chance", "F_true", "BT_true", "F_max", "BT_max")


def bits(s: str) -> list[int]:
    return [int(c) for c in s]


def approx(x: float):
    return pytest.approx(x, rel=1e-9, abs=1e-12)


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# --- docs/method.md §1 worked examples -------------------------------------------------------------------


def test_worked_example_1(no_warnings):
    m = transition_metrics(bits("1111111100"), bits("1111110010"), k=4)
    assert tuple(m) == METRIC_COLUMNS
    assert (m["n"], m["n_11"], m["n_10"], m["n_01"], m["n_00"]) == (10, 6, 2, 1, 1)
    assert all(type(m[c]) is int for c in ("n", "n_11", "n_10", "n_01", "n_00"))
    assert m["k"] == 4.0
    assert m["acc_before"] == approx(0.8)
    assert m["acc_after"] == approx(0.7)
    assert m["F"] == approx(0.2)
    assert m["BT"] == approx(0.1)
    assert m["F_chance"] == approx(0.02)  # 0.2/3 * 0.3
    assert m["BT_chance"] == approx(0.02)
    assert m["F_true"] == approx(0.18)
    assert m["BT_true"] == approx(0.08)
    assert m["F_max"] == approx(2.2 / 3)  # (4*0.8-1)/3 = 0.7333
    assert round(m["F_max"], 4) == 0.7333
    assert m["BT_max"] == approx(0.6)  # (4*0.7-1)/3
    assert m["F_rel"] == approx(0.25)


def test_worked_example_2_k2(no_warnings):
    m = transition_metrics(bits("1010"), bits("0110"), k=2)
    assert (m["n"], m["n_11"], m["n_10"], m["n_01"], m["n_00"]) == (4, 1, 1, 1, 1)
    assert m["F"] == approx(0.25)
    assert m["BT"] == approx(0.25)
    assert m["F_chance"] == approx(0.25)  # 0.5/1 * 0.5
    assert m["F_true"] == 0.0
    assert m["BT_true"] == 0.0
    assert m["F_max"] == 0.0
    assert m["BT_max"] == 0.0
    assert m["F_rel"] == approx(0.5)


def test_worked_example_3_80_to_70(no_warnings):
    # 80 right before, 70 of them kept, nothing gained, N=100; the paper's prose says "about 6%",
    # its formula gives 8% (docs/method.md §1): implement the formula.
    before = np.r_[np.ones(80, int), np.zeros(20, int)]
    after = np.r_[np.ones(70, int), np.zeros(30, int)]
    m = transition_metrics(before, after, k=4)
    assert (m["n"], m["n_11"], m["n_10"], m["n_01"], m["n_00"]) == (100, 70, 10, 0, 20)
    assert m["F"] == approx(0.10)
    assert m["BT"] == 0.0
    assert m["F_chance"] == approx(0.02)
    assert m["F_true"] == approx(0.08)
    assert m["BT_true"] == 0.0
    assert round(m["F_max"], 4) == 0.7333
    assert m["BT_max"] == approx(0.6)
    assert m["F_rel"] == approx(0.125)


# --- k handling --------------------------------------------------------------------------------


def test_k_eff_constant_and_mixed(no_warnings):
    assert k_eff(4) == 4.0
    assert k_eff([4, 4, 4]) == approx(4.0)
    assert k_eff([3, 4, 5]) == approx(1 / ((1 / 3 + 1 / 4 + 1 / 5) / 3))  # 180/47 = 3.8298
    assert k_eff([3, 4, 5]) == approx(180 / 47)


@pytest.mark.parametrize("ks", [None, [], [3, float("nan"), 5], [3, None, 5], [1, 4], 1, 0.5, float("nan")])
def test_k_eff_unusable_is_nan(ks, no_warnings):
    assert math.isnan(k_eff(ks))


def test_mixed_k_uses_k_eff(no_warnings):
    # ARC-like items with 3, 4 and 5 options, k_eff = 180/47.
    m = transition_metrics(bits("110"), bits("100"), k=[3, 4, 5])
    keff = 180 / 47
    assert m["k"] == approx(keff)
    acc_b, acc_a = 2 / 3, 1 / 3
    assert m["F_chance"] == approx((1 - acc_b) / (keff - 1) * (1 - acc_a))
    assert m["F_true"] == approx(1 / 3 - (1 - acc_b) / (keff - 1) * (1 - acc_a))
    assert m["F_max"] == approx((keff * acc_b - 1) / (keff - 1))
    assert m["BT_max"] == approx(max((keff * acc_a - 1) / (keff - 1), 0.0))


@pytest.mark.parametrize("k", [None, float("nan"), [4, float("nan"), 4], 1, [4, 1, 4]])
def test_no_usable_k_leaves_chance_columns_nan(k, no_warnings):
    m = transition_metrics(bits("110"), bits("011"), k=k)
    assert math.isnan(m["k"])
    for c in CHANCE_COLUMNS:
        assert math.isnan(m[c]), c
    assert m["F"] == approx(1 / 3)
    assert m["BT"] == approx(1 / 3)
    assert m["acc_before"] == approx(2 / 3)
    assert m["F_rel"] == approx(0.5)


def test_empty_and_nothing_correct_before(no_warnings):
    m = transition_metrics([], [], k=4)
    assert (m["n"], m["n_11"], m["n_10"], m["n_01"], m["n_00"]) == (0, 0, 0, 0, 0)
    for c in ("acc_before", "acc_after", "F", "BT", "F_rel", *CHANCE_COLUMNS):
        assert math.isnan(m[c]), c
    m = transition_metrics(bits("000"), bits("010"), k=4)
    assert math.isnan(m["F_rel"])
    assert m["F_max"] == 0.0
    assert m["BT"] == approx(1 / 3)


def test_accepts_bools_and_float_zero_one(no_warnings):
    a = transition_metrics([True, False], [False, False], k=2)
    b = transition_metrics(np.array([1.0, 0.0]), pd.Series([0, 0]), k=2)
    assert a == b


# --- bad input ---------------------------------------------------------------------------------


def test_length_mismatch():
    with pytest.raises(ValueError, match=r"same items: 3 vs 2"):
        transition_metrics([1, 0, 1], [1, 0])


@pytest.mark.parametrize("bad", [[1, 2, 0], [1, 0.5, 0], [1, float("nan"), 0], [1, -1, 0]])
def test_non_binary(bad):
    with pytest.raises(ValueError, match=r"only 0/1.*binarise"):
        transition_metrics(bad, [1, 0, 1])
    with pytest.raises(ValueError, match=r"after must contain only 0/1"):
        transition_metrics([1, 0, 1], bad)


def test_wrong_k_length_and_shape():
    with pytest.raises(ValueError, match=r"k has 2 entries but there are 3 items"):
        transition_metrics([1, 0, 1], [1, 0, 1], k=[4, 4])
    with pytest.raises(ValueError, match=r"1-D"):
        transition_metrics([[1, 0]], [[1, 0]])


# --- hypothesis properties ---------------------------------------------------------------------


@st.composite
def paired_runs(draw):
    n = draw(st.integers(0, 60))
    before = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    after = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    k = draw(
        st.one_of(
            st.none(),
            st.integers(1, 20),
            st.lists(st.integers(2, 20), min_size=n, max_size=n),
        )
    )
    return before, after, k


def same(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or x == y


@given(paired_runs())
def test_properties(run):
    before, after, k = run
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = transition_metrics(before, after, k)
        s = transition_metrics(after, before, k)
    assert m["n_11"] + m["n_10"] + m["n_01"] + m["n_00"] == m["n"] == len(before)
    assert same(m["F_chance"], m["BT_chance"])
    if not math.isnan(m["F_true"]):
        assert 0.0 <= m["F_true"] <= m["F"]
        assert 0.0 <= m["BT_true"] <= m["BT"]
        assert 0.0 <= m["F_max"] <= 1.0
    for x, y in [
        ("F", "BT"),
        ("F_max", "BT_max"),
        ("F_true", "BT_true"),
        ("acc_before", "acc_after"),
        ("n_10", "n_01"),
    ]:
        assert same(m[x], s[y]) and same(m[y], s[x]), (x, y)


@given(paired_runs())
def test_one_seed_agreement_equals_single_seed(run):
    before, after, k = run
    m = transition_metrics(before, after, k)
    s = seed_agreement_metrics(np.reshape(before, (-1, 1)), np.reshape(after, (-1, 1)), k)
    assert s["n_agree"] == s["n"] == m["n"]
    for c in ("n_11", "n_10", "n_01", "n_00"):
        assert s[c] == m[c]
    for c in ("k", "acc_before", "acc_after", "F", "BT", "F_chance", "F_true", "BT_true"):
        assert same(s[c], m[c]) or s[c] == approx(m[c]), c


# --- seed-agreement variant --------------------------------------------------------------------


def test_seed_agreement_hand_case(no_warnings):
    # rows: items; columns: seeds 0 and 1
    before = np.array([[1, 1], [1, 1], [1, 0], [0, 0], [0, 0], [1, 1]])
    after = np.array([[1, 1], [0, 0], [0, 0], [1, 1], [0, 1], [0, 0]])
    # per-seed transitions: 11/11 agree, 10/10 agree, 10/00 no, 01/01 agree, 00/01 no, 10/10 agree
    m = seed_agreement_metrics(before, after, k=4)
    assert tuple(m) == SEED_AGREEMENT_COLUMNS
    assert (m["n"], m["n_seeds"], m["n_agree"]) == (6, 2, 4)
    assert (m["n_11"], m["n_10"], m["n_01"], m["n_00"]) == (1, 2, 1, 0)
    assert m["F"] == approx(2 / 6)  # over all 6 items, not the 4 agreeing ones
    assert m["BT"] == approx(1 / 6)
    assert m["acc_before"] == approx(7 / 12)
    assert m["acc_after"] == approx(5 / 12)
    # unknown fractions u = (1-acc)/(1-1/4): u_b = (5/12)/(3/4) = 5/9, u_a = (7/12)/(3/4) = 7/9;
    # chance = u_b * (1/4)**2 * u_a * (3/4)**2 = 5/9 * 7/9 * 1/16 * 9/16 = 35/2304
    assert m["F_chance"] == approx(35 / 2304)
    assert m["BT_chance"] == approx(35 / 2304)
    assert m["F_true"] == approx(733 / 2304)  # 768/2304 - 35/2304
    assert m["BT_true"] == approx(349 / 2304)  # 384/2304 - 35/2304


def test_seed_agreement_without_k_and_bad_input(no_warnings):
    m = seed_agreement_metrics([[1, 1], [0, 1]], [[0, 0], [1, 1]])
    assert (m["n_agree"], m["n_10"], m["n_01"]) == (1, 1, 0)
    assert m["F"] == approx(0.5)
    assert math.isnan(m["F_chance"]) and math.isnan(m["F_true"])
    with pytest.raises(ValueError, match=r"2-D"):
        seed_agreement_metrics([1, 0], [1, 0])
    with pytest.raises(ValueError, match=r"same \(n_items, n_seeds\) shape"):
        seed_agreement_metrics([[1, 0]], [[1, 0, 1]])
    with pytest.raises(ValueError, match=r"only 0/1"):
        seed_agreement_metrics([[1, 3]], [[1, 0]])


# --- aggregation (docs/method.md §2) ---------------------------------------------------------------------


def row(category: str, subtask: str, seed: int, n: int, n_10: int, f_true: float, acc: float) -> dict:
    """A subtask row with chosen F (=n_10/n), F_true and acc_before; the rest NaN or 0."""
    r = {c: float("nan") for c in METRIC_COLUMNS}
    r.update(n=n, n_11=0, n_10=n_10, n_01=0, n_00=n - n_10, F=n_10 / n, F_true=f_true, acc_before=acc)
    r.update(category=category, subtask=subtask, seed=seed)
    return r


@pytest.fixture
def table() -> pd.DataFrame:
    return pd.DataFrame(
        [
            #   category subtask seed  n  n_10 F_true  acc_before       F
            row("Math", "m1", 0, 10, 1, 0.08, 0.50),  # 0.10
            row("Math", "m2", 0, 30, 9, 0.20, 0.70),  # 0.30
            row("Logic", "l1", 0, 20, 1, float("nan"), 0.60),  # 0.05 (k unknown)
            row("Math", "m1", 1, 10, 2, 0.16, 0.40),  # 0.20
            row("Math", "m2", 1, 30, 6, 0.12, 0.80),  # 0.20
            row("Logic", "l1", 1, 20, 3, float("nan"), 0.90),  # 0.15
        ]
    )


def test_aggregate_macro_by_hand(table, no_warnings):
    out = aggregate(table)
    assert list(out.columns[:4]) == ["category", "average", "n_subtasks", "n_seeds"]
    assert list(out.columns[4:]) == [f"{m}_{s}" for m in RATE_METRICS for s in ("mean", "std")]
    assert list(out["category"]) == ["Logic", "Math", "OVERALL"]
    assert set(out["average"]) == {"macro"}
    out = out.set_index("category")
    assert out.loc["Logic", "n_subtasks"] == 1 and out.loc["Math", "n_subtasks"] == 2
    assert out.loc["OVERALL", "n_subtasks"] == 3 and out.loc["OVERALL", "n_seeds"] == 2

    # F. Math: seed0 (0.10+0.30)/2 = 0.20, seed1 (0.20+0.20)/2 = 0.20 -> mean 0.20, std 0
    assert out.loc["Math", "F_mean"] == approx(0.20)
    assert out.loc["Math", "F_std"] == approx(0.0)
    # Logic: 0.05, 0.15 -> mean 0.10, std sqrt((0.05**2 + 0.05**2) / 1)
    assert out.loc["Logic", "F_mean"] == approx(0.10)
    assert out.loc["Logic", "F_std"] == approx(math.sqrt(0.05**2 + 0.05**2))
    # OVERALL per seed = mean of categories: seed0 (0.20+0.05)/2 = 0.125, seed1 (0.20+0.15)/2 = 0.175
    assert out.loc["OVERALL", "F_mean"] == approx(0.15)
    assert out.loc["OVERALL", "F_std"] == approx(math.sqrt(0.025**2 + 0.025**2))

    # acc_before. Math: seed0 (0.5+0.7)/2 = 0.6, seed1 (0.4+0.8)/2 = 0.6; Logic 0.6, 0.9
    assert out.loc["Math", "acc_before_mean"] == approx(0.6)
    assert out.loc["Logic", "acc_before_mean"] == approx(0.75)
    assert out.loc["Logic", "acc_before_std"] == approx(math.sqrt(2 * 0.15**2))
    # OVERALL: seed0 (0.6+0.6)/2 = 0.6, seed1 (0.6+0.9)/2 = 0.75
    assert out.loc["OVERALL", "acc_before_mean"] == approx(0.675)
    assert out.loc["OVERALL", "acc_before_std"] == approx(math.sqrt(2 * 0.075**2))

    # F_true: Logic has none (NaN), so OVERALL per seed is Math's alone: seed0 (0.08+0.20)/2 = 0.14,
    # seed1 (0.16+0.12)/2 = 0.14; the NaN does not leak into F or acc (checked above).
    assert math.isnan(out.loc["Logic", "F_true_mean"]) and math.isnan(out.loc["Logic", "F_true_std"])
    assert out.loc["Math", "F_true_mean"] == approx(0.14)
    assert out.loc["OVERALL", "F_true_mean"] == approx(0.14)
    assert out.loc["OVERALL", "F_true_std"] == approx(0.0)
    assert out["BT_max_mean"].isna().all()


def test_aggregate_micro_by_hand(table, no_warnings):
    out = aggregate_micro(table)
    assert list(out.columns) == list(aggregate(table).columns)
    assert set(out["average"]) == {"micro"}
    out = out.set_index("category")
    # Math pooled: seed0 (1+9)/(10+30) = 0.25, seed1 (2+6)/40 = 0.20 -> mean 0.225, std sqrt(2*0.025**2)
    assert out.loc["Math", "F_mean"] == approx(0.225)
    assert out.loc["Math", "F_std"] == approx(math.sqrt(2 * 0.025**2))
    # OVERALL pooled over all 60 items: seed0 (1+9+1)/60, seed1 (2+6+3)/60 -> both 11/60
    assert out.loc["OVERALL", "F_mean"] == approx(11 / 60)
    assert out.loc["OVERALL", "F_std"] == approx(0.0)
    # F_true weighted by n over subtasks that have it: seed0 (10*0.08+30*0.20)/40 = 0.17,
    # seed1 (10*0.16+30*0.12)/40 = 0.13 -> mean 0.15, std sqrt(2*0.02**2)
    assert out.loc["OVERALL", "F_true_mean"] == approx(0.15)
    assert out.loc["OVERALL", "F_true_std"] == approx(math.sqrt(2 * 0.02**2))


def test_aggregate_single_seed_std_nan(table, no_warnings):
    for fn in (aggregate, aggregate_micro):
        out = fn(table[table["seed"] == 0]).set_index("category")
        assert (out["n_seeds"] == 1).all()
        assert out.loc["OVERALL", "F_mean"] == approx(0.125 if fn is aggregate else 11 / 60)
        assert out[[c for c in out.columns if c.endswith("_std")]].isna().all().all()


def test_aggregate_from_transition_metrics_rows(no_warnings):
    rows = [
        dict(transition_metrics(bits("1111111100"), bits("1111110010"), 4), category="C", subtask="a", seed=0),
        dict(transition_metrics(bits("1010"), bits("0110"), 2), category="C", subtask="b", seed=0),
    ]
    out = aggregate(pd.DataFrame(rows)).set_index("category")
    assert out.loc["C", "F_true_mean"] == approx((0.18 + 0.0) / 2)
    assert out.loc["OVERALL", "F_rel_mean"] == approx((0.25 + 0.5) / 2)
    micro = aggregate_micro(pd.DataFrame(rows)).set_index("category")
    assert micro.loc["C", "F_mean"] == approx(3 / 14)  # (2+1) forgotten of 10+4 items
    assert micro.loc["C", "F_rel_mean"] == approx(3 / 10)  # (2+1) of (8+2) correct before


def test_aggregate_rejects_bad_tables(table):
    with pytest.raises(ValueError, match=r"same \(category, subtask, seed\)"):
        aggregate(pd.concat([table, table.iloc[[0]]]))
    with pytest.raises(ValueError, match=r"lacks columns \['seed'\]"):
        aggregate(table.drop(columns="seed"))
    with pytest.raises(ValueError, match=r"empty"):
        aggregate_micro(table.iloc[:0])
