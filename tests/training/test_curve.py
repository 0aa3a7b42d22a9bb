"""The curve report on a hand-worked chain of four runs (written in lm-eval's layout): the first-forgotten table
and the curve's figures against the first and the previous run, from the library and from ``postforget-pair
curve``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from postforget_lmeval.cli import main as postforget_pair
from postforget_lmeval.errors import PairingError
from postforget_lmeval.report.curve import in_step_order, write_curve
from tests.helpers.lmeval_runs import ours, write_run

# items 0..5 at steps 0, 10, 20, 30
RUNS = {0: "110101", 10: "001101", 20: "010100", 30: "011101"}
# per item: first forgotten, came back, flips, first gained
EXPECTED = {
    0: (10, False, 1, None),
    1: (10, True, 2, 20),
    2: (20, True, 3, 10),
    3: (None, False, 0, None),
    4: (None, False, 0, None),
    5: (20, True, 2, 30),
}


@pytest.fixture
def runs(tmp_path: Path) -> list[Path]:
    dirs = []
    for step, bits in RUNS.items():
        directory = tmp_path / f"checkpoint-{step}"
        write_run(directory, ours("arc_challenge", bits, k=4))
        dirs.append(directory)
    return dirs


def _check(out: Path) -> None:
    items = pd.read_csv(out / "items.csv").set_index("doc_id")
    for doc_id, (forgotten, came_back, flips, gained) in EXPECTED.items():
        row = items.loc[doc_id]
        assert (None if pd.isna(row["first_forgotten"]) else int(row["first_forgotten"])) == forgotten
        assert bool(row["came_back"]) == came_back
        assert int(row["flips"]) == flips
        assert (None if pd.isna(row["first_gained"]) else int(row["first_gained"])) == gained
        assert [int(row[str(s)]) for s in RUNS] == [int(bits[doc_id]) for bits in RUNS.values()]
    curve = pd.read_csv(out / "curve.csv")
    first = curve[(curve["against"] == "first") & (curve["category"] == "OVERALL")].set_index("step")
    assert first.loc[10, "F_true"] == pytest.approx(5 / 18)  # F 2/6 - chance (2/6)(3/6)/3
    assert first.loc[10, "BT_true"] == pytest.approx(1 / 9)
    assert first.loc[10, "F_max"] == pytest.approx(5 / 9)
    previous = curve[(curve["against"] == "previous") & (curve["category"] == "OVERALL")].set_index("step")
    assert previous.loc[20, "F_true"] == pytest.approx(2 / 9)  # 001101 -> 010100: F 2/6 - (3/6)(4/6)/3
    assert previous.loc[20, "BT_true"] == pytest.approx(1 / 18)
    assert previous.loc[10, "F_true"] == pytest.approx(first.loc[10, "F_true"])
    assert sorted(p.name for p in (out / "chain").iterdir() if p.is_dir()) == [
        "from_first_checkpoint-20",
        "from_first_checkpoint-30",
        "step1_checkpoint-10",
        "step2_checkpoint-20",
        "step3_checkpoint-30",
    ]
    assert "Items forgotten at some step" in (out / "curve.html").read_text(encoding="utf-8")


def test_the_library_writes_the_hand_worked_curve(runs: list[Path], tmp_path: Path) -> None:
    curve, _ = write_curve(runs, tmp_path / "out", plot=False)
    assert curve.steps == [0, 10, 20, 30]
    _check(tmp_path / "out")


def test_the_curve_command_writes_the_same_from_the_directory_names(runs: list[Path], tmp_path: Path) -> None:
    assert postforget_pair(["curve", *map(str, reversed(runs)), "-o", str(tmp_path / "cli"), "-q"]) == 0
    _check(tmp_path / "cli")
    assert (tmp_path / "cli" / "curve.png").stat().st_size > 0


def test_steps_must_be_known_and_increase(tmp_path: Path) -> None:
    with pytest.raises(PairingError, match="cannot read a step from the name of .*base"):
        in_step_order([tmp_path / "base", tmp_path / "step_10"])
    with pytest.raises(PairingError, match="must increase"):
        in_step_order([tmp_path / "a", tmp_path / "b"], [10, 5])
    with pytest.raises(PairingError, match="must increase"):
        in_step_order([tmp_path / "step_5", tmp_path / "checkpoint-5"])
    assert in_step_order(["base", "sft"], [0, 100]) == (["base", "sft"], [0, 100])
    glob_order = ["runs/checkpoint-1000", "runs/checkpoint-500", "runs/checkpoint-0"]
    assert in_step_order(glob_order) == (
        ["runs/checkpoint-0", "runs/checkpoint-500", "runs/checkpoint-1000"],
        [0, 500, 1000],
    )
