"""The bootstrap's two ways of drawing replicates: each against a naive per-replicate reference, and both
against the multinomial distribution of cell counts that resampling the items with replacement gives."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval.analyses import bootstrap
from postforget_lmeval import metrics
from postforget_lmeval.analyses.macro import macro_means

_UNPAIRED = 4  # an item's code under a seed it was not paired under: sorts after 0..3, as in bootstrap


def _samples() -> pd.DataFrame:
    """Four sub-benchmarks in two categories, two seeds, k mixed per item; 'b' has items unpaired under
    seed 1 (their code there is missing), 'c' was run under seed 0 only, and one item of 'd' has no k
    (so 'd' has no chance baseline: F_true and BT_true NaN)."""
    rng = np.random.default_rng(42)
    parts = []
    for subtask, category, n, seeds in (
        ("a", "X", 30, ("0", "1")), ("b", "X", 25, ("0", "1")), ("c", "Y", 40, ("0",)), ("d", "Y", 20, ("0", "1"))
    ):  # fmt: skip
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


def _items(sub: pd.DataFrame) -> tuple[list[str], np.ndarray, np.ndarray | None, np.ndarray]:
    """The sub-benchmark's seeds; its items' codes (items x seeds, ``_UNPAIRED`` where unpaired), their k (None
    if some item has no usable k: no chance baseline then, in any replicate) and the first item of each cell,
    the items listed cell by cell: in the lexicographic order of (code under each seed, k if not None)."""
    seeds = sorted(sub["seed"].unique())
    wide = sub.assign(code=2 * sub["before"] + sub["after"]).pivot(index="doc_id", columns="seed", values="code")
    codes = wide[seeds].fillna(_UNPAIRED).to_numpy(dtype=int)
    k = sub.groupby("doc_id")["k"].first().loc[wide.index].to_numpy()
    k = k if np.all(k > 1) else None
    key = codes if k is None else np.column_stack([codes, k])
    order = np.lexsort(key.T[::-1])  # the first column the primary key
    first = np.flatnonzero(np.r_[True, (np.diff(key[order], axis=0) != 0).any(axis=1)])
    return seeds, codes[order], None if k is None else k[order], first


def _quantiles(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The percentile intervals (``bootstrap.COLUMNS``) of the rates per group of ``keys`` by pandas'
    groupby quantile, the groups in order of appearance."""
    grouped = frame.groupby(keys, sort=False)[list(bootstrap.RATES)]
    tail = (1.0 - bootstrap.LEVEL) / 2.0  # 0.025000000000000022, as bootstrap computes it
    lo, hi = grouped.quantile(tail).add_suffix("_lo"), grouped.quantile(1.0 - tail).add_suffix("_hi")
    return pd.concat([lo, hi], axis=1)[list(bootstrap.COLUMNS)].reset_index()


