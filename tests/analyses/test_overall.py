"""The overall test across sub-benchmarks: the CMH statistic by hand, its cluster and seed form, the pair's outputs,
and by simulation its type I error with clusters present and its power against pooled per-row decisions."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import pytest
from rich.console import Console
from scipy import stats

from postforget_lmeval import pair
from postforget_lmeval.analyses import overall_test
from postforget_lmeval.analyses._overall import cluster_nets, statistic
from postforget_lmeval.analyses._significance import cluster_tests
from postforget_lmeval.cli import main
from postforget_lmeval.report.paper_table import rich_table
from tests.helpers.paths import REFERENCE

MMLU = REFERENCE / "lmeval_logs" / "mayflower_mmlu_stem"


def _items(
    subtask: str, pairs: list[tuple[int, int]], seed: str = "0", cluster: list[str] | None = None
) -> pd.DataFrame:
    out = pd.DataFrame(
        {
            "subtask": subtask,
            "doc_id": np.arange(len(pairs)),
            "seed": seed,
            "replicate": 0,
            "before": [b for b, _ in pairs],
            "after": [a for _, a in pairs],
        }
    )
    if cluster is not None:
        out["cluster"] = cluster
    return out


def test_the_cmh_statistic_by_hand():
    # stratum a: 5 items 1->0, 1 item 0->1, 3 unchanged; stratum b: 2 items 1->0, 4 items 0->1
    a = _items("a", [(1, 0)] * 5 + [(0, 1)] + [(1, 1)] * 3)
    b = _items("b", [(1, 0)] * 2 + [(0, 1)] * 4 + [(0, 0)])
    t = overall_test(pd.concat([a, b], ignore_index=True))
    # CMH for matched pairs: ((5 - 1) + (2 - 4))^2 / ((5 + 1) + (2 + 4)) = 4 / 12
    assert t["statistic"] == pytest.approx(1 / 3)
    assert t["p_value"] == pytest.approx(2 * stats.norm.sf(math.sqrt(1 / 3)))  # 0.5637
    assert t["p_value"] == pytest.approx(0.56370, abs=1e-5)
    assert (t["df"], t["strata"], t["n_10"], t["n_01"], t["direction"]) == (1, 2, 7, 5, "forgetting")
    assert statistic(np.zeros(4)) == (0.0, 1.0)


def test_a_text_and_an_item_under_two_seeds_count_as_one_cluster():
    a = _items("a", [(1, 0)] * 5 + [(0, 1)])  # six items of their own: sum d = 4, sum d^2 = 6
    # stratum c: text t1 holds three items all forgotten (d = 3), text t2 one item gained (d = -1)
    c = _items("c", [(1, 0)] * 3 + [(0, 1)], cluster=["t1", "t1", "t1", "t2"])
    t = overall_test(pd.concat([a, c], ignore_index=True))
    assert t["statistic"] == pytest.approx((4 + 3 - 1) ** 2 / (6 + 9 + 1))  # 2.25, against 3.6 for plain CMH
    assert t["p_value"] == pytest.approx(0.13361, abs=1e-5)
    assert t["clusters"] == 8
    # one item forgotten under both seeds is one cluster: d = 2, d^2 = 4; a second item gained under one seed
    two = pd.concat([_items("s", [(1, 0), (0, 1)], "0"), _items("s", [(1, 0), (0, 0)], "1")], ignore_index=True)
    nets = cluster_nets(two)
    assert nets["net"].tolist() == [2, -1] and overall_test(two)["statistic"] == pytest.approx(1 / 5)


def test_the_pair_reports_the_overall_test(tmp_path):
    if not MMLU.is_dir():
        pytest.skip("the shared reference logs are not beside the repository")
    out = tmp_path / "out"
    assert main([str(MMLU / "before"), str(MMLU / "after"), "-o", str(out), "-q", "--no-plot"]) == 0
    t = json.loads((out / "summary.json").read_text())["analyses"]["overall_test"]
    # the real MMLU-STEM pair, one seed, no texts shared: the plain CMH statistic over its 19 subjects
    assert (t["strata"], t["n_10"], t["n_01"], t["df"]) == (19, 337, 658, 1)
    assert t["statistic"] == pytest.approx((337 - 658) ** 2 / (337 + 658))
    assert t["null"].startswith("no net forgetting") and t["direction"] == "backward_transfer"
    line = "Across all 19 sub-benchmarks (CMH, clusters kept): X² 103.6, p 2.5e-24; 337 1→0, 658 0→1"
    assert line in (out / "report.md").read_text()
    console = Console(file=io.StringIO(), width=100)  # the terminal: one line, within 100 columns
    console.print(rich_table(pair(MMLU / "before", MMLU / "after")))
    assert line in console.file.getvalue().splitlines()


def _simulate(rng: np.random.Generator, lean: float, strata: int = 8, texts: int = 25, size: int = 4) -> pd.DataFrame:
    """``strata`` sub-benchmarks of ``texts`` texts x ``size`` questions, 2 seeds. Each text moves one way as a
    whole: it loses (1->0) with probability 1/2 + ``lean``, else gains (0->1), each of its items then flipping
    with the text's own chance (uniform up to 0.5), under both seeds alike (one question, read twice)."""
    n = strata * texts * size
    text = np.repeat(np.arange(strata * texts), size)
    loses = (rng.random(strata * texts) < 0.5 + lean)[text]
    flips = rng.random(n) < rng.uniform(0, 0.5, strata * texts)[text]
    before = (rng.random(n) < 0.5).astype(int)
    after = np.where(flips & loses & (before == 1), 0, np.where(flips & ~loses & (before == 0), 1, before))
    one = pd.DataFrame(
        {
            "subtask": np.repeat([f"s{h}" for h in range(strata)], texts * size),
            "doc_id": np.arange(n),
            "cluster": [f"t{c}" for c in text],
            "replicate": 0,
            "before": before,
            "after": after,
        }
    )
    return pd.concat([one.assign(seed="0"), one.assign(seed="1")], ignore_index=True)


