"""annotate(): the analyses land as columns of subtasks/categories and as named tables of a PairResult."""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import postforget_lmeval
from postforget_lmeval import analyses, metrics
from postforget_lmeval.pairing.results import PairResult
from postforget_lmeval.report.analyses_md import analyses_markdown
from tests.helpers import paths


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
    specs = (("alg", "Math", 120, 0.4), ("geo", "Math", 90, 0.05), ("law", "Law", 100, 0.1))
    for subtask, category, n, p_forget in specs:
        for seed in ("0", "1"):
            before = (rng.random(n) < 0.7).astype(np.int8)
            after = np.where(before == 1, rng.random(n) >= p_forget, rng.random(n) < 0.2).astype(np.int8)
            parts.append(
                pd.DataFrame(
                    {
                        "subtask": subtask,
                        "category": category,
                        "seed": seed,
                        "doc_id": np.arange(n),
                        "before": before,
                        "after": after,
                        "k": 4.0,
                    }
                )
            )
    samples = pd.concat(parts, ignore_index=True)
    codes = 2 * samples["before"] + samples["after"]
    samples["transition"] = codes.map({3: "1->1", 2: "1->0", 1: "0->1", 0: "0->0"})
    # generative sub-benchmarks: a wrong side is unanswered one time in three; 'law' is log-likelihood MC
    for side, wrong in (("before", samples["before"] == 0), ("after", samples["after"] == 0)):
        samples[f"status_{side}"] = np.where(wrong & (samples["doc_id"] % 3 == 0), "no_answer", "answered")
        samples[f"response_chars_{side}"] = 100.0 + samples["doc_id"] * (2 if side == "after" else 1)
    mc = samples["subtask"] == "law"
    samples.loc[mc, ["status_before", "status_after", "response_chars_before", "response_chars_after"]] = None
    samples["gold"] = "A"
    for side in ("before", "after"):
        right = samples[side] == 1
        samples[f"option_ll_{side}"] = [
            ([-0.1, -3.0, -3.0, -3.0] if r else [-3.0, -0.1, -2.0, -3.0]) if m else None for r, m in zip(right, mc)
        ]
    return samples


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

    flags = analyses.terminal_columns(result)
    assert list(flags.columns) == list(analyses.TERMINAL_COLUMNS)
    n_math = int(sub.loc[sub["category"] == "Math", "significant"].sum())
    assert flags.loc["Math", "significant"] == f"{n_math}/4"
    assert flags.loc["OVERALL", "significant"] == f"{int(sub['significant'].sum())}/6"
    assert flags.loc["OVERALL", "format"] == macro.set_index("category").loc["OVERALL", "F_format_share_mean"]


def test_annotate_adds_failure_modes_behaviour_and_drift() -> None:
    result = _result(_samples())
    analyses.annotate(result, None, n_boot=50, seed=1)
    sub = result.subtasks.set_index(["subtask", "seed"])
    samples = result.samples
    alg = samples[(samples["subtask"] == "alg") & (samples["seed"] == "0")]
    forgotten = alg[alg["transition"] == "1->0"]
    unanswered = int((forgotten["status_after"] == "no_answer").sum())
    row = sub.loc[("alg", "0")]
    counts = result.tables["failure_modes"].set_index(["subtask", "seed"]).loc[("alg", "0")]
    assert counts["n_10_no_answer"] == unanswered and counts["n_10_wrong"] == len(forgotten) - unanswered
    assert row["F_format_share"] == pytest.approx(unanswered / len(forgotten))
    assert row["answered_after"] == pytest.approx((alg["status_after"] == "answered").mean())
    assert row["median_chars_after"] == pytest.approx(alg["response_chars_after"].median())
    law = sub.loc[("law", "0")]
    assert law["F_format_share"] == 0.0 and law["answered_before"] == 1.0  # log-likelihood MC always answers
    assert np.isnan(law["median_chars_before"])
    # every 'law' 1->0 item moved all its lost mass to B: drift, and its kept items did not move
    assert law["drift_share"] == 1.0 and law["at_risk_share"] == 0.0
    assert np.isnan(row["drift_share"])
    assert set(result.tables["drift"]["subtask"]) == {"law"}
    assert set(result.tables["drift_items"]["subtask"]) == {"law"}
    assert "n_10_wrong" not in result.subtasks  # counts live in failure_modes.csv
    assert result.summary["analyses"]["drift"]["left_out"] == 0

    macro = result.categories[result.categories["average"] == "macro"].set_index("category")
    math_share = sub.loc[["alg", "geo"], "F_format_share"].groupby(level="seed").mean().mean()
    assert macro.loc["Math", "F_format_share_mean"] == pytest.approx(math_share)
    assert macro.loc["OVERALL", "F_format_share_mean"] == pytest.approx((math_share + 0.0) / 2)

    text = analyses_markdown(result)
    assert text.startswith("## Analyses beyond the paper")
    assert "Why were items forgotten?" in text and "significant at q < 0.05" in text
    assert "at risk" in text


