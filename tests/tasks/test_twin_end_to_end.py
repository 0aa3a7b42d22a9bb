"""The real ``lm_eval`` CLI with the HF backend on two tiny models: log-likelihood twins beside their generative
tasks on the same real rows, in one run per model; every generated item has its twin, with every option's
log-likelihood, and pairing the two runs joins every paired item to both sides' twins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from postforget_lmeval import pair
from postforget_lmeval.tasks.catalog import by_subtask
from tests.helpers.lmeval_cli import run_hf
from tests.helpers.taskfixtures import REFERENCE, write_overrides
from tests.helpers.tinymodel import build_tiny_model

pytestmark = pytest.mark.slow

SUBTASKS = ["arc_challenge", "mmlu_abstract_algebra", "siqa_main"]


def _samples(run_dir: Path, task: str) -> list[dict]:
    (path,) = run_dir.rglob(f"samples_{task}_2*.jsonl")  # the twin's name extends the task's
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_twins_join_their_generative_tasks_item_by_item(tmp_path: Path) -> None:
    overrides = tmp_path / "tasks"
    overrides.mkdir()
    write_overrides(overrides, SUBTASKS, data=REFERENCE)
    entries = [by_subtask(s) for s in SUBTASKS]
    tasks = [t for e in entries for t in (e.task, e.ll_task)]
    for seed, side in enumerate(("before", "after")):
        model = build_tiny_model(tmp_path / f"model_{side}", seed=seed)
        run_hf(model, overrides, tasks, tmp_path / side, dtype="float32", max_gen_toks=8)
    for entry in entries:
        generated, twin = _samples(tmp_path / "before", entry.task), _samples(tmp_path / "before", entry.ll_task)
        rows = len((REFERENCE / f"{entry.subtask}.jsonl").read_text(encoding="utf-8").splitlines())
        assert len(generated) == rows
        keys = {(s["doc_id"], s["doc_hash"]): s["postforget"]["gold"] for s in generated}
        assert {(s["doc_id"], s["doc_hash"]): s["postforget"]["gold"] for s in twin} == keys
        for sample in twin:
            rec, options = sample["postforget"], sample["doc"]["pf_options"]
            lls = [float(pair[0]) for pair in sample["filtered_resps"]]  # logged as text
            assert rec["option_ll"] == pytest.approx(lls) and len(lls) == len(options) == rec["k"]
            assert all(ll < 0 for ll in lls)  # a real model's log-probabilities
            assert rec["answer"] == chr(65 + lls.index(max(lls))) and rec["subtask"] == entry.subtask

    # pairing: the generative runs are the headline, and every paired item has its twin on both sides
    result = pair(tmp_path / "before", tmp_path / "after")
    assert sorted(result.subtasks["task_before"]) == sorted(e.task for e in entries)
    items = result.samples[["subtask", "doc_id"]].astype({"subtask": str}).drop_duplicates()
    assert len(result.twins) == len(items) == sum(len(_samples(tmp_path / "after", e.task)) for e in entries)
    assert result.twins[["correct_before", "correct_after"]].notna().all().all()
    flips = result.samples["transition"].isin(["1->0", "0->1"])
    assert ((result.samples["knowledge"] != "") == flips).all()  # every flip labelled, nothing else
