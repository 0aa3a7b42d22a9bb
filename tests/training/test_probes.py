"""The forgetting probes of a training run: what they refuse before any training step (a model lm-eval's HF
backend cannot drive, no tokenizer, an output folder that holds anything or cannot be written, a task that cannot be
paired), what a failed start removes (only what the probes wrote), each probe as a whole lm-eval run and what it
leaves of the model, the reply budget, a half-written probe, the manifest and a resumed run, the costs and logged
figures, the curve, and the work of the main process in a process group. The tests that take the ``tiny`` or
``probed`` fixture run lm-eval on a tiny GPT-2; the rest script lm-eval or the pairing."""

from __future__ import annotations

import contextlib
import json
import logging
import random
import re
import shutil
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from postforget_lmeval.api import pair
from postforget_lmeval.errors import PairingError
from postforget_lmeval.metrics import OVERALL
from postforget_lmeval.training import Probes
from postforget_lmeval.training.probes import (
    PROBE_GEN_TOKS,
    Clock,
    LoadedOnce,
    Probe,
    _cannot_run,
    _is_main,
    _logged,
    _plain_copy,
    _unwritten,
    distributed,
    lm_eval_seeds,
    on_main,
    probe_budget,
    save_run,
    sharded,
)
from tests.helpers.taskfixtures import write_overrides
from tests.helpers.tinymodel import build_tiny_model
from tests.training.words import acc_lines, task

GENERATIVE = "postforget_arc_challenge_base"  # a shipped task (3-shot chain of thought), on the fixture rows


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    """A 1-layer GPT-2 that reads 4096 tokens, and its tokenizer."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    directory = build_tiny_model(tmp_path_factory.mktemp("tiny"))
    return AutoModelForCausalLM.from_pretrained(directory), AutoTokenizer.from_pretrained(directory)


def test_a_model_the_hf_backend_cannot_wrap_is_named(tmp_path: Path) -> None:
    import torch

    model = torch.nn.Linear(2, 2)
    with pytest.raises(PairingError) as caught:
        Probes(["probe"], tmp_path).wrap(model, tokenizer=object())
    cause = caught.value.__cause__
    assert str(caught.value).startswith(f"lm-eval's HF backend cannot evaluate a Linear ({type(cause).__name__}: ")
    assert str(caught.value).endswith(
        "); the probes need a transformers causal LM (a PreTrainedModel, PEFT models included)"
    )
    assert model.training  # put back after HFLM's eval()


def test_no_tokenizer_is_named(tmp_path: Path) -> None:
    with pytest.raises(PairingError) as caught:
        Probes(["probe"], tmp_path).wrap(object(), tokenizer=None)
    assert str(caught.value) == (
        "no tokenizer to evaluate the model with: give the Trainer a processing_class (tokenizer) or pass tokenizer= "
        "to the callback"
    )


def test_an_output_folder_that_holds_anything_is_refused(tmp_path: Path) -> None:
    Probes(["probe"], tmp_path / "new").check_output_dir()
    assert list((tmp_path / "new").iterdir()) == []  # made, checked writable, left empty
    Probes(["probe"], tmp_path / "new").check_output_dir()  # empty
    (tmp_path / "new" / "step_0000").mkdir()
    with pytest.raises(PairingError) as caught:
        Probes(["probe"], tmp_path / "new").check_output_dir()
    assert str(caught.value) == (
        f"{tmp_path / 'new'} already exists and is not empty (probes of another run would be paired with this run's): "
        "give the callback an output_dir of its own, or remove that folder"
    )


def test_an_output_folder_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("a file, not a folder", encoding="utf-8")
    with pytest.raises(PairingError, match=f"^{tmp_path / 'notes.txt'} already exists and is not empty "):
        Probes(["probe"], tmp_path / "notes.txt").check_output_dir()


def test_an_output_folder_that_cannot_be_made_is_named(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("a file, not a folder", encoding="utf-8")
    out = tmp_path / "notes.txt" / "forgetting"
    with pytest.raises(PairingError) as caught:
        Probes(["probe"], out).check_output_dir()
    assert str(caught.value) == (
        f"cannot write the probes to {out} (Not a directory): give an output_dir that the training process can create "
        "and write to"
    )


@pytest.mark.skipif(sys.platform != "linux", reason="/proc takes no files on Linux")
def test_an_output_folder_that_exists_but_takes_no_files_is_named() -> None:
    """Given straight to ``start`` (no check before), such a folder stops the start before lm-eval runs."""
    probes = Probes(["probe"], "/proc")
    with pytest.raises(PairingError, match=r"^cannot write the probes to /proc \(No such file or directory\): "):
        probes._writable()
    assert probes.made == []
    probes.probe = lambda model, step: pytest.fail("lm-eval ran")
    with pytest.raises(PairingError, match=r"^cannot write the probes to /proc \(No such file or directory\): "):
        probes.start(object(), 0)


def test_the_reply_budget_fits_the_context_and_a_given_one_is_kept() -> None:
    assert probe_budget(None, 8192)[0] == {"max_gen_toks": PROBE_GEN_TOKS}
    assert probe_budget(None, 1024)[0] == {"max_gen_toks": 256}
    assert probe_budget(None, 512)[0] == {"max_gen_toks": 128}  # a quarter of the context: the prompt keeps the rest
    kwargs, note = probe_budget(None, 515)  # a whole number of tokens
    assert kwargs == {"max_gen_toks": 128} and type(kwargs["max_gen_toks"]) is int
    assert note.startswith("generate: each probe reply stops at 128 tokens (")
    kwargs, note = probe_budget("temperature=0,top_p=1", 1024)
    assert kwargs == {"temperature": 0, "top_p": 1, "max_gen_toks": 256}
    assert note == (
        "generate: each probe reply stops at 256 tokens (the tasks' own budget is the paper's 32768; the model reads "
        "1024 tokens); choose another with evaluate_kwargs={'gen_kwargs': {'max_gen_toks': N}}"
    )
    assert probe_budget({"max_gen_toks": 64}, 1024) == ({"max_gen_toks": 64}, "")
    assert probe_budget("max_gen_toks=900", 1024) == ({"max_gen_toks": 900}, "")


def test_a_failed_start_removes_only_what_the_probes_wrote(tmp_path: Path, tiny: tuple) -> None:
    """Used directly on a folder that holds the user's files, a start that fails (an unknown task) leaves them;
    a folder the probes made is removed, up to the first folder that existed."""
    model, tokenizer = tiny
    include = task(tmp_path)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    probes = Probes(["no_such_probe_task"], mine, include_path=include)
    probes.wrap(model, tokenizer)
    with pytest.raises(PairingError, match="lm-eval cannot run the probe tasks no_such_probe_task"):
        probes.start(model, 0)
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]

    new = tmp_path / "new" / "forgetting"
    probes = Probes(["no_such_probe_task"], new, include_path=include)
    probes.wrap(model, tokenizer)
    with pytest.raises(PairingError, match="lm-eval cannot run"):
        probes.start(model, 0)
    assert not (tmp_path / "new").exists()


@pytest.mark.slow
def test_generative_tasks_reply_within_a_budget_the_model_can_hold(
    tmp_path: Path, tiny: tuple, capsys: pytest.CaptureFixture[str]
) -> None:
    """A shipped task asks for 32768 tokens, more than the model reads (lm-eval asserts): the probes choose a
    budget, say so, and the run records it."""
    model, tokenizer = tiny
    write_overrides(tmp_path, ["arc_challenge"])
    probes = Probes([GENERATIVE], tmp_path / "out", include_path=tmp_path)
    probes.wrap(model, tokenizer)
    probes.start(model, 0)
    (results,) = (tmp_path / "out" / "step_0000").rglob("results_*.json")
    config = json.loads(results.read_text(encoding="utf-8"))["configs"][GENERATIVE]
    assert config["generation_kwargs"]["max_gen_toks"] == PROBE_GEN_TOKS
    assert f"forgetting probes: {GENERATIVE} generate: each probe reply stops at 256 tokens" in capsys.readouterr().out


@pytest.mark.slow
def test_a_budget_the_model_cannot_hold_is_our_message_before_the_first_step(tmp_path: Path, tiny: tuple) -> None:
    model, tokenizer = tiny
    write_overrides(tmp_path, ["arc_challenge"])
    out = tmp_path / "out"
    probes = Probes([GENERATIVE], out, include_path=tmp_path, evaluate_kwargs={"gen_kwargs": "max_gen_toks=5000"})
    probes.wrap(model, tokenizer)
    with pytest.raises(
        PairingError,
        match=f"lm-eval cannot run the probe tasks {GENERATIVE} \\(AssertionError: .*\\(5000\\).*\\); the reply "
        "budget does not fit the model's 4096-token context: give evaluate_kwargs",
    ):
        probes.start(model, 0)
    assert not out.exists()


@pytest.mark.slow
def test_lm_evals_chatter_is_quiet_during_a_probe(
    tmp_path: Path, tiny: tuple, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside a git checkout lm-eval's ``git describe`` prints "fatal: not a git repository", and it warns about
    gen_kwargs at every probe; neither shows, and lm-eval's logger is as it was afterwards."""
    model, tokenizer = tiny
    write_overrides(tmp_path, ["arc_challenge"])
    monkeypatch.chdir(tmp_path)
    logging.getLogger("lm_eval").setLevel(logging.INFO)
    probes = Probes([GENERATIVE], tmp_path / "out", include_path=tmp_path, limit=1)
    capfd.readouterr()
    probes.wrap(model, tokenizer)
    probes.start(model, 0)
    said = capfd.readouterr()
    assert "not a git repository" not in said.err
    assert "specified through cli" not in said.err  # lm-eval's warning about gen_kwargs
    assert "pretrained` model kwarg is not of type" not in said.err  # and about wrapping a live model
    assert logging.getLogger("lm_eval").level == logging.INFO


