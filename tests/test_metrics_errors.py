"""Edges of the formulas that mutation testing found untested: the side a bad input came from, one-item pools."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval import metrics


@pytest.mark.parametrize("side", ["before", "after"])
def test_a_non_binary_side_is_named(side: str) -> None:
    good, bad = [1, 0], [1, 0.5]
    args = (bad, good) if side == "before" else (good, bad)
    with pytest.raises(ValueError, match=rf"^{side} must contain only 0/1"):
        metrics.transition_metrics(*args)
    grid = tuple(np.array([v, v]).T for v in args)  # 2 items x 2 seeds
    with pytest.raises(ValueError, match=rf"^{side} must contain only 0/1"):
        metrics.seed_agreement_metrics(*grid)


def test_seed_agreement_needs_a_seed_column() -> None:
    empty = np.zeros((3, 0))
    with pytest.raises(ValueError, match="^seed_agreement_metrics needs at least one seed column$"):
        metrics.seed_agreement_metrics(empty, empty)


def test_micro_average_of_a_one_item_sub_benchmark_is_its_rate() -> None:
    """A pooled weight of exactly 1 (one item; one item right before) is a rate, not a missing value."""
    row = {"category": "X", "subtask": "s", "seed": "0", **metrics.transition_metrics([1], [0], k=4)}
    out = metrics.aggregate_micro(pd.DataFrame([row])).set_index("category")
    assert out.loc["X", "F_mean"] == 1.0 and out.loc["X", "F_rel_mean"] == 1.0 and out.loc["X", "BT_mean"] == 0.0
