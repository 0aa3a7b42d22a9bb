"""The shipped task suite: generated YAMLs, catalog, and every benchmark run through lm-eval offline."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import lm_eval
import pytest
from lm_eval.tasks import TaskManager

from postforget_lmeval import task_dir
from postforget_lmeval.scoring import FORMATS
from postforget_lmeval.tasks import render_chat
from postforget_lmeval.tasks.catalog import BENCHMARKS, CATEGORIES, SUBTASKS, by_subtask, suite
from postforget_lmeval.tasks.generate import render, stale_files
from tests.helpers import scripted_lm
from tests.helpers.taskfixtures import FIXTURES, fixture_subtasks, write_overrides

INSTRUCTION = 'On the very last line, write exactly "Answer: $LETTER"'

# Gold answers worked out by hand from the fixture rows (after malformed rows are dropped).
EXPECTED_GOLD = {
    "arc_challenge": ["A", "B"],  # second item labels its options 1-3: answerKey "2" is B
    "bbh_date_understanding": ["D", "B"],
    "bbh_navigate": ["B", "A"],  # "- Yes / - No" options; target "No" is B
    "bbh_object_counting": ["8", "10"],
    "bbh_ruin_names": ["A", "D"],  # the row whose target is option text is dropped
    "bbh_sports_understanding": ["A", "B"],  # no options listed: fixed yes/no
    "commonsenseqa_main": ["A", "A"],
    "hellaswag_main": ["D", "D"],  # label is the string "3"
    "mctest_main": ["A", "C"],
    "mmlu_abstract_algebra": ["B", "C", "C"],
    "musr_murder_mysteries": ["A", "B"],
    "piqa_main": ["A", "B"],
    "saladbench_mrq": ["A", "BC"],
    "siqa_main": ["C", "A"],  # label "3" is answerC
}
# Items whose options are shuffled per item: the correct answer's text, to find it after the shuffle.
CORRECT_TEXT = {
    "gpqa_diamond": ["10^-4 eV", "11"],
    "truthfulqa_mc1": [
        "Nauru is the smallest country in the world that is at least one square mile in area.",
        "People in the US have the shortest paid vacations among Western countries.",
    ],
}


def test_generated_yamls_are_current() -> None:
    assert stale_files(Path(task_dir())) == [], "run `python -m postforget_lmeval.tasks.generate`"


def test_catalog_formats_are_registered_and_prompts_word_them() -> None:
    assert {s.answer_format for s in SUBTASKS} == set(FORMATS)
    for name, answer_format in FORMATS.items():
        lines = render_chat("How many?", ["3", "4"], name, "Count the objects.").split("\n")
        assert lines[:2] == ["Count the objects.", answer_format.instruction]
        assert (lines[-2:] == ["A) 3", "B) 4"]) == answer_format.lettered


def test_generator_detects_a_hand_edit(tmp_path: Path) -> None:
    for name, text in render().items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert stale_files(tmp_path) == []
    (tmp_path / "postforget_arc_easy.yaml").write_text("task: edited\n")
    (tmp_path / "postforget_extra.yaml").write_text("task: extra\n")
    assert stale_files(tmp_path) == ["postforget_arc_easy.yaml", "postforget_extra.yaml"]


def test_catalog_matches_the_paper() -> None:
    counts = Counter(s.benchmark for s in suite())
    assert counts == {
        "mmlu": 57,
        "bbh": 24,
        "gpqa": 1,
        "musr": 3,
        "arc": 2,
        "truthfulqa": 1,
        "hellaswag": 1,
        "siqa": 1,
        "mctest": 1,
        "piqa": 1,
        "commonsenseqa": 1,
        "saladbench": 1,
    }
    assert set(counts) == set(BENCHMARKS)
    assert {s.category for s in suite()} == set(CATEGORIES)
    assert len({s.subtask for s in SUBTASKS}) == len(SUBTASKS)
    excluded = {"dyck_languages", "word_sorting", "multistep_arithmetic_two"}
    assert not excluded & {s.name for s in suite() if s.benchmark == "bbh"}
    assert by_subtask("mmlu_logical_fallacies").category == "Logic"
    assert by_subtask("bbh_object_counting").answer_format == "number"
    assert by_subtask("hellaswag_main").split == "validation"


def test_lm_eval_cli_lists_every_task_and_group() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "lm_eval", "ls", "tasks", "--include_path", task_dir()],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    listed = {line.split("|")[1].strip() for line in out.splitlines() if line.startswith("|postforget")}
    expected = {s.task for s in SUBTASKS} | {s.base_task for s in suite()}
    expected |= {f"postforget_{b}{v}" for b in BENCHMARKS for v in ("", "_base")}
    expected |= {"postforget_all", "postforget_all_base"}
    twins = {s.ll_task for s in SUBTASKS if s.has_ll_twin}
    twin_groups = {f"postforget_{b}_ll" for b in BENCHMARKS if b != "saladbench"} | {"postforget_all_ll"}
    assert expected | twins | twin_groups <= listed
    assert "postforget_mmlu_abstract_algebra_ll" in twins and len(twins) == len(SUBTASKS) - 2
    assert (
        not {"postforget_bbh_object_counting_ll", "postforget_saladbench_mrq_ll", "postforget_saladbench_ll"} & listed
    )
    assert len([t for t in listed if t.startswith("postforget_cat_")]) == 3 * len(CATEGORIES)


def test_twins_are_the_sub_benchmarks_with_one_gold_option() -> None:
    """Numbers (BBH object_counting) and sets of options (SaladBench) are not scored as one continuation."""
    assert {s.subtask for s in SUBTASKS if not s.has_ll_twin} == {"bbh_object_counting", "saladbench_mrq"}
    twin = render()["postforget_mmlu_abstract_algebra_ll.yaml"]
    assert "include: _ll_template_yaml\n" in twin
    assert "process_docs: !function utils.process_docs_postforget_mmlu_abstract_algebra\n" in twin


def test_generated_headers_name_the_catalog_where_it_is() -> None:
    root = Path(__file__).resolve().parents[2]
    for name, text in render().items():
        cited = text.splitlines()[0].split(" from ", 1)[1].removesuffix(". Do not edit.")
        assert (root / cited).is_file(), (name, cited)


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict]]:
    """Every fixture sub-benchmark, chat and base variant, in one scripted lm-eval run."""
    overrides = tmp_path_factory.mktemp("overrides")
    tasks = write_overrides(overrides, fixture_subtasks())
    lm = scripted_lm.ScriptedLM(fn="tests.helpers.taskfixtures:respond")
    manager = TaskManager(include_path=str(overrides), include_defaults=False)
    out = lm_eval.simple_evaluate(model=lm, tasks=tasks, task_manager=manager, log_samples=True)
    return out["samples"]


def _rows(subtask: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / f"{subtask}.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("subtask", fixture_subtasks())
def test_fixture_items_are_scored_and_logged(evaluated: dict[str, list[dict]], subtask: str) -> None:
    entry = by_subtask(subtask)
    chat, base = evaluated[entry.task], evaluated[entry.base_task]
    golds = [s["postforget"]["gold"] for s in chat]
    if subtask in CORRECT_TEXT:
        options = [s["doc"]["pf_options"] for s in chat]
        assert [o[ord(g) - 65] for o, g in zip(options, golds)] == CORRECT_TEXT[subtask]
    else:
        assert golds == EXPECTED_GOLD[subtask]
    # Pairable: same items, same hashes, whichever prompt variant rendered them.
    assert [(s["doc_id"], s["doc_hash"]) for s in chat] == [(s["doc_id"], s["doc_hash"]) for s in base]
    for variant, samples in (("chat", chat), ("base", base)):
        for s in samples:
            rec = s["postforget"]
            assert rec["subtask"] == subtask and rec["category"] == entry.category
            assert rec["variant"] == variant and rec["benchmark"] == entry.benchmark
            assert rec["n_options"] == len(s["doc"]["pf_options"])
            expected_k = 2 ** rec["n_options"] - 1 if entry.answer_format == "letters" else rec["n_options"]
            assert rec["k"] == expected_k
            assert s["acc"] == rec["correct"] == int(rec["status"] == "answered" and rec["answer"] == rec["gold"])
            assert s["answered"] == int(rec["status"] == "answered")
            assert s["target"] == rec["gold"]


def test_prompts_render_the_papers_instruction(evaluated: dict[str, list[dict]]) -> None:
    prompt = evaluated["postforget_arc_challenge"][1]["arguments"][0][0]
    assert prompt.startswith(INSTRUCTION)  # ARC has no instruction line of its own in the paper
    assert 'Question: "Which of the following is an example of a physical change?"' in prompt
    assert prompt.endswith("A) rusting\nB) melting\nC) burning")
    base = evaluated["postforget_arc_challenge_base"][1]["arguments"][0][0]
    assert base.endswith(
        "Question: Which of the following is an example of a physical change?\n"
        "A) rusting\nB) melting\nC) burning\nReasoning:"
    )
    assert base.startswith("Question: A student leaves a sealed bag of ice on a table")
    assert base.count("\nAnswer: ") == 3  # three ARC-style exemplars
    mmlu_base = evaluated["postforget_mmlu_abstract_algebra_base"][0]["arguments"][0][0]
    assert mmlu_base.endswith("D) 6\nAnswer:") and "Reasoning:" not in mmlu_base  # no CoT for MMLU
    assert mmlu_base.count("\nAnswer: ") == 3  # three dev-split shots
    counting = evaluated["postforget_bbh_object_counting"][0]["arguments"][0][0]
    assert counting.startswith("Questions that involve enumerating objects")
    assert '"Answer: $NUMBER"' in counting and "A) " not in counting


def test_generation_defaults_follow_the_paper(evaluated: dict[str, list[dict]]) -> None:
    chat_kwargs = evaluated["postforget_piqa_main"][0]["arguments"][0][1]
    assert chat_kwargs["temperature"] == 0.6 and chat_kwargs["top_p"] == 0.95
    assert chat_kwargs["max_gen_toks"] == 32768 and chat_kwargs["do_sample"] is True
    base_stops = evaluated["postforget_piqa_main_base"][0]["arguments"][0][1]["until"]
    assert {"\nQuestion:", "Question: ", "<|im_start|>"} <= set(base_stops)
    assert chat_kwargs["until"] == [] or all("Question" not in u for u in chat_kwargs["until"])


def test_statuses_and_correctness(evaluated: dict[str, list[dict]]) -> None:
    dates = [s["postforget"] for s in evaluated["postforget_bbh_date_understanding"]]
    assert (dates[1]["status"], dates[1]["answer"], dates[1]["correct"]) == ("unfinished", None, 0)
    counting = [s["postforget"] for s in evaluated["postforget_bbh_object_counting"]]
    assert [(r["answer"], r["correct"]) for r in counting] == [("8", 1), ("9", 0)]
    salad = [s["postforget"] for s in evaluated["postforget_saladbench_mrq"]]
    assert [(r["answer"], r["correct"], r["k"]) for r in salad] == [("A", 1, 7.0), ("BC", 1, 7.0)]
    mmlu = [s["acc"] for s in evaluated["postforget_mmlu_abstract_algebra"]]
    assert mmlu == [0, 0, 0]  # scripted "Answer: A", golds B, C, C


def test_shuffles_are_stable_and_not_answer_first(evaluated: dict[str, list[dict]], tmp_path: Path) -> None:
    again = tmp_path / "again"
    again.mkdir()
    tasks = write_overrides(again, ["truthfulqa_mc1", "gpqa_diamond"])
    out = lm_eval.simple_evaluate(
        model=scripted_lm.ScriptedLM(fn="tests.helpers.taskfixtures:respond"),
        tasks=tasks,
        task_manager=TaskManager(include_path=str(again), include_defaults=False),
        log_samples=True,
    )["samples"]
    for task in ("postforget_truthfulqa_mc1", "postforget_gpqa_diamond"):
        first = [s["doc"]["pf_options"] for s in evaluated[task]]
        assert [s["doc"]["pf_options"] for s in out[task]] == first
        assert [s["prompt_hash"] for s in out[task]] == [s["prompt_hash"] for s in evaluated[task]]
    golds = [s["postforget"]["gold"] for s in evaluated["postforget_truthfulqa_mc1"]]
    assert golds != ["A", "A"]  # the published order puts the correct answer first


def test_malformed_bbh_row_is_dropped_and_reported(evaluated: dict[str, list[dict]], caplog) -> None:
    rows = _rows("bbh_ruin_names")
    assert len(evaluated["postforget_bbh_ruin_names"]) == len(rows) - 1
    from datasets import Dataset

    from postforget_lmeval.tasks.hooks import process_docs

    with caplog.at_level("WARNING", logger="postforget_lmeval"):
        kept = process_docs(by_subtask("bbh_ruin_names"), Dataset.from_list(rows))
    assert len(kept) == 2
    dropped = "dropped 1 of 3 row(s) that cannot be scored: 1 with gold answer not among the options (rows [1])"
    assert dropped in caplog.text


def test_own_exemplars_are_scorable_and_reasoned() -> None:
    from postforget_lmeval.tasks import _exemplars, unscorable

    for entry in suite():
        if entry.fewshot_split:  # MMLU: exemplars come from the dev split
            continue
        docs = _exemplars.fewshot_docs(entry)
        assert len(docs) == _exemplars.count(entry), entry.task
        for doc in docs:
            item = (doc["pf_question"], doc["pf_options"], doc["pf_gold"])
            assert unscorable(item, entry.answer_format) is None, (entry.task, doc["pf_question"])
            assert doc["pf_reasoning"] and doc["pf_subtask"] == entry.subtask