@pytest.mark.slow
def test_a_probe_leaves_every_random_generator_as_it_was(tmp_path: Path, tiny: tuple) -> None:
    """lm-eval seeds Python's, NumPy's and torch's global generators, and this task's hook draws from NumPy's:
    afterwards each is where it was, so the training draws what it would have drawn without the probe."""
    import numpy as np
    import torch

    model, tokenizer = tiny
    random.seed(5)
    np.random.seed(5)
    torch.manual_seed(5)
    before = (random.getstate(), np.random.get_state(), torch.get_rng_state())
    probes = Probes(["probe_words"], tmp_path / "out", include_path=task(tmp_path, draws_numpy=True))
    probes.wrap(model, tokenizer)
    probes.start(model, 0)
    assert (tmp_path / "drawn.txt").read_text(encoding="utf-8").strip()  # the probe did draw from NumPy
    assert random.getstate() == before[0]
    after = np.random.get_state()
    assert after[0] == before[1][0] and (after[1] == before[1][1]).all() and after[2:] == before[1][2:]
    assert torch.equal(torch.get_rng_state(), before[2])


def test_deepspeed_and_an_fsdp_model_the_callback_cannot_gather_are_refused_with_what_to_do() -> None:
    """DeepSpeed stays refused; FSDP is probed when the model the Trainer hands to callbacks is the sharded one
    (FSDP2 shards in place), refused with the setting to change when it is not (FSDP1 wraps it)."""
    from types import SimpleNamespace

    import torch

    from postforget_lmeval.training.callback import _refused

    model = torch.nn.Linear(2, 2)
    assert _refused(SimpleNamespace(), model) == ""
    assert "does not support DeepSpeed yet" in _refused(SimpleNamespace(is_deepspeed_enabled=True), model)
    fsdp1 = _refused(SimpleNamespace(is_fsdp_enabled=True), model)
    assert "is not the sharded one (FSDP1 wraps it): set fsdp_config={'fsdp_version': 2}" in fsdp1


def test_a_probe_records_its_costs_to_the_millisecond() -> None:
    assert Probe(3, Path("step_0003"), 1.23456, 0.5554, 2.4004, 0.0006).record() == {
        "step": 3,
        "seconds": 1.235,
        "scoring_seconds": 0.555,
        "cpu_seconds": 2.4,
        "scoring_cpu_seconds": 0.001,
    }
    assert Probe(1, Path("step_0001"), 2.0).record() == {
        "step": 1,
        "seconds": 2.0,
        "scoring_seconds": 0.0,
        "cpu_seconds": 0.0,
        "scoring_cpu_seconds": 0.0,
    }


