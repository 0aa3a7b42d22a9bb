"""The bootstrap's replicates against a naive reference that resamples the items themselves, and its draws
against the multinomial distribution of cell counts that resampling items with replacement gives."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from postforget_lmeval import metrics
from postforget_lmeval.analyses import _bootstrap as bootstrap

_UNPAIRED = -1  # an item's code under a seed it was not paired under


def _samples() -> pd.DataFrame:
    """Four sub-benchmarks in two categories, two seeds, k mixed per item; 'b' has items unpaired under
    seed 1 (their code there is missing), 'c' was run under seed 0 only, and one item of 'd' has no k
    (so 'd' has no chance baseline: F_true and BT_true NaN)."""
    rng = np.random.default_rng(42)
    parts = []
    for subtask, category, n, seeds in (
        ("a", "X", 30, ("0", "1")),
        ("b", "X", 25, ("0", "1")),
        ("c", "Y", 40, ("0",)),
        ("d", "Y", 20, ("0", "1")),
    ):
        k = rng.choice([2.0, 3.0, 4.0, 5.0], size=n)
        k[0] = np.nan if subtask == "d" else k[0]
        for seed in seeds:
            keep = np.ones(n, dtype=bool) if (subtask, seed) != ("b", "1") else rng.random(n) < 0.7
            parts.append(
                pd.DataFrame(
                    {
                        "subtask": subtask,
                        "category": category,
                        "seed": seed,
                        "doc_id": np.arange(n)[keep],
                        "before": (rng.random(n) < 0.6).astype(np.int8)[keep],
                        "after": (rng.random(n) < 0.5).astype(np.int8)[keep],
                        "k": k[keep],
                    }
                )
            )
    return pd.concat(parts, ignore_index=True)


def _items(sub: pd.DataFrame) -> tuple[list[str], np.ndarray, np.ndarray | None]:
    """The sub-benchmark's seeds; its items' codes (items x seeds, ``_UNPAIRED`` where unpaired) and their k
    (None if some item has no usable k: no chance baseline then, in any replicate), items in doc_id order."""
    seeds = sorted(sub["seed"].unique())
    wide = sub.assign(code=2 * sub["before"] + sub["after"]).pivot(index="doc_id", columns="seed", values="code")
    codes = wide[seeds].fillna(_UNPAIRED).to_numpy(dtype=int)
    k = sub.groupby("doc_id")["k"].first().loc[wide.index].to_numpy()
    return seeds, codes, k if np.all(k > 1) else None


def _quantiles(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The percentile intervals (``bootstrap.COLUMNS``) of the rates per group of ``keys`` by pandas'
    groupby quantile, the groups in order of appearance."""
    grouped = frame.groupby(keys, sort=False)[list(bootstrap.RATES)]
    tail = (1.0 - bootstrap.LEVEL) / 2.0
    lo, hi = grouped.quantile(tail).add_suffix("_lo"), grouped.quantile(1.0 - tail).add_suffix("_hi")
    return pd.concat([lo, hi], axis=1)[list(bootstrap.COLUMNS)].reset_index()


