"""Items that share a text: the bootstrap that draws whole clusters covers the known F_true at its stated level
on simulated clustered items, where drawing single items does not."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval.analyses import _bootstrap as bootstrap

# transition codes 3: 1->1, 2: 1->0, 1: 0->1, 0: 0->0 and their population shares
CODES = np.array([3, 2, 1, 0])
SHARES = np.array([0.5, 0.2, 0.1, 0.2])
K = 4.0
# population: F = 0.2, acc before 0.7, acc after 0.6, chance 0.3 * 0.4 / 3 = 0.04, F_true = 0.16
F_TRUE = 0.2 - 0.3 * 0.4 / (K - 1)


def _clustered(rng: np.random.Generator, n_clusters: int, size: int, copy: float) -> pd.DataFrame:
    """Each cluster draws a transition; each of its items repeats it with probability ``copy``, else draws its
    own from the same shares: every item's transition has the population shares, items of a text agree."""
    own = rng.choice(CODES, size=(n_clusters, 1), p=SHARES)
    alone = rng.choice(CODES, size=(n_clusters, size), p=SHARES)
    code = np.where(rng.random((n_clusters, size)) < copy, own, alone).ravel()
    cluster = np.repeat(np.arange(n_clusters), size).astype(str)
    return pd.DataFrame(
        {
            "subtask": "stories", "category": "Reading", "seed": "0", "doc_id": np.arange(code.size),
            "before": code // 2, "after": code % 2, "k": K, "cluster": cluster,
        }
    )  # fmt: skip


def _coverage(with_clusters: bool, trials: int = 200) -> float:
    rng = np.random.default_rng(5)
    hits = 0
    for trial in range(trials):
        samples = _clustered(rng, 40, 6, 0.9)
        if not with_clusters:
            samples = samples.drop(columns="cluster")
        per_row, _ = bootstrap.intervals(samples, n_boot=300, seed=trial)
        hits += per_row["F_true_lo"].iloc[0] <= F_TRUE <= per_row["F_true_hi"].iloc[0]
    return hits / trials


def test_cluster_weights_keep_a_cluster_together() -> None:
    weights = bootstrap.cluster_weights(np.random.default_rng(0), np.array(["a", "a", "b", "c", "c", "c"]), 50)
    assert weights[0].tolist() == [1, 1, 1, 1, 1, 1]  # row 0: the observed data
    assert (weights[:, 0] == weights[:, 1]).all() and (weights[:, 3] == weights[:, 5]).all()
    assert (weights[:, [0, 2, 3]].sum(axis=1) == 3).all()  # three clusters drawn per replicate


@pytest.mark.slow
def test_cluster_bootstrap_covers_where_the_item_bootstrap_fails() -> None:
    """200 simulated sub-benchmarks of 40 texts with 6 questions each, 95% intervals of F_true."""
    items, clusters = _coverage(False), _coverage(True)
    assert 0.90 <= clusters <= 0.99, f"cluster bootstrap covers {clusters:.0%}"
    assert items < 0.85, f"item bootstrap covers {items:.0%}"


def test_pairing_carries_the_cluster_to_the_bootstrap(tmp_path) -> None:
    from postforget_lmeval import pair
    from tests.helpers.lmeval_runs import pf_record, sample_line, write_run

    for side, bits in (("before", "11111111"), ("after", "11001100")):
        lines = []
        for i, b in enumerate(bits):
            record = {**pf_record("mctest_main", int(b), category="Knowledge/QA"), "cluster": f"story{i // 4}"}
            lines.append(sample_line(i, None, record=record))
        write_run(tmp_path / side, {"postforget_mctest_main": lines}, seed=0)
    result = pair(tmp_path / "before", tmp_path / "after")
    assert result.samples["cluster"].tolist() == ["story0"] * 4 + ["story1"] * 4
    assert result.summary["analyses"]["bootstrap"]["clustered_subtasks"] == ["mctest_main"]
    # two stories, each losing 2 of 4 items and right on all before (no chance baseline left): every replicate
    # draws two whole stories, so F_true is 0.5 in each; drawing items would spread it
    row = result.subtasks.iloc[0]
    assert row["F_true"] == row["F_true_lo"] == row["F_true_hi"] == 0.5