def busy(seconds: float) -> None:
    """Keep the CPU busy for ``seconds`` of process time."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_the_clock_adds_the_time_of_every_timed_call_one_that_raises_included() -> None:
    def scoring(seconds: float, *, fail: bool = False) -> float:
        busy(seconds)
        if fail:
            raise ValueError("lm-eval's error")
        return 2 * seconds

    clock = Clock()
    timed = clock.timed(scoring)
    assert timed(0.2) == 0.4
    with pytest.raises(ValueError, match="lm-eval's error"):
        timed(0.0, fail=True)  # the last call is next to free: the clock holds both calls
    wall, cpu = clock.read()
    # both calls held: busy(0.2) in CPU, at least half of it in wall time. Process CPU counts every thread (a math
    # library's pool spinning after an earlier test), so it may pass the wall clock a little: no order is asserted
    assert 0.2 <= cpu < 1 and 0.1 <= wall < 10
    assert (wall, cpu) == (clock.wall, clock.cpu)


def written_probes(out: Path, steps: list[int], **options) -> Probes:
    """Probes that wrote ``steps`` into ``out`` (a folder and a manifest entry each), as a run that stopped."""
    probes = resumed(out, **options)
    for i, step in enumerate(steps):
        directory = out / f"step_{step:04d}"
        directory.mkdir(parents=True)
        (directory / "results.json").write_text("{}", encoding="utf-8")
        probes.done.append(Probe(step, directory, 1.5 + i, 0.5, 1.0, 0.25))
    probes._record()
    return probes


def resumed(out: Path, **options) -> Probes:
    probes = Probes(["probe_words"], out, **{"limit": 8, **options})
    probes.gen_kwargs = {"max_gen_toks": 256}  # set by wrap, before the callback resumes
    return probes


def test_the_manifest_holds_the_settings_and_each_probes_costs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    written_probes(out, [0, 4], evaluate_kwargs={"num_fewshot": 0, "gen_kwargs": "ignored"}, seed=7)
    assert json.loads((out / "probes.json").read_text(encoding="utf-8")) == {
        "settings": {
            "tasks": ["probe_words"],
            "limit": 8,
            "samples": None,
            "seed": 7,
            "evaluate_kwargs": {"num_fewshot": 0, "gen_kwargs": {"max_gen_toks": 256}},
        },
        "probes": [
            {"step": 0, "seconds": 1.5, "scoring_seconds": 0.5, "cpu_seconds": 1.0, "scoring_cpu_seconds": 0.25},
            {"step": 4, "seconds": 2.5, "scoring_seconds": 0.5, "cpu_seconds": 1.0, "scoring_cpu_seconds": 0.25},
        ],
    }
    assert (out / "probes.json").read_text(encoding="utf-8").startswith('{\n "settings": {\n  "tasks": [')
    assert Probes(["a", "b"], out, samples={"a": [1, 2]}, evaluate_kwargs={"x": Path("p")})._settings() == {
        "tasks": ["a", "b"],
        "limit": None,
        "samples": {"a": [1, 2]},
        "seed": 1234,
        "evaluate_kwargs": {"x": "p", "gen_kwargs": {}},
    }


def test_a_resumed_run_keeps_the_probes_up_to_its_step_and_removes_the_later_ones(tmp_path: Path) -> None:
    out = tmp_path / "out"
    written_probes(out, [0, 4, 8, 12])
    probes = resumed(out)
    assert probes.resume(8) is True
    assert probes.done == [
        Probe(0, out / "step_0000", 1.5, 0.5, 1.0, 0.25),
        Probe(4, out / "step_0004", 2.5, 0.5, 1.0, 0.25),
        Probe(8, out / "step_0008", 3.5, 0.5, 1.0, 0.25),
    ]
    assert sorted(p.name for p in out.iterdir()) == ["probes.json", "step_0000", "step_0004", "step_0008"]
    record = json.loads((out / "probes.json").read_text(encoding="utf-8"))
    assert [p["step"] for p in record["probes"]] == [0, 4, 8]
    assert (out / "step_0004" / "results.json").is_file()  # kept whole
    assert probes.made == []  # the folder was there

    shutil.rmtree(out / "step_0008")  # a later probe someone removed already: nothing left to remove
    assert resumed(out).resume(4)
    assert sorted(p.name for p in out.iterdir()) == ["probes.json", "step_0000", "step_0004"]


def test_a_manifest_without_the_scoring_costs_resumes_with_zeros(tmp_path: Path) -> None:
    """A manifest written before the costs were split into the scoring and the CPU seconds."""
    out = tmp_path / "out"
    written_probes(out, [0, 4])
    manifest = out / "probes.json"
    record = json.loads(manifest.read_text(encoding="utf-8"))
    record["probes"] = [{"step": p["step"], "seconds": p["seconds"]} for p in record["probes"]]
    manifest.write_text(json.dumps(record), encoding="utf-8")
    probes = resumed(out)
    assert probes.resume(5)
    assert probes.done == [Probe(0, out / "step_0000", 1.5), Probe(4, out / "step_0004", 2.5)]


def test_what_a_resume_refuses_is_named(tmp_path: Path) -> None:
    out = tmp_path / "out"
    written_probes(out, [4, 8])
    other = resumed(out, limit=5)
    with pytest.raises(PairingError) as caught:
        other.resume(8)
    settings = "{'tasks': ['probe_words'], 'limit': 8, 'samples': None, 'seed': 1234, 'evaluate_kwargs': {'gen_kwargs'"
    assert str(caught.value) == (
        f"the probes in {out} were made with other settings ({settings}: {{'max_gen_toks': 256}}}}}}) than this run's "
        f"({settings.replace('8', '5')}: {{'max_gen_toks': 256}}}}}}): resume with the same tasks and options, or "
        "give a new output_dir"
    )
    with pytest.raises(PairingError) as caught:
        resumed(out).resume(3)
    assert str(caught.value) == (
        f"{out} holds no probe at or before step 3, where training resumes: give a new output_dir"
    )
    assert sorted(p.name for p in out.iterdir()) == ["probes.json", "step_0004", "step_0008"]
    shutil.rmtree(out / "step_0004")
    shutil.rmtree(out / "step_0008")
    with pytest.raises(PairingError) as caught:
        resumed(out).resume(9)
    assert str(caught.value) == (
        f"earlier probes listed in {out / 'probes.json'} are missing: {out / 'step_0004'}, {out / 'step_0008'}"
    )


def test_a_resume_into_a_folder_without_probes_checks_it_as_a_new_one(tmp_path: Path) -> None:
    out = tmp_path / "new" / "out"
    probes = resumed(out)
    assert probes.resume(6) is False
    assert out.is_dir() and list(out.iterdir()) == []
    assert probes.made == [out, tmp_path / "new"]
    (out / "notes.txt").write_text("the user's", encoding="utf-8")
    with pytest.raises(PairingError, match="already exists and is not empty"):
        resumed(out).resume(6)


def test_the_folders_the_probes_made_are_listed_once_and_removed_when_empty(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "out"
    probes = Probes(["probe_words"], out)
    probes._writable()
    probes._writable()
    assert probes.made == [out, tmp_path / "a" / "b", tmp_path / "a"]
    (out / "step_0000").mkdir()
    probes.done = [Probe(0, out / "step_0000", 1.0)]
    probes._record()
    (tmp_path / "a" / "notes.txt").write_text("the user's", encoding="utf-8")
    probes._discard()
    assert probes.done == []
    assert [p.name for p in tmp_path.iterdir()] == ["a"]
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["notes.txt"]
    probes._discard()  # nothing left of its own: nothing else goes
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["notes.txt"]


def test_the_cost_line_splits_the_latest_probe_and_sums_them_all() -> None:
    probes = Probes(["probe_words"], "out")
    probes.done = [
        Probe(0, Path("step_0000"), 2.0, 1.0, 1.5, 0.5),
        Probe(2, Path("step_0002"), 1.0, 0.5, 0.5, 0.25),
        Probe(4, Path("step_0004"), 3.4, 2.1, 2.6, 1.7),
    ]
    assert probes.cost(64.0) == (
        "forgetting probe at step 4: 3.4 s (the model's scoring 2.1 s, everything else 1.3 s; CPU 1.7 of 2.6 s); "
        "all 3 probes 6.4 s, 10% of the 64.0 s since training began"
    )
    assert probes.cost(0.0).endswith("all 3 probes 6.4 s, 640000000000% of the 0.0 s since training began")


def test_the_first_probe_alone_logs_nothing_without_its_baseline_and_writes_no_curve() -> None:
    probes = Probes(["probe_words"], "out")
    assert probes.metrics() == {}
    assert probes.finish() == []
    probes.done = [Probe(0, Path("step_0000"), 2.0)]
    assert probes.metrics() == {}
    assert probes.finish() == []
    probes.baseline = SimpleNamespace(categories=categories())
    assert probes.metrics() == LOGGED


def categories() -> pd.DataFrame:
    """A pairing's categories table: macro rows per category and OVERALL, then a micro row (not logged)."""
    return pd.DataFrame(
        {
            "category": ["science", OVERALL, OVERALL],
            "average": ["macro", "macro", "micro"],
            "F_true_mean": [0.125, 0.0625, 0.5],
            "BT_true_mean": [0.25, -0.5, 0.5],
            "acc_after_mean": [0.75, 0.375, 0.5],
        }
    )


