"""McNemar p-values, Benjamini-Hochberg q-values and the bootstrap intervals, on hand-worked and simulated data."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from postforget_lmeval.analyses import bootstrap
from postforget_lmeval import metrics
from postforget_lmeval.analyses.macro import macro_means
from postforget_lmeval.analyses.significance import bh_qvalues, mcnemar_p, significance_table


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


@pytest.mark.parametrize(("n_10", "n_01"), [(7, 3), (20, 9), (0, 4), (13, 13), (40, 61)])
def test_mcnemar_matches_scipy_and_is_symmetric(n_10: int, n_01: int) -> None:
    p = mcnemar_p(n_10, n_01)
    assert p == pytest.approx(stats.binomtest(n_10, n_10 + n_01, 0.5).pvalue)
    assert p == pytest.approx(mcnemar_p(n_01, n_10))


def test_mcnemar_and_bh_agree_with_scipy_over_a_grid() -> None:
    """Every table with up to 120 discordant items, and the BH q-values of the whole family, match scipy."""
    pairs = [(a, n - a) for n in range(121) for a in range(n + 1)]
    ours = np.array([mcnemar_p(a, b) for a, b in pairs])
    ref = np.array([1.0 if a + b == 0 else stats.binomtest(a, a + b, 0.5).pvalue for a, b in pairs])
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=0)
    np.testing.assert_allclose(bh_qvalues(ours), stats.false_discovery_control(ours), rtol=1e-12, atol=0)
    few = np.array([0.2, np.nan])  # one test: its q is its p, as in scipy
    assert bh_qvalues(few)[0] == 0.2 and math.isnan(bh_qvalues(few)[1])


def test_bh_hand_worked() -> None:
    # sorted p: 0.01, 0.02, 0.03, 0.5 with m = 4 -> p*m/rank = 0.04, 0.04, 0.04, 0.5 (then running minimum)
    q = bh_qvalues(np.array([0.03, 0.5, 0.01, np.nan, 0.02]))
    assert q[[0, 1, 2, 4]] == pytest.approx([0.04, 0.5, 0.04, 0.04])
    assert math.isnan(q[3])


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
    p = [stats.binomtest(20, 21).pvalue, stats.binomtest(3, 7).pvalue, stats.binomtest(0, 12).pvalue]
    assert table["p_mcnemar"].tolist() == pytest.approx(p)
    assert table["q_bh"].tolist() == pytest.approx(stats.false_discovery_control(p).tolist())
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
    macro = macro_means(reps[reps["replicate"] == -1], bootstrap.RATES)["F_true"]
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


@pytest.mark.parametrize("background_min_items", [0, 10**9])  # in a forked process, and in the caller's
def test_intervals_in_background_are_the_same_intervals(monkeypatch, background_min_items: int) -> None:
    monkeypatch.setattr(bootstrap, "BACKGROUND_MIN_ITEMS", background_min_items)
    rng = np.random.default_rng(1)
    samples = pd.concat(
        [_items(s, c, seed, rng.random(60) < 0.7, rng.random(60) < 0.5, 4.0)
         for s, c in (("a", "X"), ("b", "X"), ("c", "Y")) for seed in ("0", "1")],
        ignore_index=True,
    )  # fmt: skip
    wait, seconds = bootstrap.in_background(samples, n_boot=150, seed=3)
    got = wait()
    # the CPU the process is expected to take: 180 items (60 per sub-benchmark, each under 2 seeds) drawn 150 times
    assert seconds == (pytest.approx(bootstrap._SECONDS_PER_DRAW * 180 * 150) if background_min_items == 0 else 0.0)
    for got_table, want_table in zip(got, bootstrap.intervals(samples, n_boot=150, seed=3)):
        pd.testing.assert_frame_equal(got_table, want_table)
    assert list(got[0].columns) == ["subtask", "seed", *bootstrap.COLUMNS]


@pytest.mark.parametrize("by_items", [False, True])  # the multinomial (one seed's default), items resampled
def test_bootstrap_interval_covers_the_true_value_at_about_the_nominal_rate(monkeypatch, by_items: bool) -> None:
    """200 simulated sub-benchmarks of 400 items from one known population; the 95% intervals of F_true
    should cover the population F_true in about 95% of them (binomial sd ~1.5 points), whichever way the
    replicates are drawn."""
    monkeypatch.setattr(bootstrap, "_by_items", lambda n_items, n_cells: by_items)
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


@pytest.mark.parametrize("trial", range(20))
def test_macro_first_means_are_pandas_groupby_means(trial: int) -> None:
    """macro's means per (by, category, seed), grouped on one fused key, equal pandas' groupby on the columns to
    the last bit, index included (missing keys, categorical and integer keys, NaN values)."""
    from postforget_lmeval.analyses.macro import _means_by

    rng = np.random.default_rng(trial)
    n = int(rng.integers(1, 300))
    rows = pd.DataFrame({
        "replicate": rng.integers(-1, 5, n),
        "category": pd.Categorical(rng.choice(["z", "y", "x"], n)) if trial % 2 else rng.choice(["b", "a", None], n),
        "seed": rng.choice(["0", "1", "10", "2"], n),
        "x": np.where(rng.random(n) < 0.2, np.nan, rng.random(n) * 10.0 ** rng.integers(-3, 5, n)),
    })  # fmt: skip
    keys = ["replicate", "category", "seed"]
    expected = rows.groupby(keys, sort=True, dropna=False)[["x"]].mean()
    pd.testing.assert_frame_equal(_means_by(rows[["x"]], rows, keys), expected, check_exact=True)


def test_draws_started_on_the_joined_items_give_the_intervals_of_samples() -> None:
    """Pairing starts the draws on the joined items (text columns as objects, more columns) before building
    samples.parquet's frame (categorical columns): the same intervals."""
    from postforget_lmeval.analyses import annotate as analyses

    rng = np.random.default_rng(5)
    joined = pd.concat(
        [_items(s, c, seed, rng.random(50) < 0.6, rng.random(50) < 0.5, 4.0)
         for s, c in (("b", "Y"), ("a", "X")) for seed in ("1", "0")],
        ignore_index=True,
    ).assign(answer_before="A", locator_after=7)  # fmt: skip
    samples = joined[["subtask", "category", "doc_id", "seed", "before", "after", "k"]].astype(
        {"subtask": "category", "category": "category", "seed": "category"}
    )
    wait, _ = analyses.start_draws(joined)
    for got, want in zip(wait(), bootstrap.intervals(samples)):
        pd.testing.assert_frame_equal(got, want)
