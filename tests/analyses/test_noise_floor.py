"""The noise floor: a hand-worked pair of runs through ``pair``, and a simulation with known per-item success
probabilities whose floor and beyond-noise figure the intervals must cover at their stated level."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval import pair
from postforget_lmeval.analyses import _noise as noise
from tests.helpers.lmeval_runs import ours, write_run


def _runs(root: Path, bits: dict[str, list[str]]) -> None:
    for side, per_seed in bits.items():
        for seed, b in enumerate(per_seed):
            write_run(root / side / f"s{seed}", ours("arc_easy", b, category="Logic"), seed=seed)


def test_floor_by_hand(tmp_path: Path) -> None:
    # before s0 -> s1: 1->0 at items 5, 6, 0->1 at item 8: (0.2 + 0.1) / 2 = 0.15; chance 0.2 * 0.3 / 3 = 0.02,
    # F_true 0.18, BT_true 0.08: 0.13. After: both seeds equal (greedy): 0 and 0, left out of the floor subtracted,
    # which is the before side's (averaging the after side's 0 in would halve it to 0.075).
    _runs(tmp_path, {"before": ["1111111100", "1111100110"], "after": ["1111110010", "1111110010"]})
    result = pair(tmp_path / "before", tmp_path / "after")
    rows = result.subtasks.set_index("seed")
    assert rows["F_noise"].tolist() == pytest.approx([0.15, 0.15])
    assert rows["BT_noise"].tolist() == pytest.approx([0.15, 0.15])
    assert rows["F_true_noise"].tolist() == pytest.approx([0.13, 0.13])
    assert rows["F_noise_before"].tolist() == pytest.approx([0.15, 0.15])
    assert rows["F_true_noise_before"].tolist() == pytest.approx([0.13, 0.13])
    assert rows["F_noise_after"].tolist() == [0.0, 0.0] and rows["F_true_noise_after"].tolist() == [0.0, 0.0]
    # seed 0: F 0.2, F_true 0.18; seed 1 (1111100110 -> 1111110010): F 0.1, BT 0.1, chance 0.03, F_true 0.07
    assert rows["F_beyond_noise"].tolist() == pytest.approx([0.05, -0.05])
    assert rows["F_true_beyond_noise"].tolist() == pytest.approx([0.05, -0.06])
    assert rows["BT_true_beyond_noise"].tolist() == pytest.approx([0.08 - 0.13, 0.07 - 0.13])
    assert set(rows["noise_note"]) == {noise.greedy_note("after", "before")}
    assert set(rows["noise_floor_from"]) == {"before"} and set(rows["noise_seeds"]) == {"seeds: before 2, after 2"}
    assert not rows["noise_shared_seed"].any()  # a greedy side draws no random numbers: sharing seeds is harmless
    overall = result.categories.query("average == 'macro' and category == 'OVERALL'").iloc[0]
    assert overall["F_true_beyond_noise_mean"] == pytest.approx(-0.005)
    assert overall["F_true_beyond_noise_lo"] <= -0.005 <= overall["F_true_beyond_noise_hi"]
    assert overall["noise_floor_from"] == "before" and overall["noise_note"] == noise.greedy_note("after", "before")


def test_one_seed_says_the_floor_needs_two(tmp_path: Path) -> None:
    _runs(tmp_path, {"before": ["1111111100"], "after": ["1111110010"]})
    result = pair(tmp_path / "before", tmp_path / "after")
    assert result.subtasks["noise_note"].tolist() == [noise.NEEDS_TWO]
    assert result.subtasks["F_noise"].isna().all() and result.subtasks["F_true_beyond_noise"].isna().all()
    overall = result.categories.query("average == 'macro' and category == 'OVERALL'").iloc[0]
    assert overall["noise_note"] == noise.NEEDS_TWO


# item types (p before, q after), drawn with equal probability: the population's figures are their means
CHANGED = [(0.9, 0.9), (0.6, 0.3), (0.3, 0.3), (0.95, 0.5), (0.5, 0.7)]
UNCHANGED = [(p, p) for p, _ in CHANGED]


def _known(types: list[tuple[float, float]]) -> tuple[float, float]:
    """(floor, F beyond it) of the population: E[p(1-p) + q(1-q)] / 2 and E[p(1-q)] minus that."""
    floor = float(np.mean([(p * (1 - p) + q * (1 - q)) / 2 for p, q in types]))
    return floor, float(np.mean([p * (1 - q) for p, q in types])) - floor


def _simulated(rng: np.random.Generator, types: list[tuple[float, float]], n: int, seeds: int) -> pd.DataFrame:
    kind = rng.integers(0, len(types), n)
    p, q = (np.array([t[i] for t in types])[kind] for i in (0, 1))
    parts = [
        pd.DataFrame(
            {
                "subtask": "sim",
                "category": "Sim",
                "doc_id": np.arange(n),
                "seed": str(s),
                "replicate": 0,
                "before": (rng.random(n) < p).astype(np.int8),
                "after": (rng.random(n) < q).astype(np.int8),
                "k": 4.0,
            }
        )  # fmt: skip
        for s in range(seeds)
    ]
    return pd.concat(parts, ignore_index=True)


@pytest.mark.slow
@pytest.mark.parametrize("types", [CHANGED, UNCHANGED], ids=["changed", "unchanged"])
def test_floor_and_beyond_noise_cover_the_known_values(types: list[tuple[float, float]]) -> None:
    """95% intervals of the floor and of F beyond it, 200 simulated pairs of 300 items with 3 seeds a side: the
    known population values must fall inside 90-99% of the time (binomial spread of 200 trials around 95%)."""
    floor, beyond = _known(types)
    rng = np.random.default_rng(21)
    hits = {"floor": 0, "beyond": 0}
    trials = 200
    for trial in range(trials):
        _, cats, _ = noise.noise_floor(_simulated(rng, types, 300, 3), n_boot=200, seed=trial)
        row = cats.set_index("category").loc["OVERALL"]
        hits["floor"] += row["F_noise_lo"] <= floor <= row["F_noise_hi"]
        hits["beyond"] += row["F_beyond_noise_lo"] <= beyond <= row["F_beyond_noise_hi"]
    for name, hit in hits.items():
        assert 0.90 <= hit / trials <= 0.99, f"{name}: {hit}/{trials} intervals cover the known value"
    if types is UNCHANGED:
        assert beyond == 0.0