def _naive_p(samples: pd.DataFrame) -> float:
    """Plain CMH: every flip an independent sign."""
    n_10 = int((samples["before"] > samples["after"]).sum())
    n_01 = int((samples["before"] < samples["after"]).sum())
    return float(stats.chi2.sf((n_10 - n_01) ** 2 / (n_10 + n_01), 1)) if n_10 + n_01 else 1.0


@pytest.mark.slow
def test_type_one_error_with_clusters_and_power_against_pooled_decisions():
    """No net forgetting, texts that flip together, two seeds: the overall test rejects at 5% within Monte Carlo
    error of 5% (plain CMH far more often). A small lean to forgetting in every sub-benchmark: the overall test
    finds it more often than "any sub-benchmark x seed row significant" (the per-row cluster tests, BH q < 0.05)."""
    rng = np.random.default_rng(2026)
    trials = 2000
    ours, naive = [], []
    for _ in range(trials):
        s = _simulate(rng, 0.0)
        ours.append(overall_test(s)["p_value"] < 0.05)
        naive.append(_naive_p(s) < 0.05)
    rate, error = np.mean(ours), math.sqrt(0.05 * 0.95 / trials)
    print("type I", rate, "naive", np.mean(naive))
    assert abs(rate - 0.05) < 3 * error, rate
    assert np.mean(naive) > 0.2
    found, rows = [], []
    for _ in range(200):
        s = _simulate(rng, 0.1)
        found.append(overall_test(s)["p_value"] < 0.05)
        p = cluster_tests(s)["p_cluster"].to_numpy()
        rows.append(bool((stats.false_discovery_control(p) < 0.05).any()))
    print("power", np.mean(found), "any row", np.mean(rows))
    assert np.mean(found) > np.mean(rows) + 0.2
