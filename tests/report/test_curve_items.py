"""The curve's item table (items.csv): each item of the first run followed along the chain, whatever seed each
later run was paired under; a loss at the last probe is undetermined, not "never came back"; a steady loss stays
wrong over the stated number of later probes; the steady losses expected with no change come from the first
run's seeds."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval.cli import main as postforget_pair
from postforget_lmeval.report.curve import (
    SteadyLosses,
    beta_fit,
    item_table,
    steady_chance,
    steady_losses,
    write_curve,
)
from tests.helpers.lmeval_runs import ours, write_run


def chain_of(
    sequences: dict[int, str], seeds: list[str] | None = None, subtask: str = "arc_x"
) -> tuple[list[int], list[SimpleNamespace]]:
    """The pairs of the first run with each later one, for items of ``subtask`` whose right/wrong per step are
    ``sequences`` (doc_id -> '1', '0' or '.' (not logged) per step); ``seeds``: the seed of each run."""
    n = len(next(iter(sequences.values())))
    seeds = seeds or ["0"] * n
    steps = [10 * i for i in range(n)]
    first = []
    for j in range(1, n):
        rows = [
            {
                "subtask": subtask,
                "category": "Logic",
                "doc_id": d,
                "seed": seeds[0] if seeds[0] == seeds[j] else f"{seeds[0]}~{seeds[j]}",
                "replicate": 0,
                "seed_before": seeds[0],
                "before": int(bits[0]),
                "after": int(bits[j]),
            }
            for d, bits in sequences.items()
            if bits[0] != "." and bits[j] != "."
        ]
        first.append(SimpleNamespace(samples=pd.DataFrame(rows)))
    return steps, first


def row(table: pd.DataFrame, doc_id: int) -> pd.Series:
    return table.set_index("doc_id").loc[doc_id]


def test_an_item_forgotten_twice_came_back_after_its_first_loss() -> None:
    steps, first = chain_of({0: "1010", 1: "1000", 2: "1001"})
    table = item_table(steps, first)
    assert bool(row(table, 0)["came_back"]) is True
    assert int(row(table, 0)["first_forgotten"]) == 10
    assert int(row(table, 0)["flips"]) == 3
    assert bool(row(table, 1)["came_back"]) is False
    assert bool(row(table, 2)["came_back"]) is True


def test_an_item_missing_at_a_middle_step_keeps_its_first_forgotten_step() -> None:
    # 0: missing from the first later pair (so from its 'before' too); 1: missing after its loss
    steps, first = chain_of({0: "1.00", 1: "10.0", 2: "1111"})
    table = item_table(steps, first)
    assert len(table) == 3
    assert [row(table, 0)[str(s)] for s in steps][0] == 1  # the first run's value from a later pair
    assert int(row(table, 0)["first_forgotten"]) == 20
    assert int(row(table, 1)["first_forgotten"]) == 10
    assert pd.isna(row(table, 1)["20"])
    assert bool(row(table, 1)["came_back"]) is False


def test_a_loss_at_the_last_probe_is_undetermined() -> None:
    steps, first = chain_of({0: "1110", 1: "1100", 2: "1000", 3: "1011", 4: "0100"})
    table = item_table(steps, first, hold=2)
    assert pd.isna(row(table, 0)["came_back"])  # nothing observed after its loss: censored
    assert bool(row(table, 0)["undetermined"]) and not bool(row(table, 0)["steady_loss"])
    assert bool(row(table, 1)["came_back"]) is False
    assert bool(row(table, 1)["undetermined"]) and not bool(row(table, 1)["steady_loss"])  # 1 probe after
    assert bool(row(table, 2)["steady_loss"]) and not bool(row(table, 2)["undetermined"])  # 2 probes after
    assert not row(table, 3)[["steady_loss", "undetermined"]].any()  # came back
    assert bool(row(table, 4)["undetermined"])  # gained at 10, lost at 20: one probe after it
    table = item_table(steps, first, hold=1)
    assert row(table, 1)["steady_loss"] and row(table, 4)["steady_loss"] and not row(table, 0)["steady_loss"]


def test_checkpoints_under_different_seeds_join_into_one_row_per_item() -> None:
    # the issue's case: 10 items, every run under its own seed; the pairs' seed labels are 0~1, 0~2 ...
    sequences = {d: "111" for d in range(10)}
    sequences[3], sequences[7] = "100", "110"
    steps, first = chain_of(sequences, seeds=["0", "1", "2"])
    table = item_table(steps, first)
    assert len(table) == 10
    assert set(table["seed"]) == {"0"}
    assert table.set_index("doc_id")["first_forgotten"].dropna().to_dict() == {3: 10, 7: 20}


def test_the_curve_command_joins_checkpoints_evaluated_under_different_seeds(tmp_path: Path, capsys) -> None:
    runs = []
    for step, (seed, bits) in enumerate([(11, "1111111111"), (22, "1110111111"), (33, "1110111011")]):
        runs.append(tmp_path / f"checkpoint-{step}")
        write_run(runs[-1], ours("arc_x", bits, k=4), seed=seed)
    out = tmp_path / "out"
    assert postforget_pair(["curve", *map(str, runs), "-o", str(out), "-q", "--no-plot"]) == 0
    items = pd.read_csv(out / "items.csv")
    assert len(items) == 10
    assert items.set_index("doc_id")["first_forgotten"].dropna().astype(int).to_dict() == {3: 1, 7: 2}
    assert pd.isna(items.set_index("doc_id").loc[7, "came_back"])  # lost at the last probe


def test_the_item_table_whole_sorted_by_first_loss_with_its_types() -> None:
    # 3 is not logged at step 10; the table is sorted by first loss (none last), then by item, indexed 0..n-1
    steps, first = chain_of({0: "1010", 1: "1100", 2: "0111", 3: "1.00", 4: "1000", 5: "1111"})
    table = item_table(steps, first)
    summary = ["first_forgotten", "came_back", "flips", "first_gained", "steady_loss", "undetermined"]
    assert list(table.columns) == [
        "subtask",
        "category",
        "doc_id",
        "seed",
        "replicate",
        "0",
        "10",
        "20",
        "30",
        *summary,
    ]
    assert list(table["seed"]) == ["0"] * 6
    na = pd.NA
    expected = pd.DataFrame(
        {
            "doc_id": [0, 4, 1, 3, 2, 5],
            "0": pd.array([1, 1, 1, 1, 0, 1], dtype="Int8"),
            "10": pd.array([0, 0, 1, na, 1, 1], dtype="Int8"),
            "20": pd.array([1, 0, 0, 0, 1, 1], dtype="Int8"),
            "30": pd.array([0, 0, 0, 0, 1, 1], dtype="Int8"),
            "first_forgotten": pd.array([10, 10, 20, 20, na, na], dtype="Int64"),
            "came_back": pd.array([True, False, False, False, False, False], dtype="boolean"),
            "flips": [3, 1, 1, 1, 1, 0],
            "first_gained": pd.array([20, na, na, na, 10, na], dtype="Int64"),
            "steady_loss": [False, True, False, False, False, False],
            "undetermined": [True, False, True, True, False, False],
        }
    )
    pd.testing.assert_frame_equal(table[expected.columns], expected)
    # nothing lost or gained: the summary columns keep their types
    steps, first = chain_of({0: "11", 1: "00"})
    table = item_table(steps, first)
    assert table[summary[:4]].dtypes.astype(str).tolist() == ["Int64", "boolean", "int64", "Int64"]
    assert table["first_forgotten"].isna().all() and table["first_gained"].isna().all()
    assert not table["came_back"].any()
    # every item lost at its last probe: came_back is missing throughout, still a boolean column
    table = item_table(*chain_of({0: "10", 1: "10"}))
    assert str(table["came_back"].dtype) == "boolean" and table["came_back"].isna().all()


def test_beta_fit_by_moments_from_two_seeds() -> None:
    # items right under both seeds, neither, one: mean 1/2, both-right 1/4 + ... worked by hand
    wide = pd.DataFrame({"a": [1, 1, 0, 0, 1, 0], "b": [1, 1, 0, 0, 0, 1]}, dtype=float)
    mean, spread = beta_fit(wide)
    assert mean == pytest.approx(0.5)
    assert spread == pytest.approx((2 / 6 - 0.25) / 0.25)  # (E[p^2] - mean^2) / (mean (1 - mean)) = 1/3
    assert beta_fit(pd.DataFrame({"a": [1.0, 0.0], "b": [np.nan, 0.0]})) == (0.0, 1.0)
    assert beta_fit(pd.DataFrame({"a": [1.0], "b": [np.nan]})) is None
    assert beta_fit(pd.DataFrame({"a": [1.0, 0.0], "b": [0.0, 1.0]})) == (0.5, 0.0)  # no spread seen: clipped
    assert beta_fit(pd.DataFrame({"a": [1.0, 1.0], "b": [1.0, 1.0]})) == (1.0, 1.0)  # always right: no spread
    # three seeds: both-right shares 3*2/(3*2), 0, 0; spread (1/3 - 16/81) / (20/81) = 11/20
    assert beta_fit(pd.DataFrame({"a": [1, 1, 0], "b": [1, 0, 0], "c": [1, 0, 0]})) == pytest.approx((4 / 9, 11 / 20))
    # an item right under its two seeds, one wrong under three: (1/2 - 0.4^2) / (0.4 * 0.6) = 1.42, clipped to 1
    assert beta_fit(pd.DataFrame({"a": [1.0, 0.0], "b": [1.0, 0.0], "c": [np.nan, 0.0]})) == (0.4, 1.0)


def test_the_steady_chance_under_no_change() -> None:
    # one chance p for all: p (1-p)^3 + p (1-p)^4 + p (1-p)^5 over 6 probes with hold 2
    assert steady_chance((0.5, 0.0), 6, 2) == pytest.approx(0.5 * (1 / 8 + 1 / 16 + 1 / 32))
    assert steady_chance((0.5, 1.0), 6, 2) == 0.0  # items always right or always wrong never flip
    assert steady_chance((0.5, 0.0), 3, 2) == 0.0  # too few probes to tell
    # beta(1, 1) (spread 1/3): E[p (1-p)^r] = 1 / ((r + 1)(r + 2))
    assert steady_chance((0.5, 1 / 3), 5, 1) == pytest.approx(1 / 12 + 1 / 20 + 1 / 30)
    # beta(1, 2) (mean 1/3, spread 1/4): E[p (1-p)^r] = B(2, 2 + r) / B(1, 2) = 2 / ((r + 2)(r + 3))
    assert steady_chance((1 / 3, 1 / 4), 4, 1) == pytest.approx(2 / 20 + 2 / 30)


def test_the_expected_count_needs_two_seeds_at_the_first_step() -> None:
    steps, first = chain_of({0: "100", 1: "111"})
    items = item_table(steps, first, hold=1)
    none = steady_losses(items, ["0", "10", "20"], None, hold=1)
    assert (none.steady, none.expected) == (1, None)
    assert "each probe is one seed" in none.sentence() and "no noise floor" in none.sentence()
    first_step = pd.DataFrame(
        {
            "subtask": "arc_x",
            "doc_id": [0, 0, 1, 1],
            "replicate": 0,
            "seed_before": ["0", "1", "0", "1"],
            "before": [1, 0, 1, 1],
        }
    )
    got = steady_losses(items, ["0", "10", "20"], first_step, hold=1)
    mean, spread = 3 / 4, (1 / 2 - 9 / 16) / (3 / 16)  # negative: clipped to one chance for all
    assert spread < 0
    assert got.expected == pytest.approx(2 * mean * (1 - mean) ** 2)
    assert got.floor_items == 2
    assert "1.0 would be expected by chance" not in got.sentence()
    assert f"{got.expected:.1f} would be expected" in got.sentence()


def test_the_sentence_states_every_count_and_the_floor_or_its_absence() -> None:
    counts = {"hold": 3, "forgotten": 7, "came_back": 2, "steady": 4, "undetermined": 1, "floor_items": 9, "items": 12}
    losses = "7 of 12 items forgotten at some step, 2 came back later; 4 steady losses (wrong at their last loss and "
    losses += "the 3 or more probes after it), 1 undetermined (lost too near the last probe); "
    assert SteadyLosses(expected=2.34, **counts).sentence() == losses + (
        "with no change at all 2.3 would be expected by chance (a beta-binomial fit to the first step's seeds, over "
        "9 of 12 items)"
    )
    assert SteadyLosses(expected=None, **counts).sentence() == losses + (
        "each probe is one seed, so there is no noise floor to compare with (evaluate every step under the same two "
        "seeds to get one)"
    )


def test_the_expected_count_sums_the_sub_benchmarks_that_have_two_seeds() -> None:
    # arc_a was logged under one seed at the first step (no floor), arc_b and arc_c under two; hold 1, 4 probes
    parts = [
        chain_of({0: "1010", 1: "1100"}, subtask="arc_a"),
        chain_of({0: "1110", 1: "1000", 2: "0111"}, subtask="arc_b"),
        chain_of({0: "1111"}, subtask="arc_c"),
    ]
    steps = parts[0][0]
    first = [SimpleNamespace(samples=pd.concat([p[1][j].samples for p in parts])) for j in range(3)]
    items = item_table(steps, first, hold=1)
    seeds = pd.DataFrame(
        [("arc_a", 0, "0", 1), ("arc_a", 1, "0", 1)]
        + [("arc_b", d, s, b) for d, (b0, b1) in enumerate([(1, 1), (1, 0), (0, 0)]) for s, b in (("0", b0), ("1", b1))]
        + [("arc_c", 0, "0", 1), ("arc_c", 0, "1", 0)],
        columns=["subtask", "doc_id", "seed_before", "before"],
    ).assign(replicate=0)
    got = steady_losses(items, [str(s) for s in steps], seeds, hold=1)
    # arc_b: beta(1, 1) (mean 1/2, spread 1/3), 1/12 + 1/20 per item; arc_c: no spread seen, 1/2 (1/4 + 1/8)
    assert dataclasses.replace(got, expected=None) == SteadyLosses(
        hold=1, forgotten=4, came_back=1, steady=2, undetermined=2, expected=None, floor_items=4, items=6
    )
    assert got.expected == pytest.approx(3 * (1 / 12 + 1 / 20) + 0.5 * (1 / 4 + 1 / 8))


def test_the_curve_gives_the_expected_count_when_the_first_run_logged_two_seeds(tmp_path: Path) -> None:
    runs = []
    for step, bits in ((0, "11110000"), (5, "10110000"), (9, "00110000")):
        runs.append(tmp_path / f"step_{step}")
        write_run(runs[-1], ours("arc_x", bits, k=4), seed=1)
        second = "11001100" if step == 0 else bits
        write_run(runs[-1], ours("arc_x", second, k=4), seed=2, date="2025-01-01T00-00-00.000002")
    curve, _ = write_curve(runs, tmp_path / "out", plot=False, hold=1)
    wide = pd.DataFrame({"1": [1, 1, 1, 1, 0, 0, 0, 0], "2": [1, 1, 0, 0, 1, 1, 0, 0]}, dtype=float)
    fit = beta_fit(wide)
    assert len(curve.items) == 16  # each item followed from each of the first run's seeds
    assert curve.steady.floor_items == 16
    assert curve.steady.expected == pytest.approx(16 * steady_chance(fit, 3, 1))
    assert (curve.steady.steady, curve.steady.undetermined) == (4, 2)
    assert curve.warnings == []


def test_a_first_run_seed_no_later_run_has_is_named_and_hold_0_counts_a_last_probe_loss_steady(tmp_path: Path) -> None:
    runs = []
    for step, bits in ((0, "1111"), (5, "1011"), (9, "0011")):
        runs.append(tmp_path / f"step_{step}")
        write_run(runs[-1], ours("arc_x", bits, k=4), seed=1)
    write_run(runs[0], ours("arc_x", "1100", k=4), seed=2, date="2025-01-01T00-00-00.000002")
    write_run(runs[0], ours("arc_x", "0110", k=4), seed=3, date="2025-01-01T00-00-00.000003")
    curve, _ = write_curve(runs, tmp_path / "out", plot=False, hold=0)
    assert curve.steady.expected is None
    assert curve.warnings == [
        "the first run's seed(s) 2, 3 are paired with no later run, so they give the steady losses no noise floor: "
        "evaluate the later steps under them too"
    ]
    assert (curve.steady.steady, curve.steady.undetermined) == (2, 0)  # hold 0: lost at the last probe is steady
