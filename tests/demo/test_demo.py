"""The offline demo: its synthetic fact sets, its tokenizer, and (marker ``demo``) the whole demo end to end."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from postforget_lmeval.demo import facts as demo_data
from postforget_lmeval.scoring import LETTERS


def _digest(rows: list[dict]) -> str:
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


@pytest.mark.parametrize("facts", ["pretrain", "posttrain"])
def test_fact_sets_are_well_formed(facts: str) -> None:
    ds = demo_data.facts_dataset(facts)
    assert list(ds) == ["test"]
    rows = ds["test"].to_list()
    assert len(rows) == demo_data.DEFAULT_N_FACTS
    assert set(rows[0]) == {"id", "question", "choices", "answer"}
    assert len({r["id"] for r in rows}) == len(rows)
    assert len({r["question"] for r in rows}) == len(rows)
    for r in rows:
        assert len(r["choices"]) == 4 and len(set(r["choices"])) == 4
        assert r["answer"] in range(4)


@pytest.mark.parametrize("n", [300, 101, 7])
@pytest.mark.parametrize("facts", ["pretrain", "posttrain"])
def test_gold_positions_are_balanced(facts: str, n: int) -> None:
    counts = Counter(r["answer"] for r in demo_data.fact_rows(facts, n_facts=n))
    assert max(counts.values()) - min(counts.get(i, 0) for i in range(4)) <= 1


def test_same_rows_for_a_seed_in_any_process() -> None:
    """A seed must give the same rows on every run (doc_hash pairing relies on it): no hash()."""
    rows = demo_data.fact_rows("pretrain", seed=3)
    assert rows == demo_data.fact_rows("pretrain", seed=3)
    assert rows != demo_data.fact_rows("pretrain", seed=4)
    code = (
        "import json, sys; from postforget_lmeval.demo import facts as demo_data; "
        "json.dump(demo_data.fact_rows('pretrain', seed=3), sys.stdout)"
    )
    for hash_seed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        ).stdout
        assert _digest(json.loads(out)) == _digest(rows)


def test_rows_are_pinned() -> None:
    """Changing the generator changes every doc_hash: runs made before could no longer be paired."""
    assert demo_data.fact_rows("pretrain", n_facts=1)[0] == {
        "id": "pretrain-0000",
        "question": "What is the capital of the invented country Broutregoth?",
        "choices": ["Sudral", "Krurofuth", "Plerer", "Lizou"],
        "answer": 1,
    }
    assert demo_data.fact_rows("posttrain", n_facts=1)[0] == {
        "id": "posttrain-0000",
        "question": "Who invented the Broutregoth machine?",
        "choices": ["Zugoupar", "Tuthoustel", "Vouzhuth", "Thiton"],
        "answer": 1,
    }


@pytest.mark.parametrize("facts", ["pretrain", "posttrain"])
def test_smaller_sets_are_prefixes(facts: str) -> None:
    """--quick evaluates n_facts=100 through --metadata: exactly the first 100 rows of the full set."""
    assert demo_data.fact_rows(facts, n_facts=100) == demo_data.fact_rows(facts)[:100]


def test_posttrain_set_has_other_facts_about_the_same_entities() -> None:
    """Other relations and options, same entities: forgetting comes from interference, not conflict."""
    pre, post = demo_data.fact_rows("pretrain"), demo_data.fact_rows("posttrain")

    def entities(rows: list[dict]) -> list[str]:  # each fact names its own entity, once
        counts = Counter(w.strip("?") for r in rows for w in r["question"].split())
        return [next(w.strip("?") for w in r["question"].split() if counts[w.strip("?")] == 1) for r in rows]

    assert entities(pre) == entities(post) and len(set(entities(pre))) == len(pre)
    assert not {c for r in pre for c in r["choices"]} & {c for r in post for c in r["choices"]}
    openings = lambda rows: {" ".join(r["question"].split()[:3]) for r in rows}  # noqa: E731 - a one-line helper beside its only use
    assert not openings(pre) & openings(post)


def test_reordered_options_keep_each_fact_but_move_its_letter() -> None:
    """The unrelated models' training data: same facts, letters independent of the original's."""
    rows = demo_data.fact_rows("posttrain")
    a, b = demo_data.reorder_options(rows, seed=101), demo_data.reorder_options(rows, seed=102)
    for original, moved in zip(rows, a):
        assert sorted(moved["choices"]) == sorted(original["choices"])
        assert moved["choices"][moved["answer"]] == original["choices"][original["answer"]]
    assert a == demo_data.reorder_options(rows, seed=101)
    same_letter = lambda x, y: sum(r["answer"] == s["answer"] for r, s in zip(x, y)) / len(x)  # noqa: E731 - a one-line helper beside its only use
    assert 0.15 <= same_letter(rows, a) <= 0.35 and 0.15 <= same_letter(a, b) <= 0.35  # chance is 0.25


def test_facts_dataset_ignores_lm_eval_metadata() -> None:
    """lm-eval passes the task's whole metadata (and the model args) to custom_dataset."""
    ds = demo_data.facts_dataset(facts="pretrain", n_facts="12", version=1.0, pretrained="/x", dtype="float32")
    assert ds["test"].num_rows == 12
    with pytest.raises(ValueError, match="facts must be one of"):
        demo_data.facts_dataset(facts="other")


