"""ForgettingCallback on a real ``Trainer``: a tiny GPT-2 trained on CPU for a few steps, probed by lm-eval on a
log-likelihood multiple-choice task, then checked against ``postforget-pair`` run afterwards on the probe runs it
wrote and against a recount of lm-eval's own sample lines."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from postforget_lmeval.cli import main as postforget_pair
from postforget_lmeval.errors import PairingError
from tests.training.words import EVERY, STEPS, acc_lines, task, texts, trainer_on

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    from postforget_lmeval import ForgettingCallback

    tmp_path = tmp_path_factory.mktemp("train")
    tasks = task(tmp_path)
    taught = trainer_on(tmp_path, texts(0), 60, batch=8, lr=3e-2)
    taught.train()
    out = tmp_path / "forgetting"
    probe = ForgettingCallback(["probe_words"], out, eval_every=EVERY, include_path=tasks, batch_size=8)
    trainer = trainer_on(tmp_path, texts(1), STEPS, model=taught.model, callbacks=[probe])  # as a script writes it
    trainer.train()
    return out, trainer.state.log_history


def test_probes_are_written_as_lm_eval_runs_at_each_step(trained: tuple[Path, list[dict]]) -> None:
    out, _ = trained
    steps = sorted(int(p.name.split("_")[1]) for p in out.glob("step_*"))
    assert steps == list(range(0, STEPS + 1, EVERY))
    for step in steps:
        run = out / f"step_{step:04d}"
        assert len(list(run.rglob("results_*.json"))) == 1
        assert len(acc_lines(run)) == 24


def test_logged_values_match_postforget_pair_on_the_written_runs(
    trained: tuple[Path, list[dict]], tmp_path: Path
) -> None:
    """Every probe's figures, step 0's included, are logged in % (as the reports give them), with the unit in the
    key, and equal ``postforget-pair`` on the runs written and a recount of lm-eval's sample lines."""
    out, history = trained
    logged = {h["step"]: h for h in history if "forgetting/overall/F_true_pct" in h}
    assert sorted(logged) == list(range(0, STEPS + 1, EVERY))
    first = acc_lines(out / "step_0000")
    assert logged[0]["forgetting/overall/accuracy_pct"] == pytest.approx(100 * sum(first.values()) / len(first))
    assert logged[0]["forgetting/overall/F_true_pct"] == 0
    assert logged[0]["forgetting/overall/BT_true_pct"] == 0
    assert logged[0]["forgetting/probe_seconds"] > logged[0]["forgetting/probe_scoring_seconds"] > 0
    for step, logs in logged.items():
        if step == 0:
            continue
        paired = tmp_path / f"pair_{step}"
        assert postforget_pair([str(out / "step_0000"), str(out / f"step_{step:04d}"), "-o", str(paired), "-q"]) == 0
        cats = pd.read_csv(paired / "categories.csv")
        total = cats[(cats["category"] == "OVERALL") & (cats["average"] == "macro")].iloc[0]
        assert logs["forgetting/overall/F_true_pct"] == pytest.approx(100 * total["F_true_mean"])
        assert logs["forgetting/overall/BT_true_pct"] == pytest.approx(100 * total["BT_true_mean"])
        assert logs["forgetting/overall/accuracy_pct"] == pytest.approx(100 * total["acc_after_mean"])
        now = acc_lines(out / f"step_{step:04d}")  # independent recount: raw F and accuracy from the lines
        assert logs["forgetting/overall/accuracy_pct"] == pytest.approx(100 * sum(now.values()) / len(now))
        right_first = [d for d, a in first.items() if a == 1]
        lost = sum(1 for d in right_first if now[d] == 0)
        sub = pd.read_csv(paired / "subtasks.csv").iloc[0]
        assert sub["F"] == pytest.approx(lost / len(first))  # the paper's F: share of all items that went 1->0
    assert any(h["forgetting/overall/F_true_pct"] != 0 for h in logged.values())  # the training did move items
    losses = [h["step"] for h in history if "loss" in h]
    assert losses == list(range(EVERY, STEPS + 1, EVERY))  # the Trainer's own logs at the probe steps are kept


def test_first_forgotten_table_matches_a_recount_of_the_sample_lines(trained: tuple[Path, list[dict]]) -> None:
    out, _ = trained
    steps = list(range(0, STEPS + 1, EVERY))
    runs = {s: acc_lines(out / f"step_{s:04d}") for s in steps}
    items = pd.read_csv(out / "items.csv")
    assert len(items) == 24
    for row in items.itertuples(index=False):
        seq = [runs[s][row.doc_id] for s in steps]
        changes = [(s, a, b) for s, a, b in zip(steps[1:], seq, seq[1:]) if a != b]
        lost = [s for s, a, b in changes if (a, b) == (1, 0)]
        expect = lost[0] if lost else None
        got = None if pd.isna(row.first_forgotten) else int(row.first_forgotten)
        assert got == expect, row
        assert row.flips == len(changes)
        later = seq[steps.index(lost[0]) + 1 :] if lost else []
        expect_back = (1 in later) if later or not lost else None  # lost at the last probe: undetermined
        assert (None if pd.isna(row.came_back) else bool(row.came_back)) == expect_back
        assert [getattr(row, f"_{i}") for i in range(5, 5 + len(steps))] == seq
    assert (items["flips"] > 0).any()
    assert (out / "curve.png").stat().st_size > 0
    html = (out / "curve.html").read_text(encoding="utf-8")
    assert "Items forgotten at some step" in html
    assert len(list((out / "chain").glob("*/report.html"))) == 2 * len(steps) - 3