LOGGED = {
    "forgetting/science/F_true_pct": 12.5,
    "forgetting/science/BT_true_pct": 25.0,
    "forgetting/science/accuracy_pct": 75.0,
    "forgetting/overall/F_true_pct": 6.25,
    "forgetting/overall/BT_true_pct": -50.0,
    "forgetting/overall/accuracy_pct": 37.5,
}


def test_the_logged_figures_are_the_macro_rows_in_percent() -> None:
    logged = _logged("forgetting_prev", SimpleNamespace(categories=categories()))
    assert logged == {k.replace("forgetting/", "forgetting_prev/"): v for k, v in LOGGED.items()}
    assert list(logged) == [k.replace("forgetting/", "forgetting_prev/") for k in LOGGED]


def no_curve() -> None:
    raise ValueError("no curve")


def test_the_work_of_the_main_process_runs_where_there_is_no_process_group() -> None:
    assert not distributed()
    assert _is_main()
    assert on_main(lambda: 5, "the curve") == 5
    with pytest.raises(ValueError, match="^no curve$"):
        on_main(no_curve, "the curve")


def test_the_four_seeds_of_a_probe_are_the_one_seed() -> None:
    assert lm_eval_seeds(7) == {
        "random_seed": 7,
        "numpy_random_seed": 7,
        "torch_random_seed": 7,
        "fewshot_random_seed": 7,
    }


def test_lm_evals_error_at_the_first_probe_names_the_tasks_the_cause_and_what_to_do() -> None:
    lm = SimpleNamespace(max_length=2048)
    too_long = AssertionError("the context is longer than the maximum sequence length (5000)")
    assert _cannot_run(["a", "b"], too_long, lm) == (
        "lm-eval cannot run the probe tasks a, b (AssertionError: the context is longer than the maximum sequence "
        "length (5000)); the reply budget does not fit the model's 2048-token context: give "
        "evaluate_kwargs={'gen_kwargs': {'max_gen_toks': N}} with N well below 2048"
    )
    other = (
        "; check the task names, include_path, that each task's dataset can be loaded (from the Hugging Face Hub, or "
        "a local copy named in a task YAML under include_path) and the options passed to simple_evaluate"
    )
    assert _cannot_run(["a"], AssertionError("no such task"), lm) == (
        f"lm-eval cannot run the probe tasks a (AssertionError: no such task){other}"
    )
    assert _cannot_run(["a"], ValueError("maximum sequence length"), lm) == (
        f"lm-eval cannot run the probe tasks a (ValueError: maximum sequence length){other}"
    )


def test_the_tasks_are_loaded_once_and_the_rest_is_the_task_managers() -> None:
    class Manager:
        all_tasks = ["probe_words"]

        def __init__(self) -> None:
            self.calls: list[list[str]] = []

        def load(self, tasks: list[str]) -> dict:
            self.calls.append(tasks)
            return {"loaded": tasks}

    manager = Manager()
    once = LoadedOnce(manager)
    first = once.load(("probe_words", "other"))
    assert first == {"loaded": ["probe_words", "other"]}
    assert once.load(["probe_words", "other"]) is first
    assert once.load(["other"]) == {"loaded": ["other"]}
    assert manager.calls == [["probe_words", "other"], ["other"]]
    assert once.all_tasks == ["probe_words"]
    with pytest.raises(AttributeError, match="'Manager' object has no attribute 'missing'"):
        _ = once.missing


def test_a_sharded_models_plain_copy_is_built_from_its_config_in_the_weights_dtype() -> None:
    import torch
    from transformers import GPT2Config

    config = GPT2Config(vocab_size=16, n_positions=8, n_embd=8, n_layer=1, n_head=2)
    copy = _plain_copy(
        SimpleNamespace(config=config),
        {"step": torch.zeros(1, dtype=torch.int64), "w": torch.zeros(2, dtype=torch.bfloat16)},
    )
    assert copy.dtype == torch.bfloat16 and not copy.training
    assert copy.config.n_embd == 8
    assert (
        _plain_copy(SimpleNamespace(config=config), {"step": torch.zeros(1, dtype=torch.int64)}).dtype == torch.float32
    )
    with pytest.raises(PairingError) as caught:
        _plain_copy(torch.nn.Linear(2, 2), {})
    assert str(caught.value) == (
        "the FSDP-sharded Linear has no config to build a plain copy from: the probes of a sharded model need a "
        "transformers causal LM"
    )


@pytest.mark.parametrize(
    ("config", "name"),
    [
        (SimpleNamespace(_name_or_path="org/model"), "org/model"),
        (SimpleNamespace(_name_or_path=""), "Linear"),  # a model built from a config
        ({"model_type": "custom"}, "Linear"),  # PEFT's config for a base model that has none
        (None, "Linear"),  # no config at all
    ],
)
def test_a_probe_names_the_model_by_its_path_else_its_class_and_a_run_without_results_by_its_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: object, name: str
) -> None:
    import lm_eval
    import torch

    asked: list[dict] = []
    monkeypatch.setattr(lm_eval, "simple_evaluate", lambda **kwargs: asked.append(kwargs["model_args"]))
    model = torch.nn.Linear(2, 2)
    if config is not None:
        model.config = config
    probes = Probes(["probe_words"], tmp_path / "out")
    probes.task_manager = object()  # never asked: simple_evaluate is not lm-eval's here
    with pytest.raises(RuntimeError) as caught:
        probes.probe(model, 3)
    assert str(caught.value) == "lm_eval returned no results for the probe at step 3"  # lm-eval's answer off rank 0
    assert asked == [{"pretrained": f"{name}@step3"}]


def test_a_model_that_is_not_sharded_is_probed_as_it_is(tmp_path: Path) -> None:
    import torch

    model = torch.nn.Linear(2, 2)
    assert not sharded(model)
    assert Probes(["probe_words"], tmp_path).full(model) is model


class Tracker:
    """What save_run asks of lm-eval's EvaluationTracker: the results file and one sample log per task, under
    ``date_id``; ``lines`` caps the sample lines written per task (a full disk), ``said`` is what it logs."""

    def __init__(self, written: Path, date_id: str | None = "2026-11-29T01-00-00", lines: int = 99, said=()) -> None:
        self.folder, self.date_id, self.lines, self.said = written / "model", date_id, lines, said

    def save_results_aggregated(self, results: dict, samples: dict) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        log = logging.getLogger("lm_eval.loggers.evaluation_tracker")
        for message in self.said:
            log.info(message)
        logging.getLogger("filelock").warning("another library's message")  # not lm-eval's tracker: not a cause
        (self.folder / f"results_{self.date_id}.json").write_text(json.dumps(results), encoding="utf-8")

    def save_results_samples(self, task_name: str, samples: list) -> None:
        lines = "".join(json.dumps(s) + "\n" for s in samples[: self.lines])
        (self.folder / f"samples_{task_name}_{self.date_id}.jsonl").write_text(lines, encoding="utf-8")


def results_of(**counts: int) -> dict:
    return {
        "results": {task: {"acc,none": 0.5} for task in counts},
        "configs": {task: {"output_type": "multiple_choice"} for task in counts},
        "samples": {task: [{"doc_id": i} for i in range(n)] for task, n in counts.items()},
    }


