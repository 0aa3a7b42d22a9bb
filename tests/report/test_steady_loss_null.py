"""Simulation with known truth: a model that does not change at all, sampled at 6 probes.

Each item is right with its own chance p ~ Beta(3, 1) at every probe, independently (the sampling noise of one
unchanged model). Then 58% of the items are "forgotten at some step" (the old table's reading), but a steady
loss (wrong at its last loss and the 2 probes after it, the default) is 3.81% of the items by chance:
E[p (1-p)^3 + p (1-p)^4 + p (1-p)^5] = 3/140 + 3/280 + 3/504. The count expected with no change that the curve
gives from two seeds of the first step matches the simulated count; and items followed along a chain whose
every run has its own seed join into one row each.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval.report.curve import STEADY_AFTER, first_step, item_table, steady_losses

pytestmark = pytest.mark.slow

PROBES = 6
ITEMS = 1000
STEPS = [100 * i for i in range(PROBES)]
NULL_SHARE = 3 / 140 + 3 / 280 + 3 / 504


def chain(draws: dict[str, np.ndarray], seeds_after: dict[str, list[str]]) -> list[SimpleNamespace]:
    """The pairs of the first run with each later one: ``draws[seed]`` is items x probes of 0/1 followed from
    the first run's ``seed``; ``seeds_after[seed][j]`` the seed the run at probe j was paired under."""
    first = []
    for j in range(1, PROBES):
        parts = [
            pd.DataFrame(
                {
                    "subtask": "arc_x",
                    "category": "Logic",
                    "doc_id": np.arange(ITEMS),
                    "seed": seed if seed == seeds_after[seed][j] else f"{seed}~{seeds_after[seed][j]}",
                    "replicate": 0,
                    "seed_before": seed,
                    "before": x[:, 0],
                    "after": x[:, j],
                }
            )
            for seed, x in draws.items()
        ]
        first.append(SimpleNamespace(samples=pd.concat(parts, ignore_index=True)))
    return first


def test_an_unchanged_model_has_few_steady_losses_and_the_expected_count_matches() -> None:
    rng = np.random.default_rng(20261128)
    observed, expected, forgotten = [], [], []
    for _ in range(20):
        p = rng.beta(3, 1, ITEMS)
        draws = {s: (rng.random((ITEMS, PROBES)) < p[:, None]).astype(int) for s in ("1", "2")}
        first = chain(draws, {s: [s] * PROBES for s in draws})
        items = item_table(STEPS, first)
        steady = steady_losses(items, [str(s) for s in STEPS], first_step(first))
        assert steady.floor_items == 2 * ITEMS
        observed.append(steady.steady)
        expected.append(steady.expected)
        forgotten.append(steady.forgotten / len(items))
    trials = len(observed) * 2 * ITEMS
    assert np.mean(forgotten) == pytest.approx(0.582, abs=0.01)  # the old reading: most items "forgotten"
    assert sum(observed) / trials == pytest.approx(NULL_SHARE, abs=0.004)  # 3.8%: small, and stated
    assert sum(expected) / trials == pytest.approx(NULL_SHARE, abs=0.004)
    assert sum(expected) == pytest.approx(sum(observed), rel=0.08)  # 1500 steady losses over the trials
    assert STEADY_AFTER == 2


def test_items_of_a_chain_whose_runs_each_have_their_own_seed_join() -> None:
    rng = np.random.default_rng(7)
    p = rng.beta(3, 1, ITEMS)
    x = (rng.random((ITEMS, PROBES)) < p[:, None]).astype(int)
    first = chain({"0": x}, {"0": [str(j) for j in range(PROBES)]})  # labels 0~1, 0~2, ... never equal
    items = item_table(STEPS, first)
    assert len(items) == ITEMS
    np.testing.assert_array_equal(items.sort_values("doc_id")[[str(s) for s in STEPS]].to_numpy(), x)
    lost = ((x[:, :-1] == 1) & (x[:, 1:] == 0)).any(axis=1)
    assert int(items["first_forgotten"].notna().sum()) == int(lost.sum())
    steady = steady_losses(items, [str(s) for s in STEPS], first_step(first))
    assert steady.expected is None  # one seed per probe: no floor
