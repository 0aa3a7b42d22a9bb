"""What a probe costs, split into the model's scoring (time inside lm-eval's request methods) and everything else,
recorded per probe; and the set-up lm-eval allows once per training run (loading the tasks, describing the
environment) done once, with probes equal to those of a fresh set-up. They run lm-eval on a tiny GPT-2."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from postforget_lmeval.training import Probes
from tests.helpers.tinymodel import build_tiny_model
from tests.training.words import task

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    directory = build_tiny_model(tmp_path_factory.mktemp("tiny"))
    return AutoModelForCausalLM.from_pretrained(directory), AutoTokenizer.from_pretrained(directory)


def test_each_probe_records_its_scoring_apart_from_everything_else(
    tmp_path: Path, tiny: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model's log-likelihood requests are made to take 0.6 s more (a sleep: wall, not CPU): the probe's scoring
    holds those 0.6 s, the whole probe more, and probes.json and the printed cost carry both."""
    from lm_eval.models.huggingface import HFLM

    model, tokenizer = tiny
    scoring = HFLM.loglikelihood

    def slow(self, requests, *args, **kwargs):
        time.sleep(0.6)
        return scoring(self, requests, *args, **kwargs)

    monkeypatch.setattr(HFLM, "loglikelihood", slow)
    probes = Probes(["probe_words"], tmp_path / "out", include_path=task(tmp_path))
    probes.wrap(model, tokenizer)
    probes.start(model, 0)
    probes.probe(model, 4)
    probes.metrics()
    recorded = json.loads((tmp_path / "out" / "probes.json").read_text(encoding="utf-8"))["probes"]
    assert [p["step"] for p in recorded] == [0, 4]
    for probe in recorded:
        assert 0.6 <= probe["scoring_seconds"] < probe["seconds"]
        assert 0 < probe["scoring_cpu_seconds"] < probe["cpu_seconds"]  # the sleep costs no CPU
        assert probe["scoring_cpu_seconds"] < probe["scoring_seconds"] - 0.5
    last = probes.done[-1]
    assert probes.cost(10.0).startswith(
        f"forgetting probe at step 4: {last.seconds:.1f} s (the model's scoring {last.scoring:.1f} s, everything "
        f"else {last.seconds - last.scoring:.1f} s; CPU {last.scoring_cpu:.1f} of {last.cpu:.1f} s)"
    )


def test_tasks_and_environment_are_set_up_once_and_probes_equal_fresh_ones(
    tmp_path: Path, tiny: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three probes load the tasks (their datasets) and describe the environment once; the third probe's samples
    equal those of a probe made by a fresh set-up on the same model."""
    import lm_eval.evaluator as evaluator
    from lm_eval.tasks import TaskManager

    model, tokenizer = tiny
    calls = {"load": 0, "env": 0}
    load, describe = TaskManager.load, evaluator.add_env_info

    def counted_load(self, *args, **kwargs):
        calls["load"] += 1
        return load(self, *args, **kwargs)

    def counted_env(storage):
        calls["env"] += 1
        return describe(storage)

    monkeypatch.setattr(TaskManager, "load", counted_load)
    monkeypatch.setattr(evaluator, "add_env_info", counted_env)
    include = task(tmp_path)
    probes = Probes(["probe_words"], tmp_path / "run", include_path=include)
    probes.wrap(model, tokenizer)
    probes.start(model, 0)
    probes.probe(model, 4)
    probes.probe(model, 8)
    assert calls == {"load": 1, "env": 1}

    fresh = Probes(["probe_words"], tmp_path / "fresh", include_path=include)
    fresh.wrap(model, tokenizer)
    fresh.start(model, 8)
    assert calls == {"load": 2, "env": 2}
    reused, again = (_samples(p / "step_0008") for p in (tmp_path / "run", tmp_path / "fresh"))
    assert len(reused) == 24 and reused == again
    results = [json.loads(next((p / "step_0008").rglob("results_*.json")).read_text()) for p in (probes.out, fresh.out)]
    assert results[0]["pretty_env_info"] == results[1]["pretty_env_info"]


def _samples(run: Path) -> list[dict]:
    (path,) = run.rglob("samples_probe_words_*.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