def test_a_whole_run_is_saved_as_lm_eval_writes_it(tmp_path: Path) -> None:
    results = results_of(a=3, b=2)
    save_run(Tracker(tmp_path), results, tmp_path, tmp_path / "step_0004")
    assert "samples" not in results
    assert sorted(p.name for p in (tmp_path / "model").iterdir()) == [
        "results_2026-11-29T01-00-00.json",
        "samples_a_2026-11-29T01-00-00.jsonl",
        "samples_b_2026-11-29T01-00-00.jsonl",
    ]
    saved = json.loads((tmp_path / "model" / "results_2026-11-29T01-00-00.json").read_text(encoding="utf-8"))
    assert saved == {"results": results["results"], "configs": results["configs"]}
    assert _unwritten(tmp_path, {"a": 3, "b": 2}, "2026-11-29T01-00-00") == []


def test_a_run_saved_in_part_fails_naming_what_is_missing_and_what_lm_eval_said(tmp_path: Path) -> None:
    probe = tmp_path / "out" / "step_0004"
    said = ["Saving results aggregated", "Could not save sample results", "OSError(28, 'No space left on device')"]
    with pytest.raises(PairingError) as caught:
        save_run(Tracker(tmp_path, lines=2, said=said), results_of(a=3, b=2), tmp_path, probe)
    assert str(caught.value) == (
        f"the probe {probe} was not written whole (2 of the 3 sample lines of a; lm-eval: Could not save sample "
        f"results; OSError(28, 'No space left on device')): check the free space and the permissions of "
        f"{tmp_path / 'out'}; the half-written probe was removed"
    )
    assert logging.getLogger("lm_eval.loggers.evaluation_tracker").handlers == []
    with pytest.raises(PairingError) as caught:
        save_run(Tracker(tmp_path / "quiet", lines=0), results_of(a=1), tmp_path / "quiet", probe)
    assert str(caught.value).startswith(f"the probe {probe} was not written whole (0 of the 1 sample lines of a): ")


def test_what_is_missing_of_a_saved_run_is_counted_for_its_own_stamp(tmp_path: Path) -> None:
    stamp = "2026-11-29T01-00-00"
    folder = tmp_path / "model"
    folder.mkdir()
    assert _unwritten(tmp_path, {"a": 2}, stamp) == ["no results file", "0 of the 2 sample lines of a"]
    (folder / f"results_{stamp}.json").write_text('{"results": {', encoding="utf-8")
    (folder / f"samples_a_{stamp}.jsonl").write_text('{"doc_id": 0}\n{"doc_id": 1}\n', encoding="utf-8")
    (folder / "samples_a_2026-11-28T09-00-00.jsonl").write_text('{"doc_id": 0}\n', encoding="utf-8")  # an earlier run
    assert _unwritten(tmp_path, {"a": 2}, stamp) == [f"results_{stamp}.json is cut off"]
    (folder / f"results_{stamp}.json").write_text("{}", encoding="utf-8")
    assert _unwritten(tmp_path, {"a": 2, "b": 0}, stamp) == []
    assert _unwritten(tmp_path, {"a": 1}, stamp) == ["2 of the 1 sample lines of a"]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / f"results_{stamp}.json").write_text("{}", encoding="utf-8")
    (tmp_path / "other" / f"samples_a_{stamp}.jsonl").write_text('{"doc_id": 0}\n{"doc_id": 1}\n', encoding="utf-8")
    assert _unwritten(tmp_path, {"a": 2}, stamp) == ["no results file", "0 of the 2 sample lines of a"]


def test_a_tracker_that_saved_nothing_is_named_by_its_missing_stamp(tmp_path: Path) -> None:
    with pytest.raises(PairingError) as caught:
        save_run(Tracker(tmp_path / "none", date_id=None), results_of(a=1), tmp_path, tmp_path / "step_0000")
    assert str(caught.value).startswith(
        f"the probe {tmp_path / 'step_0000'} was not written whole (no results file; 0 of the 1 sample lines of a): "
    )
    assert (tmp_path / "none" / "model" / "results_None.json").is_file()  # written, but not under a stamp of the run
    unsaved = Tracker(tmp_path / "unsaved")
    del unsaved.date_id  # lm-eval's tracker sets it only once it gets to write the results
    unsaved.save_results_aggregated = lambda results, samples: None
    unsaved.save_results_samples = lambda task_name, samples: None
    with pytest.raises(PairingError, match=r"not written whole \(no results file; 0 of the 1 sample lines of a\)"):
        save_run(unsaved, results_of(a=1), tmp_path / "unsaved", tmp_path / "step_0000")


