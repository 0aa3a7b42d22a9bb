"""The paper's chance-level k: what its official analysis code gives each sub-benchmark.

``--chance-k paper`` replaces each item's counted k by this one, to compare with the paper's tables
like for like (docs/paper-differences.md says where the two differ).
"""

from __future__ import annotations

import pandas as pd

from postforget_lmeval.tasks.catalog import suite

BBH_K: dict[str, int] = {
    "boolean_expressions": 2,
    "causal_judgement": 2,
    "date_understanding": 6,
    "disambiguation_qa": 3,
    "formal_fallacies": 2,
    "geometric_shapes": 11,
    "hyperbaton": 2,
    "logical_deduction_three_objects": 3,
    "logical_deduction_five_objects": 5,
    "logical_deduction_seven_objects": 7,
    "movie_recommendation": 6,
    "navigate": 2,
    "object_counting": 19,
    "penguins_in_a_table": 5,
    "reasoning_about_colored_objects": 18,
    "ruin_names": 6,
    "salient_translation_error_detection": 6,
    "snarks": 2,
    "sports_understanding": 2,
    "temporal_sequences": 4,
    "tracking_shuffled_objects_three_objects": 3,
    "tracking_shuffled_objects_five_objects": 5,
    "tracking_shuffled_objects_seven_objects": 7,
    "web_of_lies": 2,
}
"""Options per BBH task in the official analysis code; it gives every other benchmark k = 4."""
OTHER_K = 4.0
_PAPER_SUBTASKS = frozenset(s.subtask for s in suite())


def official_k(subtask: str) -> float | None:
    """The k the paper's analysis code uses for one of its sub-benchmarks; None for any other task."""
    if subtask not in _PAPER_SUBTASKS:
        return None
    if subtask.startswith("bbh_"):
        return float(BBH_K[subtask.removeprefix("bbh_")])
    return OTHER_K


def apply_official_k(items: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """``chance_k='paper'``: replace each item's k by the official one; returns the table and the
    sub-benchmarks that are not the paper's (their k stays per item)."""
    names = pd.Series(items["subtask"].astype(str).unique())
    ks = {name: official_k(name) for name in names}
    kept = sorted(name for name, k in ks.items() if k is None)
    official = items["subtask"].astype(str).map({n: k for n, k in ks.items() if k is not None})
    out = items.copy()
    out["k"] = official.fillna(items["k"]).astype(float)
    return out, kept
