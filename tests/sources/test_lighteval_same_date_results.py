"""Two LightEval results files of the same ``<date>``: which one gives the details their seed is a stated rule
(the first in path order), and the other is a reported problem, never a silent override.

On LightEval 0.13's own output (``tests/fixtures/lighteval/v0_13/before``) with a copy of one results file,
its seed changed to 5, put in a second model folder that sorts after, or before, the original.
"""

from __future__ import annotations

import json
import shutil

import pytest

from postforget_lmeval.sources._lighteval import SOURCE
from tests.helpers import paths

FIXTURE = paths.FIXTURES / "lighteval" / "v0_13" / "before"
DATE = "2026-11-22T08-04-01.283993"  # seed 0


@pytest.mark.parametrize(("folder", "copy_first"), [("Qwen/Qwen2.5-7B-zcopy", False), ("A-copy", True)])
def test_a_second_results_file_of_a_date_is_reported_and_the_first_in_path_order_gives_the_seed(
    tmp_path, folder, copy_first
):
    root = tmp_path / "before"
    shutil.copytree(FIXTURE, root)
    original = root / "results" / "Qwen" / "Qwen2.5-7B" / f"results_{DATE}.json"
    data = json.loads(original.read_text())
    data["config_general"]["model_config"]["generation_parameters"]["seed"] = 5
    copy = root / "results" / folder / original.name
    copy.parent.mkdir(parents=True)
    copy.write_text(json.dumps(data))
    first, second = (copy, original) if copy_first else (original, copy)

    found = SOURCE.find_runs(root)
    assert found.problems == [{
        "path": str(second),
        "problem": f"a second results file of date {DATE} (the first: {first}); its details are read with the "
        "first one's seed",
    }]  # fmt: skip
    dated = [r for r in found.task_runs if r.date == DATE]
    assert len(dated) == 3 and {(r.seed, r.results_path) for r in dated} == {(5 if copy_first else 0, first)}


def test_every_second_results_file_of_a_folder_of_copies_is_reported(tmp_path):
    """A second model folder holding copies of both runs: each copy is named, not only the first of the folder."""
    root = tmp_path / "before"
    shutil.copytree(FIXTURE, root)
    originals = sorted((root / "results" / "Qwen" / "Qwen2.5-7B").glob("results_*.json"))
    shutil.copytree(originals[0].parent, root / "results" / "Qwen" / "Qwen2.5-7B-zcopy")
    found = SOURCE.find_runs(root)
    assert [p["path"] for p in found.problems] == [
        str(root / "results" / "Qwen" / "Qwen2.5-7B-zcopy" / path.name) for path in originals
    ]
    assert len(found.task_runs) == 6 and {r.results_path for r in found.task_runs} == set(originals)