def test_markdown_says_drift_is_unavailable_for_generative_runs() -> None:
    samples = _samples()
    samples = samples[samples["subtask"] != "law"].drop(columns=["option_ll_before", "option_ll_after"])
    result = _result(samples)
    analyses.annotate(result, None, n_boot=20)
    assert "drift" not in result.tables and "drift_items" not in result.tables
    assert result.subtasks["at_risk_share"].isna().all()
    assert "cannot be measured" in analyses_markdown(result)
    assert result.summary["analyses"]["drift"]["items"] == 0


REFERENCE = paths.REFERENCE / "lmeval_logs" / "mayflower_mmlu_stem"


def _recount(side: str) -> dict[tuple[str, int], tuple[np.ndarray, int, int]]:
    """(task, doc_id) -> (option probabilities, gold index, acc), read straight from the top-level samples files."""
    out = {}
    for path in (REFERENCE / side).glob("*/samples_*.jsonl"):
        task = path.name[len("samples_") :].rsplit("_", 1)[0]
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            ll = np.array([float(pair[0]) for pair in rec["filtered_resps"]])
            p = np.exp(ll - ll.max())
            out[(task, rec["doc_id"])] = (p / p.sum(), int(rec["target"]), int(rec["acc"]))
    return out


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="reference lm-eval logs not beside the checkout")
def test_real_mmlu_pair_against_an_independent_recount() -> None:
    """Two public lm-eval 0.4.9.1 MMLU-STEM runs (log-likelihood MC, 3,153 items per side)."""
    result = postforget_lmeval.pair(REFERENCE / "before", REFERENCE / "after")
    before, after = _recount("before"), _recount("after")
    kept = risk = drift_n = mass = 0
    n_10, n_01 = defaultdict(int), defaultdict(int)
    for key in before.keys() & after.keys():
        (pb, gold, cb), (pa, _, ca) = before[key], after[key]
        n_10[key[0]] += cb and not ca
        n_01[key[0]] += ca and not cb
        if cb and ca:
            kept += 1
            risk += bool(pa[gold] - pb[gold] < -0.2)
        elif cb:
            lost, gain = pb[gold] - pa[gold], np.delete(pa - pb, gold)
            drift_n += bool(lost > 0 and gain.max() / lost >= 0.5)
            mass += bool(lost > 0 and gain.max() / lost < 0.5)
    items = result.tables["drift_items"]
    assert len(items) == len(before) == 3153
    kept_items = items[items["transition"] == "1->1"]
    assert len(kept_items) == kept and int((kept_items["dp_gold"] < -0.2).sum()) == risk
    labels = items["label"].value_counts()
    assert (labels.get("drift", 0), labels.get("mass_loss", 0)) == (drift_n, mass)
    sig = result.tables["significance"].set_index("subtask")
    for task in n_10:
        p = stats.binomtest(n_10[task], n_10[task] + n_01[task], 0.5).pvalue if n_10[task] + n_01[task] else 1.0
        assert sig.loc[task, "p_mcnemar"] == pytest.approx(p)
    modes = result.tables["failure_modes"]
    assert modes["n_10_wrong"].sum() == sum(n_10.values()) and (modes["F_format_share"] == 0).all()
    assert "option log-likelihoods" not in analyses_markdown(result)


def test_items_drift_cannot_read_are_counted_in_the_summary_and_the_report() -> None:
    """A log-likelihood item whose gold is not a letter among its options (options past Z logged as "26", or an
    lm-eval target logged as the answer's text) is left out of drift, and summary.json and report.md say how
    many, not a silent drop."""
    samples = _samples()
    law = samples.index[samples["subtask"] == "law"]
    samples.loc[law[:3], "gold"] = "26"
    result = _result(samples)
    analyses.annotate(result, None, n_boot=50, seed=1)
    assert len(result.tables["drift_items"]) == len(law) - 3
    assert result.summary["analyses"]["drift"]["left_out"] == 3
    text = analyses_markdown(result)
    assert "3 item(s) log option log-likelihoods on both sides but are left out of drift" in text
    assert "log-likelihood multiple-choice items" in text  # the others still have their drift figures

    samples.loc[law, "gold"] = " the answer's text"
    result = _result(samples)
    analyses.annotate(result, None, n_boot=50, seed=1)
    assert result.summary["analyses"]["drift"] == {
        "items": 0,
        "why": "no item logs option log-likelihoods on both sides (generative tasks)",
        "left_out": len(law),
    }
    text = analyses_markdown(result)
    assert f"{len(law)} item(s) log option log-likelihoods on both sides but are left out of drift" in text
    assert "No other item logs option log-likelihoods on both sides" in text
