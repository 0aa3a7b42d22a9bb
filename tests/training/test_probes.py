"""What the probes refuse before any training step (a model lm-eval's HF backend cannot drive, no tokenizer, an
output folder that holds anything or cannot be written), what a failed start removes (only what the probes wrote),
the reply budget they choose for generative tasks, a half-written probe, lm-eval's chatter, and the random
generators after a probe. The tests marked slow run lm-eval on a tiny GPT-2."""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path

import pytest

from postforget_lmeval.errors import PairingError
from postforget_lmeval.training import Probes
from postforget_lmeval.training.probes import PROBE_GEN_TOKS, probe_budget
from tests.helpers.taskfixtures import write_overrides
from tests.helpers.tinymodel import build_tiny_model
from tests.training.words import task

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
    with pytest.raises(PairingError, match="cannot evaluate a Linear"):
        Probes(["probe"], tmp_path).wrap(model, tokenizer=object())
    assert model.training  # put back after HFLM's eval()


def test_no_tokenizer_is_named(tmp_path: Path) -> None:
    with pytest.raises(PairingError, match="no tokenizer"):
        Probes(["probe"], tmp_path).wrap(object(), tokenizer=None)


def test_an_output_folder_that_holds_anything_is_refused(tmp_path: Path) -> None:
    Probes(["probe"], tmp_path / "new").check_output_dir()
    assert list((tmp_path / "new").iterdir()) == []  # made, checked writable, left empty
    Probes(["probe"], tmp_path / "new").check_output_dir()  # empty
    (tmp_path / "new" / "step_0000").mkdir()
    with pytest.raises(PairingError, match=f"{tmp_path / 'new'} already exists and is not empty"):
        Probes(["probe"], tmp_path / "new").check_output_dir()


def test_an_output_folder_that_cannot_be_made_is_named(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("a file, not a folder", encoding="utf-8")
    out = tmp_path / "notes.txt" / "forgetting"
    with pytest.raises(PairingError, match=f"cannot write the probes to {out} .*output_dir that the training"):
        Probes(["probe"], out).check_output_dir()


def test_the_reply_budget_fits_the_context_and_a_given_one_is_kept() -> None:
    assert probe_budget(None, 8192)[0] == {"max_gen_toks": PROBE_GEN_TOKS}
    assert probe_budget(None, 1024)[0] == {"max_gen_toks": 256}
    assert probe_budget(None, 512)[0] == {"max_gen_toks": 128}  # a quarter of the context: the prompt keeps the rest
    kwargs, note = probe_budget("temperature=0,top_p=1", 1024)
    assert kwargs == {"temperature": 0, "top_p": 1, "max_gen_toks": 256}
    assert "stops at 256 tokens" in note and "reads 1024 tokens" in note
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
def test_a_half_written_probe_fails_naming_its_folder(
    tmp_path: Path, tiny: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills while lm-eval writes the sample lines: lm-eval only logs it; the probe stops with a message
    that names the probe folder and the cause, and leaves nothing half-written for ``curve`` to read."""
    import lm_eval.loggers.evaluation_tracker as tracker

    model, tokenizer = tiny
    out = tmp_path / "out"
    probes = Probes(["probe_words"], out, include_path=task(tmp_path))
    probes.wrap(model, tokenizer)
    probes.start(model, 0)
    sanitize, calls = tracker.sanitize_list, []

    def full_disk(value):
        calls.append(value)
        if len(calls) > 4:  # two sample lines are written, then the disk is full
            raise OSError(28, "No space left on device")
        return sanitize(value)

    monkeypatch.setattr(tracker, "sanitize_list", full_disk)
    with pytest.raises(
        PairingError,
        match=f"the probe {out / 'step_0004'} was not written whole \\(2 of the 24 sample lines of "
        "probe_words; lm-eval: Could not save sample results; OSError\\(28, 'No space left on device'\\)\\)",
    ):
        probes.probe(model, 4)
    assert sorted(p.name for p in out.iterdir()) == ["probes.json", "step_0000"]


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