def _reference(samples: pd.DataFrame, n_boot: int, seed: int, draw: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The intervals recomputed replicate by replicate with ``metrics.transition_metrics`` on the resampled
    items: ``draw`` 'items' draws the items' positions (replicates x items, one draw for every seed);
    'multinomial' draws the counts of the cells of equal (codes, k) and repeats each cell's item."""
    rng = np.random.default_rng(seed)
    rows = []
    for (category, subtask), sub in samples.groupby(["category", "subtask"], sort=True):
        seeds, codes, k, first = _items(sub)
        n = len(codes)
        if draw == "items":
            picks = rng.integers(0, n, size=(n_boot, n), dtype=np.int16)
        else:
            counts = np.diff(np.r_[first, n])
            picks = [np.repeat(first, c) for c in rng.multinomial(n, counts / n, size=n_boot)]
        for replicate, pick in enumerate(picks):
            for s, seed_name in enumerate(seeds):
                paired = pick[codes[pick, s] != _UNPAIRED]
                m = metrics.transition_metrics(
                    codes[paired, s] // 2, codes[paired, s] % 2, k=None if k is None else k[paired]
                )
                rows.append({"category": category, "subtask": subtask, "seed": seed_name, "replicate": replicate,
                             "F_true": m["F_true"], "BT_true": m["BT_true"]})  # fmt: skip
    reps = pd.DataFrame(rows)
    macro = macro_means(reps, bootstrap.RATES, by=["replicate"]).reset_index()
    return _quantiles(reps, ["subtask", "seed"]), _quantiles(macro, ["category"])


@pytest.mark.parametrize("draw", ["items", "multinomial"])
def test_intervals_are_those_of_the_naive_reference(monkeypatch, draw: str) -> None:
    monkeypatch.setattr(bootstrap, "_by_items", lambda n_items, n_cells: draw == "items")
    samples = _samples()
    per_row, per_cat = bootstrap.intervals(samples, n_boot=200, seed=5)
    want_row, want_cat = _reference(samples, n_boot=200, seed=5, draw=draw)
    keys = [["a", "0"], ["a", "1"], ["b", "0"], ["b", "1"], ["c", "0"], ["d", "0"], ["d", "1"]]
    assert per_row[["subtask", "seed"]].values.tolist() == want_row[["subtask", "seed"]].values.tolist() == keys
    assert per_cat["category"].tolist() == want_cat["category"].tolist() == ["X", "Y", "OVERALL"]
    assert per_row[per_row["subtask"] == "d"][list(bootstrap.COLUMNS)].isna().all().all()
    for got, want in ((per_row, want_row), (per_cat, want_cat)):
        np.testing.assert_allclose(got[list(bootstrap.COLUMNS)], want[list(bootstrap.COLUMNS)], rtol=1e-12, atol=1e-15)


def test_intervals_are_the_quantiles_of_the_replicates_and_of_their_macro_means() -> None:
    """Exactly pandas' groupby quantiles of the same draws: of replicates() per sub-benchmark and seed, and of
    their macro means per category and OVERALL."""
    samples = _samples()
    per_row, per_cat = bootstrap.intervals(samples, n_boot=300, seed=4)
    reps = bootstrap.replicates(samples, n_boot=300, seed=4)
    reps = reps[reps["replicate"] >= 0]
    want_row = _quantiles(reps, ["subtask", "seed"])
    want_cat = _quantiles(macro_means(reps, bootstrap.RATES, by=["replicate"]).reset_index(), ["category"])
    for got, want in ((per_row, want_row), (per_cat, want_cat)):
        pd.testing.assert_frame_equal(got, want, check_exact=True, check_dtype=False)


def test_item_draws_in_chunks_count_the_chunks_draws(monkeypatch) -> None:
    """Replicates drawn in chunks (3 per chunk, the last one short) count exactly the chunks' positions."""
    counts = np.array([3, 1, 5, 2])  # positions 0-2: cell 0, 3: cell 1, 4-8: cell 2, 9-10: cell 3
    monkeypatch.setattr(bootstrap, "_CHUNK_ITEMS", 3 * counts.sum() + 2)
    got = bootstrap._item_draws(np.random.default_rng(9), counts, 10)
    rng = np.random.default_rng(9)
    picks = np.vstack([rng.integers(0, 11, size=(reps, 11), dtype=np.int16) for reps in (3, 3, 3, 1)])
    cell_of_position = np.repeat(np.arange(4), counts)
    want = np.array([np.bincount(cell_of_position[p], minlength=4) for p in picks])
    np.testing.assert_array_equal(got, want)


def test_item_draws_of_a_large_sub_benchmark_reach_every_item() -> None:
    """Beyond 32767 items the positions are drawn as int32: the last cell's items are drawn too."""
    counts = np.array([30_000, 5_000, 5_000])
    got = bootstrap._item_draws(np.random.default_rng(1), counts, 3)
    assert got.sum(axis=1).tolist() == [40_000] * 3
    assert (got[:, 2] > 4_000).all()


def test_the_cost_model_resamples_many_cells_and_draws_few() -> None:
    assert bootstrap._by_items(400, 60)  # the bench pair's sub-benchmarks: 3 seeds
    assert not bootstrap._by_items(400, 4)  # one seed, one k
    assert not bootstrap._by_items(20_000, 64)


@pytest.mark.parametrize("draw", ["items", "multinomial"])
def test_cell_counts_have_the_multinomial_mean_and_covariance(monkeypatch, draw: str) -> None:
    """Over many replicates the mean and covariance of the cell counts are those of Multinomial(n, counts/n),
    within 5 standard errors of their estimates (the items' replicates in several chunks)."""
    counts = np.array([12, 1, 5, 9, 3, 20, 2, 8])
    n, n_reps = int(counts.sum()), 20_000
    p = counts / n
    monkeypatch.setattr(bootstrap, "_by_items", lambda n_items, n_cells: draw == "items")
    monkeypatch.setattr(bootstrap, "_CHUNK_ITEMS", 1000 * n)
    draws = bootstrap._draws(np.random.default_rng(2024), counts, n_reps)
    assert draws.shape == (n_reps, len(counts)) and (draws.sum(axis=1) == n).all()
    mean, cov = n * p, n * (np.diag(p) - np.outer(p, p))
    se_mean = np.sqrt(np.diag(cov) / n_reps)
    np.testing.assert_array_less(np.abs(draws.mean(axis=0) - mean), 5 * se_mean)
    centred = draws - mean
    products = centred[:, :, None] * centred[:, None, :]  # replicates x cells x cells; their mean: the covariance
    se_cov = products.std(axis=0) / np.sqrt(n_reps)
    np.testing.assert_array_less(np.abs(products.mean(axis=0) - cov), 5 * se_cov)
