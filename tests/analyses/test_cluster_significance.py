"""Items that share a text: the cluster sign-flip test, exact McNemar's form for clusters, keeps its level on
simulated clustered items where McNemar, counting every item as independent, does not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval.analyses._significance import (
    CLUSTER,
    MCNEMAR,
    cluster_tests,
    mcnemar_p,
    sign_flip_p,
    significance_table,
)
from postforget_lmeval.api import pair
from postforget_lmeval.report.analyses_md import analyses_markdown
from tests.helpers.lmeval_runs import pf_record, sample_line, write_run


@pytest.mark.parametrize(("n_10", "n_01"), [(0, 0), (3, 0), (6, 1), (10, 2), (4, 4), (0, 9), (25, 14)])
def test_one_item_per_cluster_is_exact_mcnemar(n_10: int, n_01: int) -> None:
    net = np.array([1] * n_10 + [-1] * n_01 + [0] * 5)  # the concordant items add nothing
    assert sign_flip_p(net) == pytest.approx(float(mcnemar_p(n_10, n_01)), rel=1e-12)


def test_sign_flip_hand_worked() -> None:
    # nets 3, 2, -1: the 8 sign choices give sums 6, 4, 2, 0, 0, -2, -4, -6; |sum| >= 4 in 4 of them
    assert sign_flip_p(np.array([3, 2, -1, 0])) == 0.5
    # the same 5 flips 1->0 and 1 flip 0->1 as independent items: 2 * P(Binomial(6, 1/2) <= 1) = 14/64
    assert float(mcnemar_p(5, 1)) == pytest.approx(14 / 64)
    assert sign_flip_p(np.array([4])) == 1.0  # one cluster: its sign is all there is, no evidence


def _stories(subtask: str, flips: list[list[int]], seed: str = "0", cluster: bool = True) -> pd.DataFrame:
    """One row per item: ``flips`` per story, each item +1 (1->0), -1 (0->1) or 0 (1->1)."""
    rows = []
    for story, items in enumerate(flips):
        for flip in items:
            rows.append(
                {
                    "subtask": subtask,
                    "category": "Reading",
                    "seed": seed,
                    "doc_id": len(rows),
                    "before": int(flip >= 0),
                    "after": int(flip <= 0),
                    "cluster": f"story{story}" if cluster else None,
                }
            )
    return pd.DataFrame(rows)


def _subtasks(samples: pd.DataFrame) -> pd.DataFrame:
    flips = samples.assign(
        n_10=(samples["before"] == 1) & (samples["after"] == 0), n_01=(samples["before"] == 0) & (samples["after"] == 1)
    )
    return (
        flips.groupby(["subtask", "category", "seed"], as_index=False)
        .agg(n=("doc_id", "size"), n_10=("n_10", "sum"), n_01=("n_01", "sum"))
        .astype({"n_10": int, "n_01": int})
    )


def test_clustered_rows_use_the_cluster_test_and_others_mcnemar() -> None:
    samples = pd.concat(
        [
            _stories("mctest_main", [[1, 1, 1], [1, 1], [-1]]),
            _stories("mctest_main", [[1, 1, 1], [1, 1], [-1]], seed="1"),
            _stories("piqa_main", [[1], [1], [1], [1], [1], [-1]], cluster=False),
        ],
        ignore_index=True,
    )
    table = significance_table(_subtasks(samples), samples).set_index(["subtask", "seed"])
    assert table["test"].tolist() == [CLUSTER, CLUSTER, MCNEMAR]
    assert table["p_cluster"].iloc[:2].tolist() == [0.5, 0.5]
    assert np.isnan(table.loc[("piqa_main", "0"), "p_cluster"])
    assert table["p_mcnemar"].tolist() == pytest.approx([14 / 64] * 3)
    assert table["clusters"].iloc[:2].tolist() == [3, 3]
    # BH over the p that counts: 0.5, 0.5, 14/64 -> sorted 14/64 * 3/1, then 0.5 * 3/3 for both
    assert table["q_bh"].tolist() == pytest.approx([0.5, 0.5, 0.5])


def test_cluster_keys_are_read_within_their_sub_benchmark() -> None:
    """Two sub-benchmarks reuse doc_ids and story names: each item's story is its own sub-benchmark's."""
    a = _stories("musr_a", [[1, 1], [1, 1], [-1, -1]])  # doc_ids 0-5, stories 0-2
    b = _stories("musr_b", [[1], [1], [1], [1], [-1], [-1]])  # doc_ids 0-5, every item its own story
    found = cluster_tests(pd.concat([a, b], ignore_index=True)).set_index("subtask")
    assert found["clusters"].to_dict() == {"musr_a": 3, "musr_b": 6}
    assert found.loc["musr_a", "p_cluster"] == sign_flip_p(np.array([2, 2, -2]))
    assert found.loc["musr_b", "p_cluster"] == pytest.approx(float(mcnemar_p(4, 2)))


def test_items_without_a_key_are_clusters_of_their_own() -> None:
    samples = _stories("mctest_main", [[1, 1, 1], [-1]])
    samples.loc[samples["doc_id"].isin([0, 1, 2]), "cluster"] = None  # the story's items lost their key
    found = cluster_tests(samples)
    assert found["clusters"].tolist() == [4]
    assert found["p_cluster"].iloc[0] == pytest.approx(float(mcnemar_p(3, 1)))


def _null_clustered(rng: np.random.Generator, trials: int, n_clusters: int = 40, size: int = 6) -> pd.DataFrame:
    """``trials`` sub-benchmarks of an unchanged model: per story, before and after each know it (items right with
    probability 0.9, else 0.3) with probability 1/2, independently: the flips of a story go one way together."""
    knows = rng.random((2, trials, n_clusters, 1)) < 0.5
    right = rng.random((2, trials, n_clusters, size)) < np.where(knows, 0.9, 0.3)
    return pd.DataFrame(
        {
            "subtask": np.repeat([f"trial{t}" for t in range(trials)], n_clusters * size),
            "category": "Reading",
            "seed": "0",
            "doc_id": np.tile(np.arange(n_clusters * size), trials),
            "before": right[0].ravel().astype(int),
            "after": right[1].ravel().astype(int),
            "cluster": np.tile(np.repeat([f"story{c}" for c in range(n_clusters)], size), trials),
        }
    )


@pytest.mark.slow
def test_cluster_test_keeps_its_level_on_null_clustered_items() -> None:
    """1000 null sub-benchmarks of 40 stories x 6 questions: the cluster test rejects at p < 0.05 in at most 7%,
    McNemar (items as independent) in far more."""
    samples = _null_clustered(np.random.default_rng(11), 1000)
    table = significance_table(_subtasks(samples), samples)
    clustered = (table["p_cluster"] < 0.05).mean()
    naive = (table["p_mcnemar"] < 0.05).mean()
    assert clustered <= 0.07, f"cluster test rejects {clustered:.1%} of null rows"
    assert naive >= 0.15, f"McNemar rejects {naive:.1%} of null rows"


def test_pairing_tests_stories_whole_and_says_so(tmp_path: Path) -> None:
    """mctest_main with 3 stories of 3 questions, 7 of 9 lost (3, 3 and 1 per story): McNemar counts 7 independent
    losses, p = 2/2^7; the stories' nets 3, 3, 1 reach |7| under 2 of 8 sign choices, p = 0.25."""
    for side, bits in (("before", "111111111"), ("after", "000000110")):
        lines = []
        for i, bit in enumerate(bits):
            record = pf_record("mctest_main", int(bit), category="Knowledge/QA")
            record["cluster"] = f"story{i // 3}"
            lines.append(sample_line(i, None, record=record))
        write_run(tmp_path / side, {"postforget_mctest_main": lines})
    result = pair(tmp_path / "before", tmp_path / "after")
    row = result.subtasks.iloc[0]
    assert row["p_mcnemar"] == pytest.approx(2 / 2**7)
    assert row["p_cluster"] == 0.25 and row["q_bh"] == 0.25 and not row["significant"]
    assert result.tables["significance"]["test"].tolist() == [CLUSTER]
    assert "cluster sign-flip" in result.summary["analyses"]["significance"]["clustered"]
    text = analyses_markdown(result)
    assert "where items share a text (mctest_main), the cluster sign-flip test" in text
    assert "items resampled within sub-benchmarks; whole texts (clusters) resampled in mctest_main" in text