def test_prompt_and_target_use_the_answer_format() -> None:
    row = demo_data.fact_rows("pretrain")[0]
    assert demo_data.prompt(row).endswith(f"D) {row['choices'][3]}")
    assert demo_data.target(row) == f"\nAnswer: {LETTERS[row['answer']]}"


def test_task_renders_what_the_demo_trains_on() -> None:
    """The model must be trained on exactly the context lm-eval feeds it."""
    pytest.importorskip("lm_eval")
    from lm_eval.tasks import TaskManager

    from postforget_lmeval import task_dir

    task = TaskManager(include_path=task_dir(), metadata={"n_facts": 40}).load("postforget_demo_facts")["tasks"]
    (task,) = task.values()
    docs = list(task.test_docs())
    rows = demo_data.fact_rows("pretrain", n_facts=40)
    assert len(docs) == len(rows)
    for doc, row in zip(docs, rows, strict=True):
        assert task.fewshot_context(doc, num_fewshot=0) == demo_data.prompt(row)
        assert task.doc_to_target(doc) in (LETTERS[row["answer"]], row["answer"])


def test_tokenizer_round_trips_and_loads_offline(tmp_path) -> None:
    pytest.importorskip("torch")
    from transformers import AutoTokenizer

    from postforget_lmeval.demo import run as demo

    rows = demo_data.fact_rows("pretrain", n_facts=20) + demo_data.fact_rows("posttrain", n_facts=20)
    tok = demo.build_tokenizer(demo_data.corpus(rows))
    tok.save_pretrained(tmp_path)
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    for row in rows:
        prompt_ids, answer_ids = loaded.encode(demo_data.prompt(row)), loaded.encode(demo_data.target(row))
        # lm-eval encodes the prompt alone, the demo trains on prompt + answer: same tokens either way
        assert loaded.encode(demo_data.prompt(row) + demo_data.target(row)) == prompt_ids + answer_ids
        assert loaded.unk_token_id not in prompt_ids + answer_ids
        # what lm-eval decodes from a generation (special tokens skipped) is the answer line itself
        assert loaded.decode(answer_ids + [loaded.eos_token_id], skip_special_tokens=True) == demo_data.target(row)
        assert loaded.decode(prompt_ids) == demo_data.prompt(row)
    assert len(demo._letter_ids(loaded)) == 4


def test_out_dir_that_is_not_a_demo_is_refused(tmp_path) -> None:
    pytest.importorskip("torch")
    from postforget_lmeval.demo import run as demo

    (tmp_path / "precious.txt").write_text("keep me")
    assert demo.main(["--out", str(tmp_path), "--quick"]) == 1
    assert (tmp_path / "precious.txt").read_text() == "keep me"


@pytest.mark.demo
def test_quick_demo_measures_real_forgetting(tmp_path) -> None:
    """The whole demo (training, lm-eval's Python API, pair() and the reports), about 2 minutes on 2 CPU cores."""
    pytest.importorskip("torch")
    from postforget_lmeval.demo import run as demo

    out = tmp_path / "demo"
    assert demo.main(["--quick", "--out", str(out)]) == 0
    record = json.loads((out / "demo.json").read_text())
    pairs = record["pairs"]
    real, replay, unrelated = pairs["forgetting"], pairs["replay"], pairs["unrelated"]
    assert real["seeds"] == 2
    assert real["acc_before"] >= 0.85  # pretraining taught the facts
    assert real["acc_after"] <= real["acc_before"] - 0.2  # post-training lost a visible part of them
    assert real["F_true"] >= 0.2 and real["F_true"] > unrelated["F_true"] + 0.15
    assert 0.1 <= unrelated["acc_before"] <= 0.4  # guessers: their raw F is chance, not forgetting
    assert unrelated["F_true"] <= 0.1
    # independent guessers (own option orders, own sampling seeds): raw F at the chance level, not below it
    assert unrelated["F"] >= unrelated["F_chance"] - 0.08
    assert replay["F_true"] < real["F_true"] - 0.1  # replay reduces forgetting
    for sub in ("forgetting", "replay", "unrelated"):
        for name in ("subtasks.csv", "report.html", "forgetting.png"):
            assert (out / "pairs" / sub / name).exists()
    wide = (out / "pairs" / "pairs.csv").read_text().splitlines()
    assert wide[0] == "metric,category,before→after,before→after_replay,unrelated_a→b"
    # lm-eval's own tracker wrote every run where `lm_eval --output_path` would: one results file per seed
    runs = sorted((out / "lm_eval" / "before").rglob("results_*.json"))
    assert len(runs) == 2 and all(len(list(r.parent.glob("samples_postforget_demo_facts_*.jsonl"))) == 2 for r in runs)
    assert set(record["timings_s"]) >= {"pretrain", "post-train", "unrelated", "lm_eval", "pair", "total"}
