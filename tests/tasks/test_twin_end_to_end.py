"""The real ``lm_eval`` CLI with the HF backend on a tiny model: log-likelihood twins beside their generative
tasks on the same real rows, in one run; every generated item has its twin, with every option's log-likelihood."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
    model = build_tiny_model(tmp_path / "model")
    entries = [by_subtask(s) for s in SUBTASKS]
    tasks = [t for e in entries for t in (e.task, e.ll_task)]
    run_hf(model, overrides, tasks, tmp_path / "run", dtype="float32", max_gen_toks=8)
    for entry in entries:
        generated, twin = _samples(tmp_path / "run", entry.task), _samples(tmp_path / "run", entry.ll_task)
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
