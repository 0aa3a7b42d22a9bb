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

from postforget_lmeval import metrics
from postforget_lmeval.metrics import OVERALL
from postforget_lmeval.pairing.provenance import model_names
from postforget_lmeval.pairing.results import PairingError, PairResult
from postforget_lmeval.tasks.catalog import suite

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


HIDDEN = "ARC (in the paper's Total only)"
"""The paper's tenth category: its code filed both ARC tasks under no category of its own ("Missing"), which its
tables hide and its Total averages (docs/paper-differences.md)."""
_FIGURES = ("F_true", "BT_true", "F_max", "BT_max")


def _base_pair(label: str) -> bool:
    """A pair with a base model: its tables leave Safety/Truthfulness out (only the website has a value)."""
    safety = figures()[(figures()["pair"] == label) & (figures()["category"] == "Safety/Truthfulness")]
    return not safety.empty and safety["mean_pct"].isna().all()


def paper_categories(label: str) -> dict[str, frozenset[str]]:
    """The sub-benchmarks each category of the paper's Total averaged for pair ``label``: the catalog's categories
    with ARC as its own hidden category, and for a pair with a base model Safety/Truthfulness as the 4 MMLU
    subjects its few-shot runs had (no TruthfulQA, no SaladBench)."""
    members: dict[str, set[str]] = {}
    for task in suite():
        category = HIDDEN if task.benchmark == "arc" else task.category
        if category == "Safety/Truthfulness" and _base_pair(label) and task.benchmark != "mmlu":
            continue
        members.setdefault(category, set()).add(task.subtask)
    return {c: frozenset(m) for c, m in members.items()}


def _per_seed(subtasks: pd.DataFrame, members: dict[str, frozenset[str]]) -> pd.DataFrame:
    """Our figures per (paper category, seed), macro-averaged over the paper's sub-benchmarks of each category that
    this run has all of (recomputed where our category holds others too, as ARC in Logic)."""
    names = set(subtasks["subtask"].astype(str))
    complete = {c: m for c, m in members.items() if m <= names}
    of = {subtask: c for c, m in complete.items() for subtask in m}
    rows = subtasks[subtasks["subtask"].astype(str).isin(of)]
    rows = rows.assign(category=rows["subtask"].astype(str).map(of))
    if rows.empty:
        return pd.DataFrame(columns=["category", "seed", *_FIGURES])
    return metrics.macro_per_seed(rows, _FIGURES)[0].reset_index()


def _footing(category: str, ours: set[str], names: set[str], members: dict[str, frozenset[str]]) -> str:
    """Why a category is or is not compared: its sub-benchmarks here against the paper's."""
    paper_set = members.get(category)
    if paper_set is None:
        return f"{category}: not a category of the paper"
    have, extra = paper_set & names, sorted(ours - paper_set)
    if have != paper_set:
        outside = f" (its {', '.join(extra)} not among them)" if extra else ""
        return f"{category}: this run has {len(have)} of the paper's {len(paper_set)} sub-benchmarks{outside}"
    if extra:
        return f"{category}: recomputed on the paper's {len(paper_set)} sub-benchmarks, without {', '.join(extra)}"
    return f"{category}: the paper's {len(paper_set)} sub-benchmarks"


def footing(result: PairResult, label: str) -> tuple[list[str], list[str]]:
    """(compared, not compared): one line per category of this run or of the paper, saying how it was built; the
    paper's categories of which this run has nothing, in one line."""
    members = paper_categories(label)
    names = set(result.subtasks["subtask"].astype(str))
    ours = result.subtasks.groupby("category", observed=True)["subtask"].agg(lambda s: set(map(str, s)))
    visible = set(figures().loc[figures()["pair"] == label, "category"]) - {OVERALL}
    compared, not_compared, absent = [], [], []
    for category in sorted({*map(str, ours.index), *visible}):
        if category not in ours.index and not members.get(category, frozenset()) & names:
            absent.append(category)
            continue
        line = _footing(category, ours.get(category, set()), names, members)
        (compared if members.get(category, {None}) <= names else not_compared).append(line)
    if absent:
        not_compared.append(f"this run has none of the sub-benchmarks of {', '.join(absent)}")
    return compared, not_compared


def _ours(per_seed: pd.DataFrame, metric: str, ceiling: str) -> tuple[float, float, float]:
    """Mean and sample std over seeds of per-seed figures, and the ceiling's mean, in %."""
    by_seed = per_seed.groupby("seed")[[metric, ceiling]].mean()
    return 100 * by_seed[metric].mean(), 100 * by_seed[metric].std(), 100 * by_seed[ceiling].mean()


