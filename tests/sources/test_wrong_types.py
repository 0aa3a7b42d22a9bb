"""Results files and samples with fields of the wrong type: a message naming the file, the field and what it holds,
never a traceback."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from postforget_lmeval import PairingError, extract_answer, pair
from postforget_lmeval.cli import main
from tests.helpers import paths
from tests.helpers.lmeval_runs import ours, write_run

TASK = "postforget_mmlu_x"


def runs(tmp_path: Path) -> tuple[Path, Path, Path]:
    b, a = tmp_path / "before", tmp_path / "after"
    results = write_run(b, ours("mmlu_x", "1100"), seed=1)
    write_run(a, ours("mmlu_x", "1010"), seed=1)
    return b, a, results


def edit_results(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def edit_samples(results: Path, change: Callable[[dict[str, Any]], None]) -> None:
    (samples,) = results.parent.glob("samples_*.jsonl")
    lines = []
    for line in samples.read_text(encoding="utf-8").splitlines():
        sample = json.loads(line)
        change(sample)
        lines.append(json.dumps(sample) + "\n")
    samples.write_text("".join(lines), encoding="utf-8")


WRONG_RESULTS = {
    "a task config that is text": (lambda d: d["configs"].__setitem__(TASK, "oops"), "its config is str"),
    "a results entry that is a list": (lambda d: d["results"].__setitem__(TASK, [0.5]), "'results' entry is list"),
    "results that is a list": (lambda d: d.__setitem__("results", [1]), "'results' is list, not an object"),
    "repeats that is text": (lambda d: d["configs"][TASK].__setitem__("repeats", "two"), "repeats is 'two'"),
    "repeats that is a fraction": (lambda d: d["configs"][TASK].__setitem__("repeats", 1.5), "repeats is 1.5"),
    "n-samples that is text": (lambda d: d.__setitem__("n-samples", "4"), "'n-samples' is str"),
    "config that is a list": (lambda d: d.__setitem__("config", []), "'config' is list"),
    "a group listing a number": (lambda d: d.__setitem__("group_subtasks", {"g": 3}), "group 'g' lists int"),
}


@pytest.mark.parametrize("case", list(WRONG_RESULTS))
def test_a_results_field_of_the_wrong_type_is_named(tmp_path, capsys, case):
    b, a, results = runs(tmp_path)
    change, expected = WRONG_RESULTS[case]
    edit_results(results, change)
    with pytest.raises(PairingError) as e:
        pair(b, a)
    assert str(results) in str(e.value) and expected in str(e.value)
    assert "samples file without a results file" not in str(e.value)
    assert main([str(b), str(a), "-o", str(tmp_path / "out"), "-q"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and expected in err


@pytest.mark.parametrize("groups", [{"g": ["g", TASK]}, {"g": ["h", TASK], "h": ["g"]}])
def test_a_group_that_lists_itself_or_a_cycle_of_groups_still_pairs(tmp_path, groups):
    b, a, results = runs(tmp_path)
    edit_results(results, lambda d: d.__setitem__("group_subtasks", groups))
    result = pair(b, a)
    assert result.subtasks["n"].tolist() == [4]


def test_doc_id_beyond_64_bits_or_text_is_named_as_such(tmp_path):
    b, a, results = runs(tmp_path)

    def odd_ids(sample: dict[str, Any]) -> None:
        sample["doc_id"] = (
            2**70 if sample["doc_id"] == 0 else str(sample["doc_id"]) if sample["doc_id"] == 1 else sample["doc_id"]
        )

    edit_samples(results, odd_ids)
    result = pair(b, a)
    assert result.subtasks["n"].tolist() == [2]
    (malformed,) = [p for p in result.summary["problems"]["before"] if p["kind"] == "malformed"]
    assert "1 doc_id is not a whole number that fits 64 bits" in malformed["problem"]
    assert "1 doc_id is text, not an integer" in malformed["problem"]


def test_a_doc_that_is_a_list_under_rescore_keeps_its_logged_score(tmp_path):
    b, a, results = runs(tmp_path)
    edit_samples(results, lambda s: s.__setitem__("doc", [1, 2]))
    result = pair(b, a, rescore="strict")
    assert result.subtasks["n"].tolist() == [4]
    assert any("4 sample(s) cannot be rescored" in w for w in result.warnings)


@pytest.mark.parametrize("options", [None, "ABCD", 7])
def test_extract_answer_never_raises_on_odd_options(options):
    assert extract_answer("So the answer is (B).", options).answer == "B"


def _lighteval_copy(tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    import shutil

    root = tmp_path / "before"
    shutil.copytree(paths.FIXTURES / "lighteval" / "v0_13" / "before", root)
    for results in root.rglob("results_*.json"):
        edit_results(results, change)
    return root


def test_a_lighteval_seed_that_is_not_a_number_is_named_not_a_traceback(tmp_path):
    from postforget_lmeval.sources import by_name

    def odd_seed(data: dict[str, Any]) -> None:
        data["config_general"]["model_config"]["generation_parameters"]["seed"] = "abc"

    runs = by_name("lighteval").find_runs(_lighteval_copy(tmp_path, odd_seed)).task_runs
    assert runs and {r.seed for r in runs} == {None}
    assert all("'abc', not a whole number" in r.seed_source for r in runs)


def test_a_lighteval_config_that_is_not_an_object_is_named(tmp_path):
    from postforget_lmeval.sources import by_name

    root = _lighteval_copy(tmp_path, lambda d: d.__setitem__("config_general", []))
    found = by_name("lighteval").find_runs(root)
    assert found.task_runs == [] and len(found.problems) == 2 + 6  # 2 results files, then their 6 details files
    assert found.problems[:2] == [
        {"path": str(path), "problem": "'config_general' is not an object; skipped"}
        for path in sorted(root.rglob("results_*.json"))
    ]
    assert all("no results_" in p["problem"] for p in found.problems[2:])


def test_a_lighteval_task_config_with_counts_that_are_not_numbers_gives_none(tmp_path):
    from postforget_lmeval.sources import by_name

    def as_text(data: dict[str, Any]) -> None:
        for cfg in data["config_tasks"].values():
            cfg.update(generation_size="32k", effective_num_docs="6")

    runs = by_name("lighteval").find_runs(_lighteval_copy(tmp_path, as_text)).task_runs
    assert len(runs) == 6 and {(r.max_gen_toks, r.n_expected) for r in runs} == {(None, None)}
