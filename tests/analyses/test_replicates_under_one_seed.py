"""inspect_ai epochs and lm-eval repeats are replicates under one seed in the analyses too: the bootstrap's
observed figure and the noise floor's headline are subtasks.csv's (the mean of the replicates'), and the
replicates of one seed build a noise floor where they differ, on the real inspect fixtures (two epochs of
mmlu_abstract_algebra under seed 0) and on lm-eval runs with ``repeats``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from postforget_lmeval import pair
from postforget_lmeval.analyses import _bootstrap as bootstrap
from postforget_lmeval.analyses import _noise as noise
from postforget_lmeval.analyses import _significance as significance
from postforget_lmeval.analyses import terminal_columns
from tests.helpers import paths
from tests.helpers.lmeval_runs import pf_record, sample_line, write_run

pytest.importorskip("inspect_ai.log", reason="the inspect extra is not installed")
ALGEBRA = "mmlu_abstract_algebra"


def test_two_epochs_of_one_seed_are_its_figure_its_bootstrap_and_its_noise_floor() -> None:
    # epoch 1 before C C I C, after I C C C; epoch 2 before C I I C, after C C I N (tests/sources/test_inspect_source)
    # F_true per epoch: 1/4 - (1/4 * 1/4) / 3 = 11/48 and 1/4 - (1/2 * 1/2) / 3 = 8/48; the seed's: 19/96.
    # Floor: before's epochs differ on one item (F 1/4, BT 0: 1/8), after's on three (F 2/4, BT 1/4: 3/8); pooled 1/4.
    result = pair(paths.FIXTURES / "inspect" / "before_eval", paths.FIXTURES / "inspect" / "after_eval")
    row = result.subtasks.set_index("subtask").loc[ALGEBRA]
    assert row["seed"] == "0" and row["F_true"] == pytest.approx(19 / 96)
    observed = bootstrap.replicates(result.samples, n_boot=5).query("replicate == -1").set_index("subtask")
    assert observed.loc[ALGEBRA, "F_true"] == pytest.approx(19 / 96)
    assert row["F_true_headline"] == pytest.approx(19 / 96)
    assert (row["F_noise_before"], row["F_noise_after"], row["F_noise"]) == pytest.approx((1 / 8, 3 / 8, 1 / 4))
    assert row["noise_floor_from"] == noise.POOLED and noise.NEEDS_TWO not in row["noise_note"]
    assert row["noise_seeds"] == "seeds: before 1 x replicates (2 runs), after 1 x replicates (2 runs)"
    overall = result.categories.query("average == 'macro' and category == 'OVERALL'").iloc[0]
    assert overall["n_seeds"] == 1 and np.isnan(overall["F_true_std"])
    # the terminal's floor cell, F_true's floor: before (5/24 + 0) / 2, after (11/24 + 5/24) / 2 (chance 1/24 in both
    # pairs), pooled 21/96; nothing left to say in parentheses (it was "21.9 ()")
    assert row["F_true_noise"] == pytest.approx(21 / 96)
    assert terminal_columns(result).loc["Math", "noise_floor"] == "21.9"


def _repeats(root: Path, bits: tuple[str, ...]) -> None:
    """One lm-eval run of mmlu_x with ``repeats`` len(bits): replicate r of item i is bits[r][i]."""
    lines = [sample_line(i, None, record=[pf_record("mmlu_x", int(r[i])) for r in bits]) for i in range(len(bits[0]))]
    write_run(root, {"postforget_mmlu_x": lines}, configs={"postforget_mmlu_x": {"repeats": len(bits)}})


def test_lmeval_repeats_that_agree_under_one_seed_are_one_run_and_the_note_says_to_add_a_seed(tmp_path: Path) -> None:
    _repeats(tmp_path / "before", ("1100", "1100"))
    _repeats(tmp_path / "after", ("1010", "1010"))
    row = pair(tmp_path / "before", tmp_path / "after").subtasks.iloc[0]
    assert row["seed"] == "0" and row["replicates"] == 2
    assert row["noise_note"] == noise.REPLICATES_AGREE and np.isnan(row["F_noise"])


def test_lmeval_repeats_that_differ_under_one_seed_build_the_floor(tmp_path: Path) -> None:
    # before 1100 / 1010: (1/4 + 1/4) / 2 = 1/4; after 1111 / 1111 agree: the floor is before's
    _repeats(tmp_path / "before", ("1100", "1010"))
    _repeats(tmp_path / "after", ("1111", "1111"))
    row = pair(tmp_path / "before", tmp_path / "after").subtasks.iloc[0]
    assert row["F_noise"] == pytest.approx(0.25) and row["noise_floor_from"] == "before"


def test_lmeval_repeats_are_tested_on_items_not_on_item_replicates(tmp_path: Path) -> None:
    # five items forgotten in all four repeats, one kept: McNemar on the 20 replicate flips would give 2 / 2**20;
    # the replicates of an item are one question read four times, so the test is the sign flip over items, each a
    # cluster of net flip 4: two of the 2**5 sign choices reach |20|, p = 1/16
    _repeats(tmp_path / "before", ("111111",) * 4)
    _repeats(tmp_path / "after", ("000001",) * 4)
    result = pair(tmp_path / "before", tmp_path / "after")
    row = result.tables["significance"].iloc[0]
    assert (row["seed"], row["n_10"], row["n_01"]) == ("0", 20, 0)
    assert row["test"] == significance.CLUSTER and row["clusters"] == 6
    assert row["p_cluster"] == pytest.approx(1 / 16) and row["p_mcnemar"] == pytest.approx(2 / 2**20)
