"""The paper's published figures, its chance-k policy, and the comparison of a user's pair with the paper's row.

``paper_figures.csv`` beside this module (package data; its header names the sources: the paper's Appendix E
Tables 2-35, the project website's full-precision values, the model ids of each pair) holds one row
per (pair, category, metric). A pairing is compared with a paper pair when the user names it
(``--paper-pair LABEL``, kept in ``summary["paper_pair"]``) or when the model names logged in the
runs' results files are the pair's Hugging Face ids.
"""

from __future__ import annotations

import difflib
import math
from functools import lru_cache
from importlib import resources
from typing import Any

import pandas as pd

from postforget_lmeval.metrics import OVERALL
from postforget_lmeval.pairing.provenance import model_names
from postforget_lmeval.pairing.results import PairingError, PairResult

DIFFERENCES_DOC = "docs/paper-differences.md"


@lru_cache(maxsize=1)
def figures() -> pd.DataFrame:
    """Every published figure: pair, group, before_model, after_model, category, metric, mean_pct,
    std_pct, ceiling_pct (Appendix E cells, %), value_full (website, fraction), table."""
    with resources.files("postforget_lmeval.report").joinpath("paper_figures.csv").open(encoding="utf-8") as f:
        return pd.read_csv(f, comment="#", dtype={"table": "Int64"})


def labels() -> list[str]:
    return list(dict.fromkeys(figures()["pair"]))


def check_label(label: str) -> str:
    """``label`` if it is one of the paper's pairs, else an error with the closest labels."""
    known = labels()
    if label in known:
        return label
    close = difflib.get_close_matches(label, known, n=4, cutoff=0.4)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise PairingError(f"--paper-pair {label!r} is not a pair of the paper{hint} (all labels: {', '.join(known[:31])})")


def run_models(result: PairResult, side: str) -> list[str]:
    """The model names logged by the runs of one side of a pairing."""
    runs = (result.summary.get("runs") or {}).get(side) or []
    return model_names(r["results"] for r in runs if r.get("results"))


def _match(name: str, model_id: str) -> int:
    """2: the id itself (or a path ending in it), 1: same final name, 0: no match."""
    a, b = name.strip().rstrip("/").lower(), model_id.lower()
    if a == b or a.endswith("/" + b):
        return 2
    return int(a.rsplit("/", 1)[-1] == b.rsplit("/", 1)[-1])


def identify(before: list[str], after: list[str]) -> str | None:
    """The paper pair whose before and after model ids match the given names best (None if none does)."""
    pairs = figures().drop_duplicates("pair").dropna(subset=["before_model", "after_model"])
    best, best_score = None, 0
    for r in pairs.itertuples(index=False):
        sb = max((_match(n, r.before_model) for n in before), default=0)
        sa = max((_match(n, r.after_model) for n in after), default=0)
        if sb and sa and sb + sa > best_score:
            best, best_score = r.pair, sb + sa
    return best


def paper_pair(result: PairResult) -> str | None:
    """The paper pair to compare with: the one named by the user, else the one the model names identify."""
    named = result.summary.get("paper_pair")
    if named:
        return check_label(str(named))
    return identify(run_models(result, "before"), run_models(result, "after"))


def _num(x: Any) -> float:
    return float("nan") if x is None or pd.isna(x) else float(x)


def comparison(result: PairResult, label: str) -> pd.DataFrame:
    """Ours beside the paper's, per category and metric, in %: our mean, std and ceiling, the paper's
    table cell (mean, std, ceiling), its full-precision value, and ours minus the paper's."""
    ours = result.categories[result.categories["average"] == "macro"].set_index("category")
    paper = figures()[figures()["pair"] == label]
    rows = []
    for metric, ceiling in (("F_true", "F_max"), ("BT_true", "BT_max")):
        theirs = paper[paper["metric"] == metric].set_index("category")
        names = {*map(str, ours.index), *map(str, theirs.index)} - {OVERALL}
        for category in [*sorted(names), OVERALL]:
            o = ours.loc[category] if category in ours.index else None
            t = theirs.loc[category] if category in theirs.index else None
            mean = 100 * _num(o[f"{metric}_mean"]) if o is not None else math.nan
            p_mean = _num(t["mean_pct"]) if t is not None else math.nan
            full = 100 * _num(t["value_full"]) if t is not None else math.nan
            reference = p_mean if not math.isnan(p_mean) else full
            rows.append(
                {
                    "metric": metric,
                    "category": category,
                    "ours": mean,
                    "ours_std": 100 * _num(o[f"{metric}_std"]) if o is not None else math.nan,
                    "ours_ceiling": 100 * _num(o[f"{ceiling}_mean"]) if o is not None else math.nan,
                    "paper": p_mean,
                    "paper_std": _num(t["std_pct"]) if t is not None else math.nan,
                    "paper_ceiling": _num(t["ceiling_pct"]) if t is not None else math.nan,
                    "paper_full": full,
                    "difference": mean - reference,
                }
            )
    return pd.DataFrame(rows)


def differences(result: PairResult, label: str) -> list[str]:
    """The protocol differences between this run and the paper's that apply to this comparison."""
    options = result.summary.get("options") or {}
    subtasks = set(result.subtasks["subtask"].astype(str))
    out = [
        "Prompts: the instruction lines, MMLU's dev shots and BBH's own CoT exemplars are the paper's; the "
        "other benchmarks' base-model exemplars are our own, so base-model accuracies there can differ.",
    ]
    if options.get("rescore") != "lighteval":
        out.append(
            "Answer extraction: the paper scored with LightEval 0.10's extractive match (any capital letter can "
            "count); this run used the strict extractor (re-pair with --rescore lighteval to compare)."
        )
    if options.get("chance_k", "item") != "paper":
        out.append(
            "Chance k: counted per item here; the paper's code used its BBH table and k = 4 for every other "
            "benchmark (re-pair with --chance-k paper to compare like for like)."
        )
    ours = set(result.categories["category"].astype(str)) - {OVERALL}
    missing = sorted(set(figures().loc[figures()["pair"] == label, "category"]) - ours - {OVERALL})
    out.append(
        "Overall: the paper's Total averages 10 categories (ARC fell into a hidden extra category, so its Logic "
        "row has no ARC); ours averages the categories present, ARC inside Logic"
        + (f", and this run has no {', '.join(missing)}." if missing else ".")
    )
    paper = figures()[(figures()["pair"] == label) & (figures()["category"] == "Safety/Truthfulness")]
    if not paper.empty and paper["mean_pct"].isna().all():
        out.append(
            "Safety/Truthfulness: the paper's tables leave it out for pairs with a base model; the figure shown "
            "is the website's full-precision value (the paper's base runs had only the 4 MMLU subjects in it)."
        )
    if "hellaswag_main" in subtasks:
        out.append("HellaSwag: the paper ran the unlabelled test split (gold 'D' for every item); ours is validation.")
    if subtasks & {"truthfulqa_mc1", "saladbench_mrq"}:
        out.append(
            "TruthfulQA / SaladBench: the paper showed TruthfulQA unshuffled (gold always A) and scored SaladBench "
            "as any-gold-letter from another copy of the data; ours shuffles and requires the exact set."
        )
    out.append(f"All differences, with their sources: {DIFFERENCES_DOC}.")
    return out
