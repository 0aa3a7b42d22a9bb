"""Recipe comparison: two pairs with one before, compared item by item (hand-worked, then simulated)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval import PairingError
from postforget_lmeval.analyses._compare import compare, flip_test


def _samples(before: str, after: str, subtask: str = "s", category: str = "c", seed: str = "0", k: float = 4.0):
    """A pair's samples table: one row per item, 0/1 strings before and after."""
    n = len(before)
    return pd.DataFrame(
        {
            "category": category,
            "subtask": subtask,
            "doc_id": np.arange(n),
            "seed": seed,
            "seed_before": seed,
            "replicate": 0,
            "before": [int(c) for c in before],
            "after": [int(c) for c in after],
            "k": k,
        }
    )


def test_hand_worked_difference_and_discordant_counts():
    # before 11111100; A loses items 1-3; B loses item 4 and gains item 7 (k = 4, acc before 0.75)
    a = _samples("11111100", "10001100")
    b = _samples("11111100", "11110101")
    table = compare(a, b, n_boot=200).set_index("category")
    overall = table.loc["OVERALL"]
    # A: F 3/8, chance (1/4)(5/8)/3; B: F 1/8 = BT, chance (1/4)(1/4)/3
    f_true_a, f_true_b = 3 / 8 - (1 / 4) * (5 / 8) / 3, 1 / 8 - (1 / 4) * (1 / 4) / 3
    assert overall["F_true_a"] == pytest.approx(f_true_a)
    assert overall["F_true_b"] == pytest.approx(f_true_b)
    assert overall["F_true_diff"] == pytest.approx(f_true_a - f_true_b)
    assert overall["BT_true_diff"] == pytest.approx(0.0 - f_true_b)
    assert overall["F_true_diff_lo"] <= overall["F_true_diff"] <= overall["F_true_diff_hi"]
    counts = overall[["n_items", "forgot_a_only", "forgot_b_only", "gained_a_only", "gained_b_only"]].tolist()
    assert counts == [8, 3, 1, 0, 1]
    # one seed, no clusters: the exact McNemar p of (3, 1) is 2 * (1 + 4) / 16; of (0, 1) it is 1
    assert overall["p_forgot"] == pytest.approx(0.625, abs=0.02)
    assert overall["p_gained"] == 1.0
    assert table.loc["c", "F_true_diff"] == pytest.approx(overall["F_true_diff"])  # one category: the same


def test_items_of_one_pair_only_do_not_count_and_categories_average_macro():
    a = pd.concat([_samples("1111", "0000", "s1", "c1"), _samples("11", "11", "s2", "c2")])
    b = pd.concat([_samples("11111", "11111", "s1", "c1"), _samples("11", "00", "s2", "c2")])  # item 4: B only
    table = compare(a, b, n_boot=50).set_index("category")
    assert table.loc["c1", "n_items"] == 4 and table.loc["OVERALL", "n_items"] == 6
    assert table.loc["c1", "F_true_diff"] == pytest.approx(1.0)
    assert table.loc["c2", "F_true_diff"] == pytest.approx(-1.0)
    assert table.loc["OVERALL", "F_true_diff"] == pytest.approx(0.0)  # the mean of the two categories
    assert table.loc["OVERALL", "forgot_a_only"] == 4 and table.loc["OVERALL", "forgot_b_only"] == 2


def test_pairs_with_different_before_runs_are_refused():
    with pytest.raises(PairingError, match="do not share a before run: item 1 of s"):
        compare(_samples("1111", "0000"), _samples("1011", "0000"))
    with pytest.raises(PairingError, match="no item in common"):
        compare(_samples("11", "00", "s1"), _samples("11", "00", "s2"))


def test_the_flip_test_moves_whole_clusters():
    d = np.array([1.0, 1.0, 1.0, 1.0, 0.0])
    rng = np.random.default_rng(0)
    # four items alone: a sign test of 4 of 4 (p = 2/16); one cluster of four: a single unit (p = 1)
    assert flip_test(d, np.array(["a", "b", "c", "d", "e"]), rng) == pytest.approx(0.125, abs=0.01)
    assert flip_test(d, np.array(["x", "x", "x", "x", "e"]), rng) == 1.0
    assert flip_test(np.zeros(3), np.array(["a", "b", "c"]), rng) == 1.0


def _simulate(rng, n_items, n_seeds, p_a, p_b, k=4):
    """Two recipes on one before (every item known before under each seed): after-A forgets an item with
    probability p_a and then guesses among k options; after-B likewise with p_b."""
    frames = {"a": [], "b": []}
    for seed in range(n_seeds):
        for name, p in (("a", p_a), ("b", p_b)):
            lost = rng.random(n_items) < p
            after = np.where(lost, rng.random(n_items) < 1 / k, 1).astype(int)
            frames[name].append(_samples("1" * n_items, "".join(map(str, after)), seed=str(seed)))
    return pd.concat(frames["a"]), pd.concat(frames["b"])


@pytest.mark.slow
def test_simulation_no_difference_coverage_and_type_one_error():
    """Equal recipes: the difference interval covers 0 and the paired test rejects at its level."""
    rng = np.random.default_rng(20261128)
    trials, covered, rejected = 300, 0, 0
    for t in range(trials):
        a, b = _simulate(rng, n_items=120, n_seeds=2, p_a=0.15, p_b=0.15)
        row = compare(a, b, n_boot=200, seed=t, n_perm=2000).set_index("category").loc["OVERALL"]
        covered += row["F_true_diff_lo"] <= 0.0 <= row["F_true_diff_hi"]
        rejected += row["p_forgot"] < 0.05
    assert covered / trials >= 0.92, covered / trials
    assert rejected / trials <= 0.07, rejected / trials


@pytest.mark.slow
def test_simulation_a_real_difference_is_found_and_estimated_without_bias():
    rng = np.random.default_rng(7)
    diffs, found = [], 0
    for t in range(100):
        a, b = _simulate(rng, n_items=200, n_seeds=1, p_a=0.20, p_b=0.05)
        row = compare(a, b, n_boot=100, seed=t, n_perm=2000).set_index("category").loc["OVERALL"]
        diffs.append(row["F_true_diff"])
        found += row["p_forgot"] < 0.05
    # with everything known before, acc_b = 1 and the chance baseline is 0: F_true = F = p (1 - 1/k)
    assert np.mean(diffs) == pytest.approx((0.20 - 0.05) * 0.75, abs=0.01)
    assert found / 100 >= 0.95
