"""McNemar p-values, Benjamini-Hochberg q-values and the bootstrap intervals, on hand-worked and simulated data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval import metrics
from postforget_lmeval.analyses import _bootstrap as bootstrap
from postforget_lmeval.analyses._significance import mcnemar_p, significance_table


@pytest.mark.parametrize(
    ("n_10", "n_01", "expected"),
    [
        (0, 0, 1.0),  # nothing changed
        (3, 0, 0.25),  # 2 * (1/2)^3
        (5, 0, 0.0625),  # 2 * (1/2)^5
        (1, 1, 1.0),
        (6, 1, 16 / 128),  # 2 * (1 + 7 + 0) ... : P(X<=1) = 8/128, two-sided 16/128
        (10, 2, 2 * (1 + 12 + 66) / 4096),
    ],
)
def test_mcnemar_hand_worked(n_10: int, n_01: int, expected: float) -> None:
    assert mcnemar_p(n_10, n_01) == pytest.approx(expected, rel=1e-12)


def test_significance_table_flags_and_directions() -> None:
    subtasks = pd.DataFrame(
        {
            "subtask": ["a", "b", "c"],
            "category": ["X", "X", "Y"],
            "seed": ["0", "0", "0"],
            "n": [100, 100, 100],
            "n_10": [20, 3, 0],
            "n_01": [1, 4, 12],
        }
    )
    table = significance_table(subtasks)
    # p: 2 * P(X <= min) under Binomial(n_10 + n_01, 1/2), capped at 1
    p = [2 * (1 + 21) / 2**21, 1.0, 2 / 2**12]
    assert table["p_mcnemar"].tolist() == pytest.approx(p, rel=1e-12)
    # BH over m = 3: sorted p (a, c, b) times m / rank = 3 p_a, 3/2 p_c, p_b; then the running minimum from the top
    assert table["q_bh"].tolist() == pytest.approx([3 * p[0], 1.0, 1.5 * p[2]], rel=1e-12)
    assert table["significant"].tolist() == [True, False, True]
    assert table["direction"].tolist() == ["forgetting", "backward_transfer", "backward_transfer"]


def _items(subtask: str, category: str, seed: str, before: np.ndarray, after: np.ndarray, k: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "subtask": subtask,
            "category": category,
            "seed": seed,
            "doc_id": np.arange(len(before)),
            "before": before.astype(np.int8),
            "after": after.astype(np.int8),
            "k": k,
        }
    )


def test_observed_replicate_reproduces_the_metrics_and_the_macro_average() -> None:
    rng = np.random.default_rng(3)
    parts = []
    for subtask, category, k in (("a", "X", 4.0), ("b", "X", 3.0), ("c", "Y", 5.0)):
        for seed in ("0", "1"):
            parts.append(_items(subtask, category, seed, rng.random(80) < 0.6, rng.random(80) < 0.5, k))
    samples = pd.concat(parts, ignore_index=True)
    reps = bootstrap.replicates(samples, n_boot=5, seed=0)
    observed = reps[reps["replicate"] == -1].set_index(["subtask", "seed"])
    rows = []
    for (subtask, seed), g in samples.groupby(["subtask", "seed"]):
        m = metrics.transition_metrics(g["before"], g["after"], k=g["k"].to_numpy())
        assert observed.loc[(subtask, seed), "F_true"] == pytest.approx(m["F_true"], abs=1e-12)
        assert observed.loc[(subtask, seed), "BT_true"] == pytest.approx(m["BT_true"], abs=1e-12)
        rows.append({"subtask": subtask, "category": g["category"].iloc[0], "seed": seed, **m})
    headline = metrics.aggregate(pd.DataFrame(rows)).set_index("category")["F_true_mean"]
    macro = metrics.macro_means(reps[reps["replicate"] == -1], bootstrap.RATES)["F_true"]
    assert macro.to_dict() == pytest.approx(headline.to_dict(), abs=1e-12)


def test_same_seed_same_intervals_and_ordered_bounds() -> None:
    rng = np.random.default_rng(0)
    samples = _items("a", "X", "0", rng.random(200) < 0.7, rng.random(200) < 0.5, 4.0)
    first = bootstrap.intervals(samples, n_boot=200, seed=7)
    second = bootstrap.intervals(samples, n_boot=200, seed=7)
    pd.testing.assert_frame_equal(first[0], second[0])
    row = first[0].iloc[0]
    assert row["F_true_lo"] <= row["F_true_hi"]
    assert first[1]["category"].tolist() == ["X", "OVERALL"]


def test_bootstrap_interval_covers_the_true_value_at_about_the_nominal_rate() -> None:
    """200 simulated sub-benchmarks of 400 items from one known population; the 95% intervals of F_true
    should cover the population F_true in about 95% of them (binomial sd ~1.5 points)."""
    k, n, n_sets = 4.0, 400, 200
    p = {"11": 0.45, "10": 0.20, "01": 0.10, "00": 0.25}
    acc_b, acc_a = p["11"] + p["10"], p["11"] + p["01"]
    true_f = p["10"] - (1 - acc_b) * (1 - acc_a) / (k - 1)
    true_bt = p["01"] - (1 - acc_b) * (1 - acc_a) / (k - 1)
    rng = np.random.default_rng(2026)
    codes = rng.choice(4, size=(n_sets, n), p=[p["00"], p["01"], p["10"], p["11"]])
    samples = pd.concat(
        [_items(f"s{i:03d}", "X", "0", codes[i] >= 2, codes[i] % 2 == 1, k) for i in range(n_sets)],
        ignore_index=True,
    )
    per_row, _ = bootstrap.intervals(samples, n_boot=1000, seed=11)
    cover_f = ((per_row["F_true_lo"] <= true_f) & (true_f <= per_row["F_true_hi"])).mean()
    cover_bt = ((per_row["BT_true_lo"] <= true_bt) & (true_bt <= per_row["BT_true_hi"])).mean()
    assert 0.90 <= cover_f <= 0.99
    assert 0.90 <= cover_bt <= 0.99


def test_mcnemar_equals_scipys_exact_binomial_test_on_a_grid() -> None:
    from scipy import stats

    grid = [(a, b) for a in range(0, 41) for b in range(0, 41)]
    got = mcnemar_p(np.array([a for a, _ in grid]), np.array([b for _, b in grid]))
    want = [stats.binomtest(a, a + b, 0.5).pvalue if a + b else 1.0 for a, b in grid]
    assert got.tolist() == pytest.approx(want, rel=1e-9)