def test_an_output_folder_with_another_runs_probes_stops_before_the_first_step(
    trained: tuple[Path, list[dict]], tmp_path: Path
) -> None:
    from postforget_lmeval import ForgettingCallback

    out, _ = trained
    trainer = trainer_on(tmp_path, texts(1), STEPS)
    trainer.add_callback(ForgettingCallback(["probe_words"], out, include_path=task(tmp_path)))
    with pytest.raises(PairingError, match="already exists and is not empty"):
        trainer.train()
    assert trainer.state.global_step == 0


def test_a_task_without_per_item_correctness_stops_before_the_first_step(tmp_path: Path) -> None:
    from postforget_lmeval import ForgettingCallback

    tasks = task(tmp_path, metric="word_perplexity", output_type="loglikelihood_rolling")
    trainer = trainer_on(tmp_path, texts(1), STEPS)
    out = tmp_path / "forgetting"
    trainer.add_callback(ForgettingCallback(["probe_words_ppl"], out, include_path=tasks))
    with pytest.raises(PairingError, match="cannot be paired|no per-item correctness"):
        trainer.train()
    assert trainer.state.global_step == 0
    assert not out.exists()


def test_probing_leaves_the_training_as_it_would_have_been(tmp_path: Path) -> None:
    """lm-eval seeds every random generator and switches the model to eval mode; the callback puts both back, so
    the weights after training (dropout on, shuffled batches) are those of the same training without probes."""
    import torch

    from postforget_lmeval import ForgettingCallback

    tasks = task(tmp_path)
    plain = trainer_on(tmp_path, texts(1), EVERY * 2)
    plain.train()
    probed = trainer_on(tmp_path, texts(1), EVERY * 2)
    probed.add_callback(ForgettingCallback(["probe_words"], tmp_path / "out", EVERY, include_path=tasks))
    probed.train()
    assert len(list((tmp_path / "out").glob("step_*"))) == 3
    assert probed.model.training
    for (name, a), (_, b) in zip(plain.model.named_parameters(), probed.model.named_parameters()):
        assert torch.equal(a, b), name
        assert b.requires_grad


def test_an_unknown_probe_task_stops_before_the_first_step(tmp_path: Path) -> None:
    from postforget_lmeval import ForgettingCallback

    trainer = trainer_on(tmp_path, texts(1), STEPS)
    out = tmp_path / "forgetting"
    trainer.add_callback(ForgettingCallback(["no_such_probe_task"], out, include_path=task(tmp_path)))
    with pytest.raises(PairingError, match="lm-eval cannot run the probe tasks no_such_probe_task"):
        trainer.train()
    assert trainer.state.global_step == 0
    assert not out.exists()


def test_probes_on_the_trainers_saves_only(tmp_path: Path) -> None:
    """``eval_every=None, on_save=True``: a probe at train begin, at each checkpoint the Trainer saves, and none
    twice at a step that is both a save and the end."""
    from postforget_lmeval import ForgettingCallback

    trainer = trainer_on(tmp_path, texts(1), STEPS, save_strategy="steps", save_steps=6)
    out = tmp_path / "forgetting"
    trainer.add_callback(ForgettingCallback("probe_words", out, None, on_save=True, include_path=task(tmp_path)))
    trainer.train()
    assert sorted(p.name for p in out.glob("step_*")) == ["step_0000", "step_0006", "step_0012"]
    assert sorted(p.name for p in (tmp_path / "trainer").glob("checkpoint-*")) == ["checkpoint-12", "checkpoint-6"]