@pytest.fixture(scope="module")
def probed(tiny: tuple, tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """Probes of a copy of the tiny model in training mode at steps 0, 2 and 4 on 8 items of the invented words,
    its weights moved between them (as training would), with what each probe's metrics logged, what the probe cost
    before its pairing was added, and what the first probe printed. At step 4 the model's config names no path."""
    import copy
    import io

    import torch

    model, tokenizer = copy.deepcopy(tiny[0]), tiny[1]
    model.train()
    path = model.config._name_or_path
    tmp = tmp_path_factory.mktemp("probed")
    probes = Probes(
        ["probe_words"], tmp / "out", limit=8, include_path=task(tmp), batch_size=4, metadata={"probe_note": 3}
    )
    probes.wrap(model, tokenizer)
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        probes.start(model, 0)
    unpaired = {0: (probes.done[-1].seconds, probes.done[-1].cpu)}
    logs = {0: probes.metrics()}
    for step in (2, 4):
        with torch.no_grad():
            moved = torch.Generator().manual_seed(step)
            for p in model.parameters():
                p.add_(torch.randn(p.shape, generator=moved))
        if step == 4:
            model.config._name_or_path = ""  # a model built from a config
        probes.probe(model, step)
        unpaired[step] = (probes.done[-1].seconds, probes.done[-1].cpu)
        logs[step] = probes.metrics()
    return SimpleNamespace(
        probes=probes,
        model=model,
        logs=logs,
        out=tmp / "out",
        unpaired=unpaired,
        printed=printed.getvalue(),
        path=path,
    )


def test_each_probe_is_a_whole_lm_eval_run_and_leaves_the_model_as_it_was(probed: SimpleNamespace) -> None:
    out, probes = probed.out, probed.probes
    assert sorted(p.name for p in out.iterdir()) == ["probes.json", "step_0000", "step_0002", "step_0004"]
    for probe, step in zip(probes.done, (0, 2, 4), strict=True):
        assert probe.step == step and probe.directory == out / f"step_{step:04d}"
        (results,) = probe.directory.rglob("results_*.json")
        saved = json.loads(results.read_text(encoding="utf-8"))
        config = saved["config"]
        name = "GPT2LMHeadModel" if step == 4 else probed.path
        assert config["model_args"] == {"pretrained": f"{name}@step{step}"}
        assert saved["model_name"] == f"{name}@step{step}"  # what lm-eval's tracker was told by simple_evaluate
        assert saved["configs"]["probe_words"]["metadata"]["probe_note"] == 3
        assert list(saved["task_hashes"]) == ["probe_words"]  # lm-eval hashes the samples it was given
        assert [config[f"{s}_seed"] for s in ("random", "numpy", "torch", "fewshot")] == [1234] * 4
        assert config["limit"] == 8 and config["gen_kwargs"] == {"max_gen_toks": 256}
        assert len(acc_lines(probe.directory)) == 8
        assert 60 > probe.seconds > probe.scoring > 0 and probe.cpu > probe.scoring_cpu > 0
        seconds, cpu = probed.unpaired[step]
        if step == 0:  # its figures are those of the check before the first step: no pairing added
            assert (seconds, cpu) == (probe.seconds, probe.cpu)
        else:  # the probe's cost includes its pairings
            assert probe.seconds - 60 < seconds < probe.seconds and probe.cpu - 60 < cpu < probe.cpu
    record = json.loads((out / "probes.json").read_text(encoding="utf-8"))
    assert record["probes"] == [p.record() for p in probes.done]
    assert probes.clock.read() == pytest.approx(
        (sum(p.scoring for p in probes.done), sum(p.scoring_cpu for p in probes.done))
    )
    assert sum(p.cpu for p in probes.done) <= time.process_time()  # each probe's own CPU seconds, no more
    assert probed.printed == ""  # no reply budget to announce for a log-likelihood task
    assert probes.generative == []
    assert probed.model.training and all(p.requires_grad for p in probed.model.parameters())
    assert list(probes.tasks_loaded.loaded) == [("probe_words",)]
    assert sorted(probes.environment) == ["env", "git"]


def test_the_logged_figures_are_those_of_the_pairings_with_the_first_and_the_previous_probe(
    probed: SimpleNamespace,
) -> None:
    out, logs = probed.out, probed.logs
    first = acc_lines(out / "step_0000")
    keys = [f"{c}/{m}_pct" for c in ("probe_words", "overall") for m in ("F_true", "BT_true", "accuracy")]
    assert logs[0] == {
        **{f"forgetting/{k}": 0.0 for k in keys},
        "forgetting/probe_words/accuracy_pct": 100 * sum(first.values()) / 8,
        "forgetting/overall/accuracy_pct": 100 * sum(first.values()) / 8,
    }
    assert logs[2] == _logged("forgetting", pair(out / "step_0000", out / "step_0002", analyses=False))
    assert logs[4] == {
        **_logged("forgetting", pair(out / "step_0000", out / "step_0004", analyses=False)),
        **_logged("forgetting_prev", pair(out / "step_0002", out / "step_0004", analyses=False)),
    }
    for step in (2, 4):
        now = acc_lines(out / f"step_{step:04d}")
        assert logs[step]["forgetting/overall/accuracy_pct"] == pytest.approx(100 * sum(now.values()) / 8)
    assert logs[2] != logs[0]  # the moved weights answer otherwise
    against = {k.split("/", 1)[1]: v for k, v in logs[4].items() if k.startswith("forgetting/")}
    assert against != {k.split("/", 1)[1]: v for k, v in logs[4].items() if k.startswith("forgetting_prev/")}


def test_a_step_probed_already_is_refused(probed: SimpleNamespace) -> None:
    with pytest.raises(PairingError) as caught:
        probed.probes.probe(probed.model, 2)
    assert str(caught.value) == (
        f"{probed.out / 'step_0002'} already exists: probes of one run go in a folder of their own"
    )


def test_the_reply_budget_is_chosen_for_the_context_the_backend_reads(tmp_path: Path, tiny: tuple) -> None:
    model, tokenizer = tiny
    model.train()
    probes = Probes(["probe_words"], tmp_path, evaluate_kwargs={"gen_kwargs": "temperature=0"}, batch_size=3)
    probes.wrap(model, tokenizer)
    assert model.training
    assert probes.lm.tokenizer is tokenizer
    assert probes.lm.max_length == 4096 and probes.lm.batch_size == 3
    assert probes.gen_kwargs == {"temperature": 0, "max_gen_toks": 256}
    short = Probes(["probe_words"], tmp_path, hflm_kwargs={"max_length": 512})
    short.wrap(model, tokenizer)
    assert short.lm.max_length == 512
    assert short.gen_kwargs == {"max_gen_toks": 128}
    assert short.budget_note == probe_budget(None, 512)[1]


def test_options_lm_eval_refuses_stop_the_first_probe_with_what_to_do(tmp_path: Path, tiny: tuple) -> None:
    model, tokenizer = tiny
    out = tmp_path / "out"
    probes = Probes(["probe_words"], out, include_path=task(tmp_path), evaluate_kwargs={"no_such_option": 1})
    probes.wrap(model, tokenizer)
    with pytest.raises(PairingError) as caught:
        probes.start(model, 0)
    assert str(caught.value).startswith("lm-eval cannot run the probe tasks probe_words (TypeError: ")
    assert "no_such_option" in str(caught.value)
    assert str(caught.value).endswith("and the options passed to simple_evaluate")
    assert not out.exists() and probes.done == []


LEFT_OUT = (
    "task probe_words_ppl left out: no per-sample binary metric (acc/exact_match); it logs word_perplexity: pass "
    "--metric"
)
"""What the pairing says of a task that logs no per-item correctness."""


@pytest.mark.parametrize(
    ("tasks", "cause"),
    [
        (["probe_words_ppl"], f"no usable samples on the before side: before: {LEFT_OUT}"),
        (["probe_words", "probe_words_ppl"], f"before: {LEFT_OUT}; after: {LEFT_OUT}"),  # beside one it pairs
    ],
)
def test_a_task_without_per_item_correctness_is_refused_at_the_first_probe(
    tmp_path: Path, tiny: tuple, tasks: list[str], cause: str
) -> None:
    model, tokenizer = tiny
    out = tmp_path / "out"
    task(tmp_path)  # probe_words, beside probe_words_ppl in the same include path
    include = task(tmp_path, metric="word_perplexity", output_type="loglikelihood_rolling")
    probes = Probes(tasks, out, include_path=include, limit=2)
    probes.wrap(model, tokenizer)
    with pytest.raises(PairingError) as caught:
        probes.start(model, 0)
    assert str(caught.value) == (
        f"the probe tasks {', '.join(tasks)} cannot be paired (a probe task must log a per-item correctness such as "
        f"acc or exact_match in its samples): {cause}"
    )
    assert not out.exists() and probes.done == [] and probes.baseline is None


def test_the_curve_of_the_probes_is_written_beside_them(probed: SimpleNamespace) -> None:
    written = probed.probes.finish(plot=False)
    out = probed.out
    assert out / "items.csv" in written and all(p.is_relative_to(out) for p in written)
    assert not (out / "curve.png").exists()
    assert out / "curve.png" in probed.probes.finish()  # plotted unless told not to
    items = pd.read_csv(out / "items.csv")
    assert [c for c in items.columns if c.isdigit()] == ["0", "2", "4"]
    assert len(items) == 8


def fill_the_disk_after_two_sample_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """lm-eval's tracker writes two sample lines of the next probe, then the disk is full (lm-eval only logs it)."""
    import lm_eval.loggers.evaluation_tracker as tracker

    sanitize, calls = tracker.sanitize_list, []

    def full_disk(value):
        calls.append(value)
        if len(calls) > 4:  # two sample lines are written, then the disk is full
            raise OSError(28, "No space left on device")
        return sanitize(value)

    monkeypatch.setattr(tracker, "sanitize_list", full_disk)


def test_a_probe_written_in_part_is_removed_and_named(probed: SimpleNamespace, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills while lm-eval writes the sample lines (lm-eval only logs it): the probe stops naming its
    folder, nothing of it is left, and the probes before it stand."""

    fill_the_disk_after_two_sample_lines(monkeypatch)
    with pytest.raises(PairingError) as caught:
        probed.probes.probe(probed.model, 6)
    assert str(caught.value) == (
        f"the probe {probed.out / 'step_0006'} was not written whole (2 of the 8 sample lines of probe_words; "
        "lm-eval: Could not save sample results; OSError(28, 'No space left on device')): check the free space and "
        f"the permissions of {probed.out}; the half-written probe was removed"
    )
    assert sorted(p.name for p in probed.out.iterdir() if p.name.startswith((".", "step_"))) == [
        "step_0000",
        "step_0002",
        "step_0004",
    ]
    assert [p.step for p in probed.probes.done] == [0, 2, 4]


def test_a_generative_probe_says_the_reply_budget_it_chose(
    tmp_path: Path, tiny: tuple, capsys: pytest.CaptureFixture[str]
) -> None:
    model, tokenizer = tiny
    include = task(tmp_path, "exact_match", "generate_until")
    probes = Probes(
        ["probe_words_gen"], tmp_path / "out", include_path=include, limit=1, hflm_kwargs={"max_length": 64}
    )
    probes.wrap(model, tokenizer)
    capsys.readouterr()
    probes.start(model, 0)
    assert probes.generative == ["probe_words_gen"]
    assert capsys.readouterr().out == f"forgetting probes: probe_words_gen {probe_budget(None, 64)[1]}\n"


def test_the_chosen_samples_are_probed(tmp_path: Path, tiny: tuple) -> None:
    model, tokenizer = tiny
    probes = Probes(["probe_words"], tmp_path / "out", include_path=task(tmp_path), samples={"probe_words": [1, 5]})
    probes.wrap(model, tokenizer)
    assert sorted(acc_lines(probes.probe(model, 0))) == [1, 5]


class Ranks:
    """torch.distributed as one rank of a process group sees it: ``broadcast_object_list`` records what the main
    process sends and hands the other ranks ``sent`` (what the main process sent them)."""

    def __init__(self, rank: int, world: int, initialized: bool = True, sent: str | None = None) -> None:
        self.rank, self.world, self.initialized, self.sent = rank, world, initialized, sent
        self.broadcast: list = []

    def patch(self, monkeypatch: pytest.MonkeyPatch) -> Ranks:
        import torch.distributed as dist

        monkeypatch.setattr(dist, "is_available", lambda: True)
        monkeypatch.setattr(dist, "is_initialized", lambda: self.initialized)
        monkeypatch.setattr(dist, "get_world_size", self.world_size)
        monkeypatch.setattr(dist, "get_rank", lambda: self.rank)
        monkeypatch.setattr(dist, "broadcast_object_list", self.broadcast_object_list)
        return self

    def world_size(self) -> int:
        assert self.initialized, "Default process group has not been initialized"
        return self.world

    def broadcast_object_list(self, objects: list, src: int) -> None:
        self.broadcast.append((list(objects), src))
        if self.rank != src:
            objects[0] = self.sent


def test_the_main_process_does_the_work_and_tells_the_other_ranks_how_it_went(monkeypatch: pytest.MonkeyPatch) -> None:
    main = Ranks(0, 2).patch(monkeypatch)
    assert distributed() and _is_main()
    assert on_main(lambda: 5, "the curve") == 5
    with pytest.raises(ValueError, match="^no curve$"):
        on_main(no_curve, "the curve")
    assert main.broadcast == [([None], 0), (["ValueError: no curve"], 0)]

    other = Ranks(1, 2, sent=None).patch(monkeypatch)
    assert distributed() and not _is_main()
    assert on_main(no_curve, "the curve") is None  # the work is the main process's
    other.sent = "ValueError: no curve"
    with pytest.raises(RuntimeError) as caught:
        on_main(lambda: 5, "the curve")
    assert str(caught.value) == "the curve failed on the main process: ValueError: no curve"
    assert other.broadcast == [([None], 0), ([None], 0)]

    for alone in (Ranks(0, 1), Ranks(0, 2, initialized=False)):  # one process, or no process group
        alone.patch(monkeypatch)
        assert not distributed() and _is_main()
        assert on_main(lambda: 5, "the curve") == 5
        assert alone.broadcast == []


def test_a_sharded_model_is_gathered_on_every_rank_into_one_plain_copy_on_the_main_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import torch
    import torch.distributed.checkpoint.state_dict as state_dict
    from transformers import GPT2Config, GPT2LMHeadModel

    import postforget_lmeval.training.probes as probes_module

    model = GPT2LMHeadModel(GPT2Config(vocab_size=16, n_positions=8, n_embd=8, n_layer=1, n_head=2))
    gathered = []

    def gather(of, options):
        gathered.append((of, options.full_state_dict, options.cpu_offload))
        return {k: v.detach().clone() for k, v in of.state_dict().items()}

    monkeypatch.setattr(probes_module, "sharded", lambda m: m is model)
    monkeypatch.setattr(state_dict, "get_model_state_dict", gather)
    Ranks(0, 2).patch(monkeypatch)
    probes = Probes(["probe_words"], "out")
    copy = probes.full(model)
    assert copy is not model and not copy.training and copy.config is model.config
    assert all(torch.equal(a, b) for a, b in zip(copy.parameters(), model.parameters(), strict=True))
    with torch.no_grad():
        model.lm_head.weight.add_(1.0)  # a training step
    assert probes.full(model) is copy  # refilled, not made again
    assert torch.equal(copy.lm_head.weight, model.lm_head.weight)
    assert gathered == [(model, True, True), (model, True, True)]
    with warnings.catch_warnings():  # torch warns that weights loaded into the meta device stay meta
        warnings.simplefilter("ignore")
        assert Probes(["probe_words"], "out", copy_device="meta").full(model).lm_head.weight.is_meta  # the device named

    Ranks(1, 2).patch(monkeypatch)
    assert Probes(["probe_words"], "out").full(model) is None
    assert len(gathered) == 4  # the other ranks take part in the gathering too


def test_the_task_index_is_this_projects_and_include_paths_unless_a_task_is_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Indexing every task lm-eval ships costs more than a small probe: only when a probe task is not among this
    project's tasks and include_path's are all of them indexed, with include_path and the metadata still given."""
    import lm_eval.tasks

    from postforget_lmeval import task_dir
    from postforget_lmeval.training.probes import _task_manager

    made = []

    class TaskManager:
        def __init__(self, include_path=None, include_defaults=True, metadata=None) -> None:
            made.append((include_path, include_defaults, metadata))
            self.all_tasks = ["probe_words", *(["arc_easy"] if include_defaults else [])]

    monkeypatch.setattr(lm_eval.tasks, "TaskManager", TaskManager)
    assert _task_manager(["probe_words"], Path("mine"), {"size": 3}).all_tasks == ["probe_words"]
    assert made == [([task_dir(), "mine"], False, {"size": 3})]
    made.clear()
    assert _task_manager(["probe_words", "arc_easy"], "mine", {"size": 3}).all_tasks == ["probe_words", "arc_easy"]
    assert made == [([task_dir(), "mine"], False, {"size": 3}), ([task_dir(), "mine"], True, {"size": 3})]
    made.clear()
    _task_manager(["probe_words"], None, None)
    assert made == [([task_dir()], False, None)]


def paired_steps(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, bool]]:
    """``pair`` as the probes call it, recorded: each pairing runs ``busy(0.05)`` and its figures name the steps
    paired (F_true = the later step / 100, BT_true = the earlier one / 100)."""
    import postforget_lmeval.training.probes as probes_module

    calls = []

    def pair(before: Path, after: Path, analyses: bool) -> SimpleNamespace:
        calls.append((before.name, after.name, analyses))
        busy(0.05)
        table = categories()
        table["F_true_mean"] = int(after.name[5:]) / 100
        table["BT_true_mean"] = int(before.name[5:]) / 100
        return SimpleNamespace(categories=table)

    monkeypatch.setattr(probes_module, "pair", pair)
    return calls


def figures(prefix: str, before: int, after: int) -> dict[str, float]:
    return {
        f"{prefix}/{c}/{m}": v
        for c in ("science", "overall")
        for m, v in (("F_true_pct", float(after)), ("BT_true_pct", float(before)))
    } | {f"{prefix}/science/accuracy_pct": 75.0, f"{prefix}/overall/accuracy_pct": 37.5}


def test_the_latest_probe_is_paired_with_the_first_and_the_previous_one_and_pays_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = paired_steps(monkeypatch)
    out = tmp_path / "out"
    probes = written_probes(out, [0, 2])
    assert probes.metrics() == figures("forgetting", 0, 2)
    assert calls == [("step_0000", "step_0002", False)]
    last = probes.done[-1]
    assert 2.5 + 0.05 <= last.seconds < 2.5 + 60 and 1.0 + 0.05 <= last.cpu < 1.0 + 60  # + the pairing
    assert (last.scoring, last.scoring_cpu) == (0.5, 0.25)
    assert json.loads((out / "probes.json").read_text(encoding="utf-8"))["probes"][-1] == last.record()

    (out / "step_0004").mkdir()
    probes.done.append(Probe(4, out / "step_0004", 3.0, 0.5, 2.0, 0.25))
    calls.clear()
    assert probes.metrics() == figures("forgetting", 0, 4) | figures("forgetting_prev", 2, 4)
    assert calls == [("step_0000", "step_0004", False), ("step_0002", "step_0004", False)]
    assert 3.0 + 0.1 <= probes.done[-1].seconds < 3.0 + 60 and 2.0 + 0.1 <= probes.done[-1].cpu < 2.0 + 60
    assert probes.done[1].seconds == last.seconds  # an earlier probe keeps its cost


def test_the_first_probe_is_checked_by_pairing_a_copy_of_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import postforget_lmeval.training.probes as probes_module

    out = tmp_path / "out"
    probes = written_probes(out, [0])
    seen, copies, answers = [], [], []

    def pair(before: Path, after: Path, analyses: bool) -> SimpleNamespace:
        seen.append((before, after.name, analyses, sorted(p.name for p in after.iterdir())))
        copies.append(after)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(probes_module, "pair", pair)
    rows = pd.DataFrame({"subtask": ["probe_words"]})
    good = SimpleNamespace(subtasks=rows, warnings=["the notes of a pairing"], categories=categories())
    answers.append(good)
    probes.check_first()
    assert probes.baseline is good
    assert seen == [(out / "step_0000", "step_0000", False, ["results.json"])]
    assert copies[0].parent != out and not copies[0].parent.exists()  # a copy in a folder of its own, then gone

    message = (
        "the probe tasks probe_words cannot be paired (a probe task must log a per-item correctness such as acc or "
        "exact_match in its samples): "
    )
    for answer, cause in (
        (SimpleNamespace(subtasks=rows, warnings=["a left out", "ok", "b left out"]), "a left out; b left out"),
        (SimpleNamespace(subtasks=rows.iloc[:0], warnings=["ok"]), "no item could be paired"),
        (PairingError("no usable samples on the before side"), "no usable samples on the before side"),
    ):
        answers.append(answer)
        with pytest.raises(PairingError) as caught:
            written_probes(tmp_path / str(len(seen)), [0]).check_first()
        assert str(caught.value) == message + cause


def scripted(probes: Probes, model: object, failures: list, check_first: Callable[[], None] = lambda: None) -> Probes:
    """``probes`` of ``model``, which lm-eval is not run on: each probe writes step 3 as a real one would, then
    raises the next of ``failures`` (None: it succeeds); ``check_first`` stands for the first probe's pairing."""

    def probe(given: object, step: int) -> Path:
        assert given is model and step == 3
        directory = probes.out / "step_0003"
        directory.mkdir()
        probes.done.append(Probe(step, directory, 1.0))
        probes._record()
        failure = failures.pop(0)
        if failure is not None:
            raise failure
        return directory

    probes.lm = SimpleNamespace(max_length=64)
    probes.probe, probes.check_first = probe, check_first
    return probes


def test_a_start_that_fails_removes_what_the_probes_wrote_and_says_what_to_do(tmp_path: Path) -> None:
    def check_first() -> None:
        raise PairingError("the first probe cannot be paired")

    failures: list = [
        RuntimeError("lm-eval's own error"),
        AssertionError("the context is longer than the maximum sequence length"),
        PairingError("a probe written in part"),
        None,
    ]
    for message in (
        "lm-eval cannot run the probe tasks a, b (RuntimeError: lm-eval's own error); check the task ",
        "lm-eval cannot run the probe tasks a, b (AssertionError: the context is longer than the maximum sequence "
        "length); the reply budget does not fit the model's 64-token context",
        "a probe written in part",
        "the first probe cannot be paired",
    ):
        model = object()
        probes = scripted(Probes(["a", "b"], tmp_path / "new" / "out"), model, failures, check_first)
        with pytest.raises(PairingError, match=f"^{re.escape(message)}"):
            probes.start(model, 3)
        assert not (tmp_path / "new").exists() and probes.done == []


def test_a_start_announces_the_reply_budget_it_chose_for_generative_tasks_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mine").mkdir()
    failures: list = []
    model = object()
    probes = scripted(Probes(["a"], tmp_path / "mine"), model, failures)
    note = "generate: each probe reply stops at 16 tokens"
    for generative, budget_note, printed in (
        (["a", "b"], note, f"forgetting probes: a, b {note}\n"),
        (["a"], "", ""),  # the user chose the budget
        ([], note, ""),  # no generative task
    ):
        shutil.rmtree(tmp_path / "mine" / "step_0003", ignore_errors=True)
        failures.append(None)
        probes.generative, probes.budget_note = generative, budget_note
        assert probes.start(model, 3) == tmp_path / "mine" / "step_0003"
        assert capsys.readouterr().out == printed
    assert probes.made == []  # the folder was there: not the probes' to remove


def test_the_curve_needs_two_probes_and_is_written_in_the_output_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import postforget_lmeval.report.curve as curve

    calls = []

    def write_curve(dirs: list, out: Path, steps: list | None = None, plot: bool = True) -> tuple[None, list[Path]]:
        calls.append((dirs, out, plot))
        return None, [out / "items.csv"]

    monkeypatch.setattr(curve, "write_curve", write_curve)
    out = tmp_path / "out"
    probes = written_probes(out, [0])
    assert probes.finish() == [] and calls == []
    probes = written_probes(tmp_path / "two", [0, 2])
    assert probes.finish(plot=False) == [tmp_path / "two" / "items.csv"]
    assert calls == [([tmp_path / "two" / "step_0000", tmp_path / "two" / "step_0002"], tmp_path / "two", False)]