def _none_lost(stories: dict[str, list[tuple[str | None, int]]], n_boot: int = 2000) -> dict[str, float]:
    """Per sub-benchmark: the share of bootstrap replicates that drew none of its lost items. ``stories``: per
    sub-benchmark its items (doc_id = position) as (cluster key or None, 1 if lost 1->0 else 0 for 1->1). Every
    item is right before, so the chance baseline is 0 and F_true is 0 exactly when no lost item was drawn."""
    samples = pd.DataFrame(
        [
            {"category": "Reading", "subtask": name, "seed": "0", "doc_id": doc, "k": K, "before": 1,
             "after": 1 - lost, "cluster": key}
            for name, items in stories.items()
            for doc, (key, lost) in enumerate(items)
        ]
    )  # fmt: skip
    reps = bootstrap.replicates(samples, n_boot=n_boot, seed=1)
    reps = reps[reps["replicate"] >= 0]
    return (reps["F_true"] == 0).groupby(reps["subtask"]).mean().to_dict()


def test_cluster_keys_belong_to_their_own_sub_benchmark() -> None:
    """Two sub-benchmarks reuse doc_ids 0-5 and the key names: ``stories`` pairs items 0-1, 2-3, 4-5, ``single``
    gives each item its own story. A replicate draws no lost item with probability (2/3)^3 = 0.30 when the two
    lost items are one story of three, (4/6)^6 = 0.088 when they are 2 of 6 single items."""
    none = _none_lost(
        {
            "stories": [("s0", 1), ("s0", 1), ("s1", 0), ("s1", 0), ("s2", 0), ("s2", 0)],
            "single": [("s0", 1), ("s1", 1), ("s2", 0), ("s3", 0), ("s4", 0), ("s5", 0)],
        }
    )
    assert none["stories"] == pytest.approx((2 / 3) ** 3, abs=0.035)
    assert none["single"] == pytest.approx((4 / 6) ** 6, abs=0.035)


def test_items_without_a_key_are_each_drawn_alone() -> None:
    """In a clustered sub-benchmark, items without a key are clusters of one, not one cluster of all the keyless
    items: two lost keyless items among stories s0, s1 are missed with probability (2/4)^4 = 0.0625 (one shared
    cluster: (2/3)^3 = 0.30). The keyed items stay with their story (the sub-benchmark is not drawn item by item):
    a lost story of two among 4 clusters is missed with probability (3/4)^4 = 0.32 (items: (4/6)^6 = 0.088)."""
    none = _none_lost(
        {
            "keyless_lost": [("s0", 0), ("s0", 0), ("s1", 0), ("s1", 0), (None, 1), (None, 1)],
            "story_lost": [("s0", 1), ("s0", 1), ("s1", 0), ("s1", 0), (None, 0), (None, 0)],
        }
    )
    assert none["keyless_lost"] == pytest.approx((2 / 4) ** 4, abs=0.035)
    assert none["story_lost"] == pytest.approx((3 / 4) ** 4, abs=0.035)


def test_cluster_keys_follow_their_items_when_subtask_and_category_orders_differ() -> None:
    """Sub-benchmark 'b' (category X, drawn first) has two stories that each lose one of their two items: every
    replicate draws two stories, so its F_true is 1/2 in all (all right before: chance baseline 0). 'a' (category Y)
    has the same items without a key, drawn one by one, so its F_true spreads."""
    samples = pd.DataFrame(
        [
            {"category": category, "subtask": subtask, "seed": "0", "doc_id": doc, "k": K, "before": 1,
             "after": doc % 2, "cluster": key}
            for category, subtask, keys in (("Y", "a", [None] * 4), ("X", "b", ["s0", "s0", "s1", "s1"]))
            for doc, key in enumerate(keys)
        ]
    )  # fmt: skip
    per_row, _ = bootstrap.intervals(samples, n_boot=200, seed=0)
    rows = per_row.set_index("subtask")
    assert rows.loc["b", "F_true_lo"] == rows.loc["b", "F_true_hi"] == 0.5
    assert rows.loc["a", "F_true_lo"] < 0.5 < rows.loc["a", "F_true_hi"]
