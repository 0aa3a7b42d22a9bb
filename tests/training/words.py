"""The training tests' probe: an ordinary lm-eval multiple-choice task on invented words (a local JSON file), and a
tiny GPT-2 ``Trainer`` taught its questions with the gold answers or with others."""

from __future__ import annotations

import json
import random
from pathlib import Path

from tests.helpers.tinymodel import build_tiny_model

WORDS = "red blue green cold warm tall short river stone cloud apple seven north quiet".split()
NAMES = [a + b for a in ("zor", "kel", "mip", "dav", "run", "fos") for b in ("ba", "to", "ni", "lu")]
STEPS = 12
EVERY = 4
PROMPT = "Question: {{question}}\\nAnswer:"


def rows(n_items: int = 24) -> list[dict]:
    rng = random.Random(0)
    return [
        {"question": f"What goes with {name}?", "choices": rng.sample(WORDS, 4), "answer": i % 4}
        for i, name in enumerate(NAMES[:n_items])
    ]


def task(directory: Path, metric: str = "acc", output_type: str = "multiple_choice", draws_numpy: bool = False) -> Path:
    """An ordinary lm-eval task (not a postforget one) on a local JSON file: 4 options, log-likelihood (or the
    gold option's text generated, ``output_type="generate_until"`` with ``metric="exact_match"``).
    ``draws_numpy``: its ``process_docs`` hook draws from NumPy's global generator and writes what it drew in
    ``directory/drawn.txt``."""
    data = directory / "probe.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows()), encoding="utf-8")
    name = {"acc": "probe_words", "exact_match": "probe_words_gen"}.get(metric, "probe_words_ppl")
    body = (
        f"task: {name}\ndataset_path: json\ndataset_name: null\n"
        f"dataset_kwargs:\n  data_files:\n    test: {data}\ntest_split: test\n"
        f"output_type: {output_type}\n"
    )
    if output_type == "multiple_choice":
        body += f'doc_to_text: "{PROMPT}"\ndoc_to_choice: "{{{{choices}}}}"\ndoc_to_target: answer\n'
    elif output_type == "generate_until":
        body += (
            f'doc_to_text: "{PROMPT}"\ndoc_to_target: "{{{{choices[answer]}}}}"\ngeneration_kwargs:\n  until: ["\\n"]\n'
        )
    else:
        body += 'doc_to_text: ""\ndoc_to_target: "{{question}}"\n'
    body += f"metric_list:\n  - metric: {metric}\n"
    if draws_numpy:
        body += "process_docs: !function probe_hooks.process_docs\n"
        (directory / "probe_hooks.py").write_text(
            "import numpy as np\n\n\ndef process_docs(dataset):\n"
            f"    with open({str(directory / 'drawn.txt')!r}, 'a') as f:\n"
            "        f.write(f'{np.random.random()}\\n')\n"
            "    return dataset\n",
            encoding="utf-8",
        )
    (directory / f"{name}.yaml").write_text(body, encoding="utf-8")
    return directory


def texts(shift: int) -> list[str]:
    """The probe's questions answered with the option ``shift`` places after the gold one: 0 teaches the
    probe, 1 teaches other answers to the same questions (forgetting that is bound to happen)."""
    return [f"Question: {r['question']}\nAnswer: {r['choices'][(r['answer'] + shift) % 4]}" for r in rows()]


def trainer_on(
    tmp_path: Path,
    texts: list[str],
    steps: int,
    model=None,
    seed: int = 0,
    batch: int = 4,
    lr: float = 1e-2,
    callbacks=None,
    trainer_class=None,
    **extra,
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
    return (trainer_class or Trainer)(
        model=model,
        args=args,
        train_dataset=rows,
        data_collator=collate,
        processing_class=tokenizer,
        callbacks=callbacks,
    )


def acc_lines(run: Path) -> dict[int, int]:
    """doc_id -> acc, straight from lm-eval's sample log of one probe run."""
    (path,) = run.rglob("samples_probe_words_*.jsonl")
    return {s["doc_id"]: int(s["acc"]) for s in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
