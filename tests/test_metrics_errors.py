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


@pytest.mark.parametrize(
    ("values", "found"),
    [([1, 0.5, 0, 2, 0.5, 1], "[0.5, 2.0]"), ([0, 7, 6, 5, 4, 3, 2, 1], "[2, 3, 4, 5, 6]")],
    ids=["scores", "first-five"],
)
def test_a_non_binary_array_lists_its_bad_values(values: list[float], found: str) -> None:
    """The message lists the distinct values that are not 0/1 (sorted, at most five), never the valid ones."""
    with pytest.raises(ValueError) as err:
        metrics.binary(values, "after", 1)
    assert str(err.value) == (
        f"after must contain only 0/1 (or True/False) per-item correctness; found {found} "
        "(scores in (0,1) are not transitions: binarise them first)"
    )