def test_a_run_resumed_from_a_checkpoint_continues_the_same_curve(tmp_path: Path) -> None:
    """``train(resume_from_checkpoint=...)`` into the same folder keeps the probes up to the checkpoint (step 0
    stays the baseline, not re-probed), replaces the later ones (they measured the abandoned continuation) and
    writes the curve over every step."""
    import json

    from postforget_lmeval import ForgettingCallback

    tasks = task(tmp_path)
    out = tmp_path / "forgetting"

    def run() -> object:
        probe = ForgettingCallback(["probe_words"], out, EVERY, include_path=tasks)
        return trainer_on(tmp_path, texts(1), STEPS, callbacks=[probe], save_strategy="steps", save_steps=6)

    run().train()
    kept = {s: sorted(p.name for p in (out / s).rglob("*")) for s in ("step_0000", "step_0004", "step_0008")}
    resumed = run()
    resumed.train(resume_from_checkpoint=str(tmp_path / "trainer" / "checkpoint-6"))
    assert sorted(p.name for p in out.glob("step_*")) == ["step_0000", "step_0004", "step_0008", "step_0012"]
    for step in ("step_0000", "step_0004"):  # the same files (their names carry the time they were written)
        assert sorted(p.name for p in (out / step).rglob("*")) == kept[step]
    assert sorted(p.name for p in (out / "step_0008").rglob("*")) != kept["step_0008"]  # probed again
    manifest = json.loads((out / "probes.json").read_text(encoding="utf-8"))
    assert [p["step"] for p in manifest["probes"]] == [0, 4, 8, 12]
    logged = [h["step"] for h in resumed.state.log_history if "forgetting/overall/F_true_pct" in h]
    assert logged == [0, 4, 8, 12]
    items = pd.read_csv(out / "items.csv")
    assert [c for c in items.columns if c.isdigit()] == ["0", "4", "8", "12"]


def test_a_resumed_run_with_other_probe_settings_is_refused(tmp_path: Path) -> None:
    from postforget_lmeval import ForgettingCallback

    tasks = task(tmp_path)
    out = tmp_path / "forgetting"
    probe = ForgettingCallback(["probe_words"], out, EVERY, include_path=tasks)
    trainer_on(tmp_path, texts(1), 6, callbacks=[probe], save_strategy="steps", save_steps=6).train()
    probe = ForgettingCallback(["probe_words"], out, EVERY, include_path=tasks, limit=5)
    resumed = trainer_on(tmp_path, texts(1), STEPS, callbacks=[probe], save_strategy="steps", save_steps=6)
    with pytest.raises(PairingError, match=f"the probes in {out} were made with other settings"):
        resumed.train(resume_from_checkpoint=str(tmp_path / "trainer" / "checkpoint-6"))


def test_an_output_folder_that_cannot_be_written_stops_before_the_first_step(tmp_path: Path) -> None:
    from postforget_lmeval import ForgettingCallback

    (tmp_path / "taken").write_text("a file where the folder would go", encoding="utf-8")
    out = tmp_path / "taken" / "forgetting"
    trainer = trainer_on(
        tmp_path, texts(1), STEPS, callbacks=[ForgettingCallback(["probe_words"], out, include_path=task(tmp_path))]
    )
    with pytest.raises(PairingError, match=f"cannot write the probes to {out}"):
        trainer.train()
    assert trainer.state.global_step == 0


def test_the_trainer_is_not_a_task() -> None:
    """The callback no longer takes the Trainer: code written for the old signature gets a message, not a probe of
    a task named after the Trainer's repr."""
    from postforget_lmeval import ForgettingCallback

    with pytest.raises(ValueError, match="tasks must name the lm-eval tasks to probe with"):
        ForgettingCallback(object(), ["probe_words"], "out")


def test_a_run_resumed_into_a_new_folder_measures_against_the_checkpoint_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from postforget_lmeval import ForgettingCallback

    tasks = task(tmp_path)
    trainer_on(tmp_path, texts(1), 6, save_strategy="steps", save_steps=6).train()
    out = tmp_path / "forgetting"
    probe = ForgettingCallback(["probe_words"], out, EVERY, include_path=tasks)
    resumed = trainer_on(tmp_path, texts(1), 8, callbacks=[probe], save_strategy="no")
    resumed.train(resume_from_checkpoint=str(tmp_path / "trainer" / "checkpoint-6"))
    assert sorted(p.name for p in out.glob("step_*")) == ["step_0006", "step_0008"]
    assert (
        f"no earlier probes in {out}; the curve of this resumed run measures against step 6" in capsys.readouterr().out
    )


def test_events_dispatched_by_another_trainer_stop_instead_of_logging_into_it(tmp_path: Path) -> None:
    """A Trainer subclass whose method drives another Trainer's events (a pipeline of two trainers): the nearest
    Trainer on the call stack does not hold the callback, so the probe stops before probing, naming the cause,
    rather than logging its figures into that Trainer's history."""
    from transformers import Trainer

    from postforget_lmeval import ForgettingCallback

    class Pipeline(Trainer):
        def start(self, inner: Trainer) -> None:
            inner.callback_handler.on_train_begin(inner.args, inner.state, inner.control)

    out = tmp_path / "out"
    probe = ForgettingCallback(["probe_words"], out, include_path=task(tmp_path))
    inner = trainer_on(tmp_path, texts(1), STEPS, callbacks=[probe])
    outer = trainer_on(tmp_path, texts(0), STEPS, trainer_class=Pipeline)
    with pytest.raises(PairingError, match="found no caller of this event that holds it"):
        outer.start(inner)
    assert outer.state.log_history == []
    assert not out.exists()
