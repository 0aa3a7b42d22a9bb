"""Bad input to the formulas names the side it came from (mutation testing found no test reading the name)."""

from __future__ import annotations

import numpy as np
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