def _reference(samples: pd.DataFrame, n_boot: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The intervals recomputed replicate by replicate with ``metrics.transition_metrics`` on the resampled
    items: per sub-benchmark, in (category, subtask) order, the items' positions drawn from one generator
    (replicates x items, one draw for every seed)."""
    rng = np.random.default_rng(seed)
    rows = []
    for (category, subtask), sub in samples.groupby(["category", "subtask"], sort=True):
        seeds, codes, k = _items(sub)
        for replicate, pick in enumerate(rng.integers(0, len(codes), size=(n_boot, len(codes)))):
            for s, seed_name in enumerate(seeds):
                paired = pick[codes[pick, s] != _UNPAIRED]
                m = metrics.transition_metrics(
                    codes[paired, s] // 2, codes[paired, s] % 2, k=None if k is None else k[paired]
                )
                rows.append(
                    {
                        "category": category,
                        "subtask": subtask,
                        "seed": seed_name,
                        "replicate": replicate,
                        "F_true": m["F_true"],
                        "BT_true": m["BT_true"],
                    }
                )
    reps = pd.DataFrame(rows)
    macro = metrics.macro_means(reps, bootstrap.RATES, by=["replicate"]).reset_index()
    return _quantiles(reps, ["subtask", "seed"]), _quantiles(macro, ["category"])


def test_intervals_are_those_of_the_naive_reference() -> None:
    samples = _samples()
    per_row, per_cat = bootstrap.intervals(samples, n_boot=200, seed=5)
    want_row, want_cat = _reference(samples, n_boot=200, seed=5)
    keys = [["a", "0"], ["a", "1"], ["b", "0"], ["b", "1"], ["c", "0"], ["d", "0"], ["d", "1"]]
    assert per_row[["subtask", "seed"]].values.tolist() == want_row[["subtask", "seed"]].values.tolist() == keys
    assert per_cat["category"].tolist() == want_cat["category"].tolist() == ["X", "Y", "OVERALL"]
    assert per_row[per_row["subtask"] == "d"][list(bootstrap.COLUMNS)].isna().all().all()
    for got, want in ((per_row, want_row), (per_cat, want_cat)):
        np.testing.assert_allclose(got[list(bootstrap.COLUMNS)], want[list(bootstrap.COLUMNS)], rtol=1e-12, atol=1e-15)


def test_cell_counts_have_the_multinomial_mean_and_covariance() -> None:
    """Over many replicates the mean and covariance of the cell counts are those of Multinomial(n, counts/n),
    within 5 standard errors of their estimates; row 0 holds the observed counts."""
    counts = np.array([12, 1, 5, 9, 3, 20, 2, 8])
    n, n_reps = int(counts.sum()), 20_000
    p = counts / n
    cell = np.random.default_rng(0).permutation(np.repeat(np.arange(len(counts)), counts))  # items in any order
    weights = bootstrap._weights(np.random.default_rng(2024), cell, n_reps)
    assert weights.shape == (1 + n_reps, len(counts)) and (weights.sum(axis=1) == n).all()
    np.testing.assert_array_equal(weights[0], counts)
    draws = weights[1:]
    mean, cov = n * p, n * (np.diag(p) - np.outer(p, p))
    se_mean = np.sqrt(np.diag(cov) / n_reps)
    np.testing.assert_array_less(np.abs(draws.mean(axis=0) - mean), 5 * se_mean)
    centred = draws - mean
    products = centred[:, :, None] * centred[:, None, :]  # replicates x cells x cells; their mean: the covariance
    se_cov = products.std(axis=0) / np.sqrt(n_reps)
    np.testing.assert_array_less(np.abs(products.mean(axis=0) - cov), 5 * se_cov)


def test_a_replicate_without_a_paired_item_under_a_seed_has_no_rate_and_warns_nothing() -> None:
    """Item 0 is lost under seeds 0 and 1, item 1 kept under seed 0 and unpaired under seed 1. Every item is right
    before (chance baseline 0): under seed 0 F_true is the share of item 0 in the replicate (0, 1/2 or 1); under
    seed 1 it is 1 where the replicate drew item 0, and undefined (0/0, no warning) where it drew item 1 twice."""
    samples = pd.DataFrame(
        {"category": "X", "subtask": "a", "seed": ["0", "0", "1"], "doc_id": [0, 1, 0], "before": 1,
         "after": [0, 1, 0], "k": 4.0}
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reps = bootstrap.replicates(samples, n_boot=50, seed=0)
    f = reps.pivot(index="replicate", columns="seed", values="F_true")
    assert set(f["0"]) == {0.0, 0.5, 1.0}
    assert f["1"].isna().tolist() == (f["0"] == 0).tolist() and (f.loc[f["0"] > 0, "1"] == 1).all()


def test_an_item_of_one_option_leaves_no_chance_baseline() -> None:
    """k = 1 is no usable option count (> 1), as for the rescaling bootstrap's raw k: one item lost, one kept, all
    right before (F = 1/2), yet no F_true (with k_eff = 2 / (1/4 + 1) it would be 1/2)."""
    figures = bootstrap.rates(np.array([[1.0, 1.0], [2.0, 0.0]]), np.array([[2.0], [3.0]]), np.array([4.0, 1.0]))
    assert np.isnan(figures["F_true"]).all() and np.isnan(figures["BT_true"]).all()


def test_an_items_first_row_under_a_seed_counts() -> None:
    """Item 0 is logged twice under seed 0 (lost, then kept): its first row counts, so the observed F_true is 1/2
    (items 0 lost and 1 kept, all right before: chance baseline 0)."""
    samples = pd.DataFrame(
        {"category": "X", "subtask": "a", "seed": "0", "doc_id": [0, 0, 1], "before": 1, "after": [0, 1, 1], "k": 4.0}
    )
    reps = bootstrap.replicates(samples, n_boot=3, seed=0)
    assert reps.loc[reps["replicate"] == -1, "F_true"].tolist() == [0.5]


def test_no_paired_item_gives_an_empty_table_with_its_columns() -> None:
    samples = pd.DataFrame(columns=["category", "subtask", "seed", "doc_id", "before", "after", "k"])
    reps = bootstrap.replicates(samples, n_boot=3)
    assert reps.empty and reps.columns.tolist() == ["category", "subtask", "seed", "replicate", "F_true", "BT_true"]