def comparison(result: PairResult, label: str) -> pd.DataFrame:
    """Ours beside the paper's, per category and metric, in %: our mean, std and ceiling, the paper's table cell
    (mean, std, ceiling), its full-precision value, and ``difference``, ours minus the paper's (its cell, else its
    full value), only on equal footing:

    * a category, where this run has every sub-benchmark the paper averaged in it; ours is then recomputed on
      exactly those (:func:`footing` says how each category was built);
    * ``over N shared categories``: ours and the paper's averaged over those N categories, both ways alike;
    * OVERALL, only where this run has all the paper's Total averaged (its 10 categories, ARC its own); ours is
      then recomputed the paper's way. Elsewhere the paper's Total is shown without a difference.
    """
    ours = result.categories[result.categories["average"] == "macro"].set_index("category")
    paper = figures()[figures()["pair"] == label]
    members = paper_categories(label)
    per_seed = _per_seed(result.subtasks, members)
    matched = set(per_seed["category"])
    all_matched = matched == set(members)
    rows = []
    for metric, ceiling in (("F_true", "F_max"), ("BT_true", "BT_max")):
        theirs = paper[paper["metric"] == metric].set_index("category")
        names = {*map(str, ours.index), *map(str, theirs.index)} - {OVERALL}
        shared = sorted(matched & set(theirs.index))
        references = []
        for category in [*sorted(names), OVERALL]:
            o = ours.loc[category] if category in ours.index else None
            t = theirs.loc[category] if category in theirs.index else None
            mine = (
                100 * _num(o[f"{metric}_mean"]) if o is not None else math.nan,
                100 * _num(o[f"{metric}_std"]) if o is not None else math.nan,
                100 * _num(o[f"{ceiling}_mean"]) if o is not None else math.nan,
            )
            equal = category in shared or (category == OVERALL and all_matched)
            if equal:
                mine = _ours(
                    per_seed if category == OVERALL else per_seed[per_seed["category"] == category], metric, ceiling
                )
            p_mean = _num(t["mean_pct"]) if t is not None else math.nan
            full = 100 * _num(t["value_full"]) if t is not None else math.nan
            reference = p_mean if not math.isnan(p_mean) else full
            if category in shared:
                references.append((reference, _num(t["ceiling_pct"])))
            rows.append(_row(metric, category, mine, t, full, mine[0] - reference if equal else math.nan))
        if shared:
            n = len(shared)
            mine = _ours(per_seed[per_seed["category"].isin(shared)], metric, ceiling)
            reference = sum(r for r, _ in references) / n
            rows.insert(
                len(rows) - 1,
                {
                    **_row(metric, f"over {n} shared {'category' if n == 1 else 'categories'}", mine, None, math.nan,
                           mine[0] - reference),
                    "paper": reference,
                    "paper_ceiling": sum(c for _, c in references) / n,
                },
            )  # fmt: skip
    return pd.DataFrame(rows)


def _row(
    metric: str, category: str, ours: tuple[float, float, float], theirs: Any, full: float, difference: float
) -> dict[str, Any]:
    """One row of :func:`comparison`."""
    return {
        "metric": metric,
        "category": category,
        "ours": ours[0],
        "ours_std": ours[1],
        "ours_ceiling": ours[2],
        "paper": _num(theirs["mean_pct"]) if theirs is not None else math.nan,
        "paper_std": _num(theirs["std_pct"]) if theirs is not None else math.nan,
        "paper_ceiling": _num(theirs["ceiling_pct"]) if theirs is not None else math.nan,
        "paper_full": full,
        "difference": difference,
    }


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
    compared, not_compared = footing(result, label)
    if compared:
        out.append("Compared on equal footing (a difference is printed): " + "; ".join(compared) + ".")
    if not_compared:
        out.append("Not compared (no difference printed): " + "; ".join(not_compared) + ".")
    members = paper_categories(label)
    have = len(set(_per_seed(result.subtasks, members)["category"]))
    out.append(
        f"Overall: the paper's Total averages {len(members)} categories (ARC fell into a hidden extra category, so its "
        "Logic row has no ARC); ours averages the categories this run has, ARC inside Logic. "
        + (
            "This run has every sub-benchmark of all of them, so the difference is taken from ours recomputed the "
            "paper's way."
            if have == len(members)
            else f"This run has all the sub-benchmarks of {have} of them, so the paper's Total is shown without a "
            "difference."
        )
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
