"""The real `lm_eval` CLI with the HF backend on tiny random-init models, two postforget tasks on
fixture data, then `postforget-pair` on the two output directories.

The "before" run uses the chat variants and the "after" run the `_base` variants, so this also
checks that the two prompt variants of a sub-benchmark pair item by item.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers.lmeval_cli import logged_samples, run_hf
from tests.helpers.taskfixtures import write_overrides
from tests.helpers.tinymodel import build_tiny_model

pytestmark = pytest.mark.slow

SUBTASKS = ["arc_challenge", "piqa_main"]


def test_two_hf_runs_pair_into_the_counts_of_their_logs(tmp_path: Path) -> None:
    overrides = tmp_path / "tasks"
    overrides.mkdir()
    write_overrides(overrides, SUBTASKS)
    before_model = build_tiny_model(tmp_path / "model_before", seed=0)
    after_model = build_tiny_model(tmp_path / "model_after", seed=1)
    settings = {"dtype": "float32", "max_gen_toks": 24}
    run_hf(before_model, overrides, [f"postforget_{s}" for s in SUBTASKS], tmp_path / "before", **settings)
    run_hf(after_model, overrides, [f"postforget_{s}_base" for s in SUBTASKS], tmp_path / "after", **settings)

    out = tmp_path / "paired"
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "postforget-pair"),
            str(tmp_path / "before"),
            str(tmp_path / "after"),
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr + done.stdout

    before, after = (
        {key: sample["acc"] for key, sample in logged_samples(tmp_path / side).items()} for side in ("before", "after")
    )
    assert before.keys() == after.keys() and len(before) == 4
    table = pd.read_csv(out / "subtasks.csv").set_index("subtask")
    assert list(pd.read_csv(out / "subtasks.csv").columns[:5]) == ["subtask", "category", "seed", "k", "n"]
    for sub in SUBTASKS:
        keys = [key for key in before if key[0] == sub]
        row = table.loc[sub]
        assert row["n"] == len(keys)
        for column, pattern in (("n_11", (1, 1)), ("n_10", (1, 0)), ("n_01", (0, 1)), ("n_00", (0, 0))):
            assert row[column] == sum((before[key], after[key]) == pattern for key in keys)
        assert row["seed"] == 7
    assert table.loc["arc_challenge", "category"] == "Logic"
    assert table.loc["arc_challenge", "k"] == pytest.approx(1 / ((1 / 4 + 1 / 3) / 2))
    assert table.loc["piqa_main", "k"] == 2
    samples = pd.read_parquet(out / "samples.parquet")
    assert {
        (s, int(d)): (int(b), int(a)) for s, d, b, a in samples[["subtask", "doc_id", "before", "after"]].values
    } == {key: (int(before[key]), int(after[key])) for key in before}
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["totals"]["items_paired"] == len(before)
    overall = pd.read_csv(out / "categories.csv").query("category == 'OVERALL' and average == 'micro'").iloc[0]
    assert overall["acc_before_mean"] == pytest.approx(sum(before.values()) / len(before))
    assert "| Overall |" in (out / "report.md").read_text(encoding="utf-8")
