"""annotate(): the analyses land as columns of subtasks/categories and as named tables of a PairResult."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from postforget_lmeval import analyses, metrics
from postforget_lmeval.results import PairResult


def _result(samples: pd.DataFrame) -> PairResult:
    """A PairResult in the documented shape, its figures computed by the metrics module from ``samples``."""
    rows = []
    for (subtask, seed), g in samples.groupby(["subtask", "seed"], sort=True):
        rows.append(
            {
                "subtask": subtask,
                "category": g["category"].iloc[0],
                "seed": seed,
                **metrics.transition_metrics(g["before"], g["after"], k=g["k"].to_numpy()),
            }
        )
    subtasks = pd.DataFrame(rows)
    categories = pd.concat([metrics.aggregate(subtasks), metrics.aggregate_micro(subtasks)], ignore_index=True)
    return PairResult(subtasks, categories, samples, pd.DataFrame(), {"runs": {"before": [], "after": []}})


def _samples() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    parts = []
    for subtask, category, n, p_forget in (("alg", "Math", 120, 0.4), ("geo", "Math", 90, 0.05), ("law", "Law", 100, 0.1)):
        for seed in ("0", "1"):
            before = (rng.random(n) < 0.7).astype(np.int8)
            after = np.where(before == 1, rng.random(n) >= p_forget, rng.random(n) < 0.2).astype(np.int8)
            parts.append(
                pd.DataFrame(
                    {"subtask": subtask, "category": category, "seed": seed, "doc_id": np.arange(n),
                     "before": before, "after": after, "k": 4.0}
                )
            )
    return pd.concat(parts, ignore_index=True)


def test_annotate_adds_significance_and_intervals() -> None:
    result = _result(_samples())
    analyses.annotate(result, None, n_boot=300, seed=1)
    sub = result.subtasks
    row = sub[(sub["subtask"] == "alg") & (sub["seed"] == "1")].iloc[0]
    assert row["p_mcnemar"] == pytest.approx(stats.binomtest(int(row["n_10"]), int(row["n_10"] + row["n_01"])).pvalue)
    assert sub["q_bh"].tolist() == pytest.approx(stats.false_discovery_control(sub["p_mcnemar"]).tolist())
    assert bool(row["significant"]) is bool(row["q_bh"] < 0.05)
    assert (sub["F_true_lo"] <= sub["F_true"] + 1e-12).all() and (sub["F_true"] <= sub["F_true_hi"] + 1e-12).all()

    cats = result.categories
    macro, micro = cats[cats["average"] == "macro"], cats[cats["average"] == "micro"]
    assert macro["category"].tolist() == ["Law", "Math", "OVERALL"]
    assert (macro["F_true_lo"] <= macro["F_true_mean"]).all() and (macro["F_true_mean"] <= macro["F_true_hi"]).all()
    assert micro["F_true_lo"].isna().all()
    assert set(result.tables) >= {"significance"}
    assert len(result.tables["significance"]) == len(sub)
    assert result.summary["analyses"]["bootstrap"]["replicates"] == 300
