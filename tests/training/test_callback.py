"""ForgettingCallback on a real ``Trainer``: a tiny GPT-2 trained on CPU for a few steps, probed by lm-eval on a
log-likelihood multiple-choice task, then checked against ``postforget-pair`` run afterwards on the probe runs it
wrote and against a recount of lm-eval's own sample lines."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
import pytest

from postforget_lmeval.cli import main as postforget_pair
from postforget_lmeval.errors import PairingError
from tests.helpers.tinymodel import build_tiny_model

pytestmark = pytest.mark.slow

WORDS = "red blue green cold warm tall short river stone cloud apple seven north quiet".split()
NAMES = [a + b for a in ("zor", "kel", "mip", "dav", "run", "fos") for b in ("ba", "to", "ni", "lu")]
STEPS = 12
EVERY = 4
PROMPT = "Question: {{question}}\\nAnswer:"


def _rows(n_items: int = 24) -> list[dict]:
    rng = random.Random(0)
    return [
        {"question": f"What goes with {name}?", "choices": rng.sample(WORDS, 4), "answer": i % 4}
        for i, name in enumerate(NAMES[:n_items])
    ]


def _task(directory: Path, metric: str = "acc", output_type: str = "multiple_choice") -> Path:
    """An ordinary lm-eval task (not a postforget one) on a local JSON file: 4 options, log-likelihood."""
    data = directory / "probe.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows()), encoding="utf-8")
    name = "probe_words" if metric == "acc" else "probe_words_ppl"
    body = (
        f"task: {name}\ndataset_path: json\ndataset_name: null\n"
        f"dataset_kwargs:\n  data_files:\n    test: {data}\ntest_split: test\n"
        f"output_type: {output_type}\n"
    )
    if output_type == "multiple_choice":
        body += f'doc_to_text: "{PROMPT}"\ndoc_to_choice: "{{{{choices}}}}"\ndoc_to_target: answer\n'
    else:
        body += 'doc_to_text: ""\ndoc_to_target: "{{question}}"\n'
    body += f"metric_list:\n  - metric: {metric}\n"
    (directory / f"{name}.yaml").write_text(body, encoding="utf-8")
    return directory


def _texts(shift: int) -> list[str]:
    """The probe's questions answered with the option ``shift`` places after the gold one: 0 teaches the
    probe, 1 teaches other answers to the same questions (forgetting that is bound to happen)."""
    return [f"Question: {r['question']}\nAnswer: {r['choices'][(r['answer'] + shift) % 4]}" for r in _rows()]


def _trainer(
    tmp_path: Path, texts: list[str], steps: int, model=None, seed: int = 0, batch: int = 4, lr: float = 1e-2, **extra
):
    from transformers import (
        AutoModelForCausalLM,
        AutoTokenizer,
        DataCollatorForLanguageModeling,
        Trainer,
        TrainingArguments,
    )

    model_dir = tmp_path / "model"
    if not model_dir.exists():
        build_tiny_model(model_dir, seed=seed)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = model if model is not None else AutoModelForCausalLM.from_pretrained(model_dir)
    rows = [{"input_ids": ids} for ids in tokenizer(texts)["input_ids"]]
    args = TrainingArguments(
        output_dir=str(tmp_path / "trainer"),
        per_device_train_batch_size=batch,
        max_steps=steps,
        learning_rate=lr,
        logging_steps=EVERY,
        report_to=[],
        use_cpu=True,
        seed=seed,
        dataloader_num_workers=0,
        disable_tqdm=True,
        **{"save_strategy": "no", **extra},
    )
    collate = DataCollatorForLanguageModeling(tokenizer, mlm=False)  # pads; loss on the text only
    return Trainer(model=model, args=args, train_dataset=rows, data_collator=collate, processing_class=tokenizer)


def _acc_lines(run: Path) -> dict[int, int]:
    """doc_id -> acc, straight from lm-eval's sample log of one probe run."""
    (path,) = run.rglob("samples_probe_words_*.jsonl")
    return {s["doc_id"]: int(s["acc"]) for s in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    from postforget_lmeval import ForgettingCallback

    tmp_path = tmp_path_factory.mktemp("train")
    tasks = _task(tmp_path)
    taught = _trainer(tmp_path, _texts(0), 60, batch=8, lr=3e-2)
    taught.train()
    trainer = _trainer(tmp_path, _texts(1), STEPS, model=taught.model)
    out = tmp_path / "forgetting"
    trainer.add_callback(
        ForgettingCallback(trainer, ["probe_words"], out, eval_every=EVERY, include_path=tasks, batch_size=8)
    )
    trainer.train()
    return out, trainer.state.log_history


def test_probes_are_written_as_lm_eval_runs_at_each_step(trained: tuple[Path, list[dict]]) -> None:
    out, _ = trained
    steps = sorted(int(p.name.split("_")[1]) for p in out.glob("step_*"))
    assert steps == list(range(0, STEPS + 1, EVERY))
    for step in steps:
        run = out / f"step_{step:04d}"
        assert len(list(run.rglob("results_*.json"))) == 1
        assert len(_acc_lines(run)) == 24


def test_logged_values_match_postforget_pair_on_the_written_runs(
    trained: tuple[Path, list[dict]], tmp_path: Path
) -> None:
    out, history = trained
    logged = {h["step"]: h for h in history if "forgetting/overall/F_true" in h}
    assert sorted(logged) == list(range(EVERY, STEPS + 1, EVERY))
    first = _acc_lines(out / "step_0000")
    for step, logs in logged.items():
        paired = tmp_path / f"pair_{step}"
        assert postforget_pair([str(out / "step_0000"), str(out / f"step_{step:04d}"), "-o", str(paired), "-q"]) == 0
        cats = pd.read_csv(paired / "categories.csv")
        total = cats[(cats["category"] == "OVERALL") & (cats["average"] == "macro")].iloc[0]
        assert logs["forgetting/overall/F_true"] == pytest.approx(total["F_true_mean"])
        assert logs["forgetting/overall/BT_true"] == pytest.approx(total["BT_true_mean"])
        assert logs["forgetting/overall/accuracy"] == pytest.approx(total["acc_after_mean"])
        now = _acc_lines(out / f"step_{step:04d}")  # independent recount: raw F and accuracy from the lines
        assert logs["forgetting/overall/accuracy"] == pytest.approx(sum(now.values()) / len(now))
        right_first = [d for d, a in first.items() if a == 1]
        lost = sum(1 for d in right_first if now[d] == 0)
        sub = pd.read_csv(paired / "subtasks.csv").iloc[0]
        assert sub["F"] == pytest.approx(lost / len(first))  # the paper's F: share of all items that went 1->0
    assert any(h["forgetting/overall/F_true"] != 0 for h in logged.values())  # the training did move items
    losses = [h["step"] for h in history if "loss" in h]
    assert losses == list(range(EVERY, STEPS + 1, EVERY))  # the Trainer's own logs at the probe steps are kept


def test_first_forgotten_table_matches_a_recount_of_the_sample_lines(trained: tuple[Path, list[dict]]) -> None:
    out, _ = trained
    steps = list(range(0, STEPS + 1, EVERY))
    runs = {s: _acc_lines(out / f"step_{s:04d}") for s in steps}
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
    trainer = _trainer(tmp_path, _texts(1), STEPS)
    trainer.add_callback(ForgettingCallback(trainer, ["probe_words"], out, include_path=_task(tmp_path)))
    with pytest.raises(PairingError, match="already exists and is not empty"):
        trainer.train()
    assert trainer.state.global_step == 0


def test_a_task_without_per_item_correctness_stops_before_the_first_step(tmp_path: Path) -> None:
    from postforget_lmeval import ForgettingCallback

    tasks = _task(tmp_path, metric="word_perplexity", output_type="loglikelihood_rolling")
    trainer = _trainer(tmp_path, _texts(1), STEPS)
    out = tmp_path / "forgetting"
    trainer.add_callback(ForgettingCallback(trainer, ["probe_words_ppl"], out, include_path=tasks))
    with pytest.raises(PairingError, match="cannot be paired|no per-item correctness"):
        trainer.train()
    assert trainer.state.global_step == 0
    assert not out.exists()


def test_probing_leaves_the_training_as_it_would_have_been(tmp_path: Path) -> None:
    """lm-eval seeds every random generator and switches the model to eval mode; the callback puts both back, so
    the weights after training (dropout on, shuffled batches) are those of the same training without probes."""
    import torch

    from postforget_lmeval import ForgettingCallback

    tasks = _task(tmp_path)
    plain = _trainer(tmp_path, _texts(1), EVERY * 2)
    plain.train()
    probed = _trainer(tmp_path, _texts(1), EVERY * 2)
    probed.add_callback(ForgettingCallback(probed, ["probe_words"], tmp_path / "out", EVERY, include_path=tasks))
    probed.train()
    assert len(list((tmp_path / "out").glob("step_*"))) == 3
    assert probed.model.training
    for (name, a), (_, b) in zip(plain.model.named_parameters(), probed.model.named_parameters()):
        assert torch.equal(a, b), name
        assert b.requires_grad


def test_an_unknown_probe_task_stops_before_the_first_step(tmp_path: Path) -> None:
    from postforget_lmeval import ForgettingCallback

    trainer = _trainer(tmp_path, _texts(1), STEPS)
    out = tmp_path / "forgetting"
    trainer.add_callback(ForgettingCallback(trainer, ["no_such_probe_task"], out, include_path=_task(tmp_path)))
    with pytest.raises(PairingError, match="lm-eval cannot run the probe tasks no_such_probe_task"):
        trainer.train()
    assert trainer.state.global_step == 0
    assert not out.exists()


def test_probes_on_the_trainers_saves_only(tmp_path: Path) -> None:
    """``eval_every=None, on_save=True``: a probe at train begin, at each checkpoint the Trainer saves, and none
    twice at a step that is both a save and the end."""
    from postforget_lmeval import ForgettingCallback

    trainer = _trainer(tmp_path, _texts(1), STEPS, save_strategy="steps", save_steps=6)
    out = tmp_path / "forgetting"
    trainer.add_callback(
        ForgettingCallback(trainer, "probe_words", out, None, on_save=True, include_path=_task(tmp_path))
    )
    trainer.train()
    assert sorted(p.name for p in out.glob("step_*")) == ["step_0000", "step_0006", "step_0012"]
    assert sorted(p.name for p in (tmp_path / "trainer").glob("checkpoint-*")) == ["checkpoint-12", "checkpoint-6"]
