"""The many-pairs table against figures worked out by hand (the other tests compare it with each pair's own run).

One pair, two seeds, two sub-benchmarks of 10 items in two categories (one sub-benchmark each):

piqa_main (Commonsense, k=2)
    seed 0: 1111111100 -> 1111110010: n_10 2, n_01 1, acc 0.8 -> 0.7, chance 0.2*0.3/1 = 0.06,
            F_true 0.2-0.06 = 0.14, BT_true 0.1-0.06 = 0.04, F_max (2*0.8-1)/1 = 0.6, BT_max 0.4
    seed 1: 1111111010 -> 1111100011: the same counts and accuracies, so the same figures
arc_easy (Logic, k=4)
    seed 0: 1111100000 -> 1110001100: n_10 2, n_01 2, acc 0.5 -> 0.5, chance 0.25/3 = 1/12,
            F_true = BT_true = 0.2-1/12 = 7/60, F_max = BT_max = (4*0.5-1)/3 = 1/3
    seed 1: 1111010000 -> 1111000011: n_10 1, n_01 2, acc 0.5 -> 0.6, chance 0.5*0.4/3 = 1/15,
            F_true 0.1-1/15 = 1/30, BT_true 0.2-1/15 = 2/15, F_max 1/3, BT_max (4*0.6-1)/3 = 7/15

A cell is mean ± sample std over the seeds (ceiling's mean); Overall averages the categories per seed first.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from postforget_lmeval.report import many as multipair
from tests.helpers.lmeval_runs import ours, write_run

RUNS = {
    "before": {0: ("1111111100", "1111100000"), 1: ("1111111010", "1111010000")},
    "after": {0: ("1111110010", "1110001100"), 1: ("1111100011", "1111000011")},
}


@pytest.fixture()
def pairs_dir(tmp_path: Path) -> Path:
    for side, seeds in RUNS.items():
        for seed, (piqa, arc) in seeds.items():
            tasks = {**ours("piqa_main", piqa, k=2, category="Commonsense"), **ours("arc_easy", arc, category="Logic")}
            write_run(tmp_path / side / f"seed{seed}", tasks, seed=seed)
    out = tmp_path / "out"
    spec = multipair.PairSpec("sft", str(tmp_path / "before"), str(tmp_path / "after"))
    multipair.run_pairs([spec], out, plot=False)
    return out


def test_pairs_csv_cells_are_the_hand_worked_figures(pairs_dir: Path) -> None:
    wide = pd.read_csv(pairs_dir / "pairs.csv").set_index(["metric", "category"])["sft"]
    # Logic F_true: mean(7/60, 2/60) = 0.075, std |5/60|/sqrt(2) = 0.0589; F_max 1/3
    assert wide[("F_true", "Logic")] == "7.5 ± 5.9 (33.3)"
    # Logic BT_true: mean(7/60, 8/60) = 0.125, std (1/60)/sqrt(2) = 0.0118; BT_max mean(1/3, 7/15) = 0.4
    assert wide[("BT_true", "Logic")] == "12.5 ± 1.2 (40.0)"
    assert wide[("F_true", "Commonsense")] == "14.0 ± 0.0 (60.0)"
    assert wide[("BT_true", "Commonsense")] == "4.0 ± 0.0 (40.0)"


def test_pairs_long_overall_averages_categories_per_seed(pairs_dir: Path) -> None:
    long = pd.read_csv(pairs_dir / "pairs_long.csv")
    row = long[(long["category"] == "OVERALL") & (long["metric"] == "F_true")].iloc[0]
    # per seed: (0.14 + 7/60)/2 and (0.14 + 1/30)/2; mean 0.1075, sample std 0.041667/sqrt(2)
    seed0, seed1 = (0.14 + 7 / 60) / 2, (0.14 + 1 / 30) / 2
    assert row["mean"] == pytest.approx((seed0 + seed1) / 2) == pytest.approx(0.1075)
    assert row["std"] == pytest.approx(abs(seed0 - seed1) / math.sqrt(2))
    bt = long[(long["category"] == "Logic") & (long["metric"] == "BT_true")].iloc[0]
    assert bt["mean"] == pytest.approx(0.125) and bt["std"] == pytest.approx((1 / 60) / math.sqrt(2))
