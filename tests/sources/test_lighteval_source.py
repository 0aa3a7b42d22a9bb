"""The LightEval source on output directories written by LightEval 0.10.0 and 0.13.0 themselves.

The fixtures (``tests/fixtures/lighteval/v0_10``, ``v0_13``) come from
``scripts/make_lighteval_fixtures.py`` run inside each LightEval version: paper-shaped tasks, a base
model with few-shot prompts before, its instruct model with the chat prompt after, seeds 0 and 1.
The responses follow the script's PATTERNS table, so the transitions below are worked by hand from it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from postforget_lmeval import pair
from postforget_lmeval.pairing.results import PairingError
from postforget_lmeval.report.files import write_outputs
from postforget_lmeval.sources import ReadRequest, TaskRun, detect
from postforget_lmeval.sources._lighteval import SOURCE
from postforget_lmeval.sources._lighteval_items import parse_query, subtask_of
from tests.helpers import paths
from tests.helpers.lmeval_runs import pf_record, sample_line, write_run

FIXTURES = paths.FIXTURES / "lighteval"
VERSIONS = ("v0_10", "v0_13")
SEED_SOURCE = {
    "v0_10": "config_general.generation_parameters.seed",
    "v0_13": "config_general.model_config.generation_parameters.seed",
}


def _runs(version: str, side: str):
    return SOURCE.find_runs(FIXTURES / version / side).task_runs


@pytest.mark.parametrize("version", VERSIONS)
def test_finds_every_task_run_with_its_seed_from_the_results_file_of_the_same_date(version):
    runs = _runs(version, "before")
    assert len(runs) == 6  # 3 tasks x 2 seeds
    assert sorted({r.seed for r in runs}) == [0, 1]
    assert {r.seed_source for r in runs} == {SEED_SOURCE[version]}
    for r in runs:
        assert r.results_path.name == f"results_{r.date}.json"
        assert r.samples_path.parent.name == r.date and r.samples_path.suffix == ".parquet"
        assert r.max_gen_toks == 32768 and r.self_scored
    prefix = "community|" if version == "v0_10" else ""
    assert {r.task for r in runs} == {
        f"{prefix}mmlu_reasoning_letter:abstract_algebra|0",
        f"{prefix}arc_reasoning_custom_prompt_letter:easy|0",
        f"{prefix}synth_reasoning_letter:capitals|0",
    }
    assert detect(FIXTURES / version / "after").name == "lighteval"


def _edit_results(root: Path, change) -> None:
    """``change(data)`` applied to every results file under ``root``, written back as LightEval writes it (UTF-8)."""
    for path in root.rglob("results_*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        change(data)
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")


@pytest.mark.parametrize("version", VERSIONS)
def test_a_task_run_says_where_its_items_are_and_how_they_were_made(version):
    """Every field pairing reads: LightEval's tasks generate and score themselves (one metric, no filter),
    the budget is the task's generation_size, and effective_num_docs -1 (not logged) is no item count."""
    root = FIXTURES / version / "before"
    date = {"v0_10": "2026-11-22T08-03-43.886826", "v0_13": "2026-11-22T08-04-01.283993"}[version]
    task = {
        "v0_10": "community|mmlu_reasoning_letter:abstract_algebra|0",
        "v0_13": "mmlu_reasoning_letter:abstract_algebra|0",
    }
    details = root / "details" / "Qwen" / "Qwen2.5-7B" / date / f"details_{task[version]}_{date}.parquet"
    run = next(r for r in SOURCE.find_runs(root).task_runs if r.samples_path == details)
    assert run == TaskRun(
        task=task[version], results_path=root / "results" / "Qwen" / "Qwen2.5-7B" / f"results_{date}.json",
        date=date, samples_path=details, seed=0, seed_source=SEED_SOURCE[version], output_type="generate_until",
        filters=("none",), metrics=("extractive_match",), group=None, n_expected=None, self_scored=True,
        max_gen_toks=32768, samples_bytes=os.path.getsize(details), unusable=None,
    )  # fmt: skip


def _config_tasks(generation_size, effective_num_docs):
    def change(data):
        for cfg in data["config_tasks"].values():
            cfg.update(generation_size=generation_size, effective_num_docs=effective_num_docs)

    return change


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (_config_tasks(2048, 6), (2048, 6)),  # the task's own budget, not the model's max_new_tokens (32768)
        (_config_tasks(None, 1), (32768, 1)),  # a task without a budget generates up to max_new_tokens
        (_config_tasks(2048, 0), (2048, None)),  # 0 and -1: no item count logged
        (lambda d: d.__setitem__("config_tasks", {"other|0": {"generation_size": 2048}}), (32768, None)),
        (lambda d: d.pop("config_tasks"), (32768, None)),
    ],
    ids=["own-budget", "no-budget", "no-count", "task-not-in-config", "no-config"],
)
def test_the_task_config_gives_the_budget_and_item_count_in_either_version(tmp_path, version, change, expected):
    """0.10 keys config_tasks without the few-shot count (``community|x``), 0.13 with it (``x|0``)."""
    shutil.copytree(FIXTURES / version / "before", tmp_path / "before")
    _edit_results(tmp_path / "before", change)
    runs = SOURCE.find_runs(tmp_path / "before").task_runs
    assert len(runs) == 6 and {(r.max_gen_toks, r.n_expected) for r in runs} == {expected}


def test_a_run_that_logged_no_generation_parameters_has_no_seed_and_says_where_it_looked(tmp_path):
    shutil.copytree(FIXTURES / "v0_13" / "before", tmp_path / "before")
    _edit_results(tmp_path / "before", lambda d: d["config_general"]["model_config"].pop("generation_parameters"))
    runs = SOURCE.find_runs(tmp_path / "before").task_runs
    assert len(runs) == 6 and {(r.seed, r.seed_source, r.max_gen_toks) for r in runs} == {
        (None, "none logged (config_general has no seed)", 32768)  # the budget: each task's generation_size
    }


def test_results_files_are_read_as_utf8_whatever_the_locale(tmp_path):
    """LightEval writes non-ASCII text as it is (a model or task description); a job under the C locale
    (ASCII) must still find the runs, not drop every results file as unreadable JSON."""
    shutil.copytree(FIXTURES / "v0_13" / "before", tmp_path / "before")
    _edit_results(tmp_path / "before", lambda d: d["config_general"].__setitem__("model_name", "Qwen/Qwen2.5-7B-é"))
    code = (
        "import sys; from postforget_lmeval.sources._lighteval import SOURCE; "
        "found = SOURCE.find_runs(sys.argv[1]); print(len(found.task_runs), len(found.problems))"
    )
    env = paths.ascii_locale_env()
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "before")], env=env, capture_output=True,
                         text=True, check=True)  # fmt: skip
    assert out.stdout.split() == ["6", "0"]


def test_paper_task_names_map_onto_the_catalog_and_unknown_tasks_keep_their_name():
    assert subtask_of("community|mmlu_reasoning_letter:abstract_algebra|0") == ("mmlu_abstract_algebra", "Math")
    assert subtask_of("community|bbh_reasoning_letter:causal_judgment|0") == ("bbh_causal_judgement", "Logic")
    assert subtask_of("arc_reasoning_custom_prompt_letter:challenge|0") == ("arc_challenge", "Logic")
    assert subtask_of("community|social_iqa_reasoning_letter:main|0") == ("siqa_main", "Language")
    assert subtask_of("community|salad_bench_reasoning_letter:mrq|0") == ("saladbench_mrq", "Safety/Truthfulness")
    assert subtask_of("community|bbh_reasoning_letter:word_sorting|0")[0] == "bbh_reasoning_letter:word_sorting"
    assert subtask_of("synth_reasoning_letter:capitals|0")[0] == "synth_reasoning_letter:capitals"
    assert subtask_of("lighteval|gsm8k") == subtask_of("gsm8k") == ("gsm8k", "gsm8k")  # no few-shot count


def test_question_and_options_come_from_the_item_not_the_whole_prompt():
    few_shot = (
        "Header.\n\nQuestion: Old?\nA) x\nB) y\nReasoning: r\nAnswer: A\n\nQuestion: New?\nA) 1\nB) 2\nC) 3\nReasoning:"
    )
    chat = 'Header.\n    Think step by step.\n    Question: "New?"\n    \nA) 1\nB) 2\nC) 3'
    assert parse_query(few_shot) == parse_query(chat) == ("New?", ["1", "2", "3"])
    bbh = 'Infer the date.\n\n    Question: "Today is X. Which?\nOptions:\n(A) 01/02\n(B) 03/04"\n    '
    assert parse_query(bbh) == ("Today is X. Which? Options:", ["01/02", "03/04"])


def test_the_options_are_the_last_consecutive_letter_block_of_one_style_and_the_question_what_precedes_it():
    assert parse_query("Question: Which is red?\nA) apple\nB) sky\nAnswer:") == ("Which is red?", ["apple", "sky"])
    assert parse_query("Which is red?\nA) apple\nB) sky\nAnswer:") == ("Which is red?", ["apple", "sky"])
    assert parse_query("Question: Q?\nA) p\nB) q\n(A) x\n(B) y\nAnswer:")[1] == ["p", "q"]  # A) before BBH's (A)
    assert parse_query("Question: Q?\nA) p\nB) q\n\nC) r\nD) s\nAnswer:")[1] == ["p", "q"]  # a gap ends the block
    bbh_chat = 'Question: "Xenon is a?\n(A) gas\n(B) metal\n(C) salt "\n'  # the chat prompt's closing quote
    assert parse_query(bbh_chat) == ("Xenon is a?", ["gas", "metal", "salt"])


@pytest.mark.parametrize("version", VERSIONS)
def test_item_table_reads_correctness_answer_gold_k_and_response_length(version):
    run = next(r for r in _runs(version, "after") if "abstract_algebra" in r.task and r.seed == 0)
    items = SOURCE.read([ReadRequest(run, None, None)], 1, None)[0].items
    rows = pq.read_table(run.samples_path).to_pylist()
    assert len(items) == 6 and items["subtask"].unique().tolist() == ["mmlu_abstract_algebra"]
    assert items["category"].unique().tolist() == ["Math"] and set(items["k"]) == {4.0}
    assert items["doc_id"].is_unique and items["locator"].tolist() == list(range(6))
    for row, item in zip(rows, items.itertuples()):
        if version == "v0_10":
            text, score, gold = row["predictions"][0], row["metrics"]["extractive_match"], "".join(row["gold"])
            extracted = row["specifics"]["extracted_predictions"]
        else:
            doc = row["doc"]
            text, score = row["model_response"]["text"][0], row["metric"]["extractive_match"]
            gold = "ABCD"[doc["gold_index"]]
            extracted = doc["specific"]["extracted_predictions"]
        assert (item.correct, item.gold, item.response_chars) == (int(score), gold, float(len(text)))
        assert item.answer == (extracted[0] if extracted else None)
        assert item.status == ("answered" if extracted else "no_answer")


REPLY = "Let me think. " * ((1 << 20) // 14) + "\nAnswer: B"  # 1 MB: compressed to a few KB in the parquet file


def _mmlu_seed0(folder: Path) -> TaskRun:
    """The mmlu run of seed 0 among the runs in ``folder``."""
    return next(r for r in SOURCE.find_runs(folder).task_runs if r.seed == 0 and "mmlu" in r.task)


def _after_mmlu_seed0(tmp_path: Path, version: str) -> tuple[TaskRun, pa.Table]:
    """A copy of the after side; its mmlu run of seed 0 and that run's details table."""
    shutil.copytree(FIXTURES / version / "after", tmp_path / "after")
    run = _mmlu_seed0(tmp_path / "after")
    return run, pq.read_table(run.samples_path)


def _write_rows(path: Path, rows: list[dict], schema: pa.Schema) -> None:
    """``rows`` written as the details file ``path``."""
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def _set_replies(row: dict, version: str, texts: list[str] | None) -> None:
    """The generations of ``row`` as ``version`` logs them: 0.10 ``predictions``, 0.13 the raw and the
    post-processed ``model_response`` text."""
    if version == "v0_10":
        row["predictions"] = texts
    else:
        row["model_response"].update(text=texts, text_post_processed=texts)


@pytest.mark.parametrize("version", VERSIONS)
def test_reading_holds_no_reply_text_unless_rescoring(tmp_path, version):
    """The item table needs each reply's length only: Arrow counts it, and no reply becomes a Python string (nor
    the token ids, the logged doc or the prompt) unless rescoring reads the replies."""
    run, table = _after_mmlu_seed0(tmp_path, version)
    rows = table.to_pylist()
    for row in rows:
        _set_replies(row, version, [REPLY])
    _write_rows(run.samples_path, rows, table.schema)
    SOURCE.read([ReadRequest(run, None, None)], 1, None)  # imports and caches outside the measure
    for rescore in (None, "lighteval"):
        tracemalloc.start()
        try:
            (read,) = SOURCE.read([ReadRequest(run, None, None, rescore)], 1, None)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert read.items["response_chars"].tolist() == [float(len(REPLY))] * 6
        if rescore is None:
            assert peak < len(REPLY)  # six replies of 1 MB on disk
        else:
            assert read.items["answer"].tolist() == ["B"] * 6


def test_v010_items_pair_across_few_shot_and_chat_prompts():
    """0.10 logs no doc id: the same item gets the same key from a base few-shot and a chat query."""
    ids = {}
    for side in ("before", "after"):
        run = next(r for r in _runs("v0_10", side) if "abstract_algebra" in r.task and r.seed == 0)
        ids[side] = SOURCE.read([ReadRequest(run, None, None)], 1, None)[0].items.set_index("doc_id")
    assert set(ids["before"].index) == set(ids["after"].index)
    joined = ids["before"].merge(ids["after"], left_index=True, right_index=True, suffixes=("", "_a"))
    assert (joined["doc_hash"] == joined["doc_hash_a"]).all() and (joined["gold"] == joined["gold_a"]).all()


def _rewrite_after_item(src: Path, dst: Path, change) -> None:
    """A copy of the v0_13 pair whose after side has ``change(row)`` applied to an mmlu row with gold B (seed 0)."""
    shutil.copytree(src, dst)
    path = _mmlu_seed0(dst / "after").samples_path
    table = pq.read_table(path)
    rows = table.to_pylist()
    change(next(r for r in rows if r["doc"]["gold_index"] == 1))
    _write_rows(path, rows, table.schema)


def _swap_first_two_options(row) -> None:
    doc = row["doc"]
    lines = doc["query"].split("\n")
    a = next(i for i, x in enumerate(lines) if x.startswith("A) "))
    b = a + 1
    lines[a], lines[b] = "A) " + lines[b][3:], "B) " + lines[a][3:]
    doc["query"] = "\n".join(lines)
    doc["gold_index"] = {0: 1, 1: 0}.get(doc["gold_index"], doc["gold_index"])


def test_an_item_whose_query_lists_no_options_counts_its_logged_choices(tmp_path):
    """k is the number of options the query lists, else of the doc's choices (0.13 logs the task's letters)."""

    def no_option_lines(row):
        row["doc"].update(query="Question: How many generators does Z_8 have?\nAnswer:", choices=["A", "B", "C"])

    _rewrite_after_item(FIXTURES / "v0_13", tmp_path / "pair", no_option_lines)
    run = _mmlu_seed0(tmp_path / "pair" / "after")
    items = SOURCE.read([ReadRequest(run, None, None)], 1, None)[0].items
    assert items["k"].tolist() == [4.0, 3.0, 4.0, 4.0, 4.0, 4.0]  # the edited row is the second


def _without(table: pa.Table, dotted: str) -> pa.Table:
    """``table`` less a column or, for ``head.child``, less one field of a struct column."""
    head, _, child = dotted.partition(".")
    if not child:
        return table.drop_columns([head])
    struct = table.column(head).combine_chunks()
    names = [f.name for f in struct.type if f.name != child]
    kept = pa.StructArray.from_arrays([struct.field(n) for n in names], names=names)
    return table.set_column(table.schema.get_field_index(head), head, kept)


ITEM_FIELDS = ["correct", "k", "answer", "gold", "status", "response_chars"]
NAN = float("nan")


@pytest.mark.parametrize(
    ("version", "dropped", "changed"),
    [
        ("v0_13", "metric", None),
        ("v0_13", "model_response.text", {"response_chars": NAN}),
        ("v0_13", "model_response", {"response_chars": NAN}),
        ("v0_13", "doc.gold_index", {"gold": None}),
        ("v0_13", "doc.specific", {"answer": None, "status": "no_answer"}),
        ("v0_13", "doc.choices", {}),  # the query lists the options
        ("v0_13", "doc.query", {}),  # the choices are the options (letters here)
        ("v0_10", "metrics", None),
        ("v0_10", "predictions", {"response_chars": NAN}),
        ("v0_10", "gold", {"gold": None}),
        ("v0_10", "specifics", {"answer": None, "status": "no_answer"}),
        ("v0_10", "example", {"k": NAN}),  # 0.10 logs no choices: no options left to count
    ],
)
def test_a_details_file_without_a_field_the_reader_reads_still_gives_its_items(tmp_path, version, dropped, changed):
    """A file LightEval wrote, less one field (a foreign or trimmed copy): what the field gave is missing, the rest
    is read as before; without the metric every row is reported as skipped."""
    run, table = _after_mmlu_seed0(tmp_path, version)
    whole = SOURCE.read([ReadRequest(run, None, None)], 1, None)[0].items[ITEM_FIELDS]
    pq.write_table(_without(table, dropped), run.samples_path)
    (read,) = SOURCE.read([ReadRequest(run, None, None)], 1, None)
    if changed is None:
        assert len(read.items) == 0
        assert [(p.path, p.kind, p.count, p.message) for p in read.problems] == [
            (str(run.samples_path), "no_metric", 6, "6 row(s) without metric extractive_match skipped")
        ]
    else:
        assert read.problems == []
        pd.testing.assert_frame_equal(read.items[ITEM_FIELDS], whole.assign(**changed), check_dtype=False)
    if dropped in ("doc.query", "example"):
        assert SOURCE.load_item(str(run.samples_path), 0).question == ""  # nothing to show, not a made-up text


def test_a_013_file_without_the_post_processed_text_is_rescored_on_the_generation(tmp_path):
    run, table = _after_mmlu_seed0(tmp_path, "v0_13")
    rescore = ReadRequest(run, None, None, "lighteval")
    whole = SOURCE.read([rescore], 1, None)[0].items  # the fixture's post-processed text is the generation
    pq.write_table(_without(table, "model_response.text_post_processed"), run.samples_path)
    (read,) = SOURCE.read([rescore], 1, None)
    assert read.problems == [] and read.items["answer"].tolist() == whole["answer"].tolist() == list("CBBCCB")


@pytest.mark.parametrize("version", VERSIONS)
def test_the_response_is_the_first_generation_and_a_row_without_one_is_not_rescored(tmp_path, version):
    """A task sampling several generations per doc logs them all; the first is the response (its length, and
    the text rescoring reads). A row that logged none (an empty or null list) has no length and keeps its
    logged score."""
    run, table = _after_mmlu_seed0(tmp_path, version)
    whole = SOURCE.read([ReadRequest(run, None, None)], 1, None)[0].items
    rows = table.to_pylist()
    for row, texts in zip(rows, (["Answer: A", "Answer: C\nDone."], [], None)):
        _set_replies(row, version, texts)
    _write_rows(run.samples_path, rows, table.schema)
    (read,) = SOURCE.read([ReadRequest(run, None, None)], 1, None)
    chars = read.items["response_chars"].tolist()
    assert chars[0] == 9.0 and math.isnan(chars[1]) and math.isnan(chars[2])  # no generation
    assert chars[3:] == whole["response_chars"].tolist()[3:]
    (rescored,) = SOURCE.read([ReadRequest(run, None, None, "lighteval")], 1, None)
    assert rescored.items["answer"].tolist()[:3] == ["A", *whole["answer"][1:3]]
    assert [(p.path, p.kind, p.count, p.message) for p in rescored.problems] == [(
        str(run.samples_path), "not_rescored", 2,
        "2 row(s) cannot be rescored (no options in the prompt or no gold); their logged score is used",
    )]  # fmt: skip


@pytest.mark.parametrize("version", VERSIONS)
def test_every_gold_letter_of_a_multi_gold_item_is_read(tmp_path, version):
    """A doc with several golds: 0.13 logs gold_index as a list of indices, 0.10 gold as a list of letters."""
    run, table = _after_mmlu_seed0(tmp_path, version)
    rows = table.to_pylist()
    schema = table.schema
    if version == "v0_10":
        rows[1]["gold"] = ["B", "D"]
    else:
        for row in rows:
            row["doc"]["gold_index"] = [row["doc"]["gold_index"]]
        rows[1]["doc"]["gold_index"] = [1, 3]
        doc = schema.field("doc").type
        at = doc.get_field_index("gold_index")
        doc = pa.struct([f.with_type(pa.list_(pa.int64())) if i == at else f for i, f in enumerate(doc)])
        schema = schema.set(schema.get_field_index("doc"), schema.field("doc").with_type(doc))
    _write_rows(run.samples_path, rows, schema)
    items = SOURCE.read([ReadRequest(run, None, None)], 1, None)[0].items
    assert items["gold"].tolist()[:2] == ["C", "BD"]


def test_a_salad_bench_multi_answer_item_is_rescored_as_a_set_of_letters(tmp_path):
    """SALAD-Bench's multi-answer task (``letters``): strict rescoring reads "B, D" as the set BD; any other task
    (``letter``) wants one letter and reads no answer in it."""
    run, table = _after_mmlu_seed0(tmp_path, "v0_10")
    rows = table.to_pylist()
    rows[1].update(gold=["B", "D"], predictions=["Both are unsafe.\nAnswer: B, D"])
    rows[2].update(predictions=["Answer: B, D"])  # gold A
    _write_rows(run.samples_path, rows, table.schema)
    salad = dataclasses.replace(run, task="community|salad_bench_reasoning_letter:mrq|0")
    columns = ["subtask", "category", "gold", "answer", "status", "correct"]
    items = SOURCE.read([ReadRequest(salad, None, None, "strict")], 1, None)[0].items
    assert [tuple(items.loc[i, columns]) for i in (1, 2)] == [
        ("saladbench_mrq", "Safety/Truthfulness", "BD", "BD", "answered", 1),
        ("saladbench_mrq", "Safety/Truthfulness", "A", "BD", "answered", 0),
    ]
    items = SOURCE.read([ReadRequest(run, None, None, "strict")], 1, None)[0].items
    assert tuple(items.loc[2, columns]) == ("mmlu_abstract_algebra", "Math", "A", None, "no_answer", 0)


def test_a_query_without_options_leaves_k_unknown_unless_the_task_hides_its_options(tmp_path):
    """0.10 logs no choices: with no option lines in the query, k is unknown (NaN), except for BBH's object
    counting, whose prompt shows none of its 19 answer letters."""
    run, table = _after_mmlu_seed0(tmp_path, "v0_10")
    rows = table.to_pylist()
    rows[1]["example"] = "Question: How many generators does Z_8 have?\nAnswer:"
    _write_rows(run.samples_path, rows, table.schema)
    for task, k in (
        ("community|mmlu_reasoning_letter:abstract_algebra|0", NAN),
        ("community|bbh_reasoning_letter:object_counting|0", 19.0),
    ):
        items = SOURCE.read([ReadRequest(dataclasses.replace(run, task=task), None, None)], 1, None)[0].items
        assert items["k"].tolist()[:3] == pytest.approx([4.0, k, 4.0], nan_ok=True)


@pytest.mark.parametrize("version", VERSIONS)
def test_what_reading_a_details_file_tells_the_summary(tmp_path, version):
    """Its lines and items, the metric, and a file holding fewer items than LightEval says it evaluated."""
    run, _ = _after_mmlu_seed0(tmp_path, version)
    info = {"filter": "none", "metric": "extractive_match", "lines": 6, "items": 6, "extractors": []}
    for expected, problems in ((6, []), (7, ["holds 6 of the 7 items LightEval evaluated"])):
        (read,) = SOURCE.read([ReadRequest(dataclasses.replace(run, n_expected=expected), None, None)], 1, None)
        assert read.info == info and [(p.path, p.kind, p.count, p.message) for p in read.problems] == [
            (str(run.samples_path), "incomplete", 1, m) for m in problems
        ]


def test_partial_scores_are_counted_with_five_examples(tmp_path):
    run, table = _after_mmlu_seed0(tmp_path, "v0_13")
    rows = table.to_pylist()
    for row, score in zip(rows, (0.5, 0.25, 0.75, 0.5, 2.0, 0.1)):
        row["metric"]["extractive_match"] = score
    _write_rows(run.samples_path, rows, table.schema)
    (read,) = SOURCE.read([ReadRequest(run, None, None)], 1, None)
    assert len(read.items) == 0 and read.info["lines"] == 6 and read.info["items"] == 0
    assert [(p.path, p.kind, p.count, p.message) for p in read.problems] == [(
        str(run.samples_path), "non_binary", 6,
        "6 row(s) with a non-binary extractive_match (e.g. 0.5, 0.25, 0.75, 0.5, 2.0) skipped: a score in (0,1) "
        "is not a transition",
    )]  # fmt: skip


def test_a_details_file_that_is_no_parquet_is_a_file_problem(tmp_path):
    run, _ = _after_mmlu_seed0(tmp_path, "v0_13")
    run.samples_path.write_bytes(run.samples_path.read_bytes()[:100])  # cut short, as by an interrupted copy
    (read,) = SOURCE.read([ReadRequest(run, None, None)], 1, None)
    (problem,) = read.problems
    assert len(read.items) == 0 and (problem.path, problem.kind, problem.count) == (str(run.samples_path), "file", 1)
    assert problem.message.startswith("is not a readable parquet file (")
    assert problem.message.endswith(f"); task {run.task} skipped")


def test_an_item_with_its_options_in_another_order_still_pairs(tmp_path):
    _rewrite_after_item(FIXTURES / "v0_13", tmp_path / "pair", _swap_first_two_options)
    result = pair(tmp_path / "pair" / "before", tmp_path / "pair" / "after")
    sub = result.subtasks.set_index(["subtask", "seed"])
    assert sub.loc[("mmlu_abstract_algebra", "0"), "n"] == 6 and sub["n_unpaired_after"].sum() == 0


def test_a_join_of_items_with_different_gold_is_refused(tmp_path):
    def other_gold(row):
        row["doc"]["gold_index"] = (row["doc"]["gold_index"] + 1) % 4

    _rewrite_after_item(FIXTURES / "v0_13", tmp_path / "pair", other_gold)
    with pytest.raises(PairingError, match=r"doc_hash (of|differs for) mmlu_abstract_algebra"):
        pair(tmp_path / "pair" / "before", tmp_path / "pair" / "after")


def test_a_lighteval_010_run_pairs_with_a_lighteval_013_run():
    result = pair(FIXTURES / "v0_10" / "before", FIXTURES / "v0_13" / "after")
    sub = result.subtasks.set_index(["subtask", "seed"])
    assert sub["n"].sum() == 30 and sub["n_unpaired_before"].sum() == sub["n_unpaired_after"].sum() == 0
    assert sub.loc[("mmlu_abstract_algebra", "0"), "n_10"] == MMLU_SEED0["n_10"]


# Worked from the script's PATTERNS (items in the script's order; "done" = "Answer: X\nDone.",
# which LightEval 0.10 reads as D where D is an option, 0.13 as no answer).
MMLU_SEED0 = {"n_11": 1, "n_10": 2, "n_01": 3, "n_00": 0, "acc_before": 0.5, "acc_after": 4 / 6}
ARC_SEED1 = {"v0_10": (4, 0, 1, 0), "v0_13": (3, 1, 1, 0)}  # arc item 4 "done" with 3 options: 0.10 reads B


@pytest.mark.parametrize("version", VERSIONS)
def test_pairing_lighteval_runs_gives_the_hand_worked_transitions(version):
    result = pair(FIXTURES / version / "before", FIXTURES / version / "after")
    sub = result.subtasks.set_index(["subtask", "seed"])
    assert sorted(sub.index.get_level_values(0).unique()) == [
        "arc_easy", "mmlu_abstract_algebra", "synth_reasoning_letter:capitals",
    ]  # fmt: skip
    mmlu = sub.loc[("mmlu_abstract_algebra", "0")]
    assert {c: mmlu[c] for c in MMLU_SEED0} == pytest.approx(MMLU_SEED0)
    arc = sub.loc[("arc_easy", "1")]
    assert tuple(arc[["n_11", "n_10", "n_01", "n_00"]]) == ARC_SEED1[version]
    assert arc["k"] == pytest.approx(5 / (1 / 3 + 1 / 4 + 1 / 5 + 1 / 4 + 1 / 3))  # 3, 4, 5, 4, 3 options
    assert (sub["n_unpaired_before"] == 0).all() and (sub["n_unpaired_after"] == 0).all()
    assert result.summary["runs"]["before"][0]["seed_source"] == SEED_SOURCE[version]


def test_lighteval_rescoring_reproduces_lighteval_010_own_scores():
    result = pair(FIXTURES / "v0_10" / "before", FIXTURES / "v0_10" / "after", rescore="lighteval")
    s = result.samples
    assert len(s) == 30
    assert (s["before"] == s["correct_logged_before"]).all() and (s["after"] == s["correct_logged_after"]).all()
    strict = pair(FIXTURES / "v0_10" / "before", FIXTURES / "v0_10" / "after", rescore="strict").samples
    changed = strict[strict["before"] != strict["correct_logged_before"]]
    assert len(changed) == 2 and set(changed["answer_before"]) <= {"A", "B", "C"}  # "Answer: X\nDone." read as X


def test_rescoring_013_reads_the_text_its_metric_saw_and_changes_only_rows_the_010_rules_read_otherwise(tmp_path):
    """0.13 logs each generation twice: as the model wrote it and as its metric saw it (closed ``<think>`` blocks
    stripped). Rescoring reads the second, so a reply that only thought scores as no answer, as LightEval scored it."""

    def thought_only(row):  # gold B; the model stopped after its think block
        row["model_response"].update(text=["<think>\nAnswer: B\n</think>"], text_post_processed=[""])
        row["metric"]["extractive_match"] = 0.0
        row["doc"]["specific"]["extracted_predictions"] = []

    _rewrite_after_item(FIXTURES / "v0_13", tmp_path / "pair", thought_only)
    result = pair(tmp_path / "pair" / "before", tmp_path / "pair" / "after", rescore="lighteval", analyses=False)
    s = result.samples.set_index(["subtask", "seed", "locator_after"])
    columns = ["answer_after", "status_after", "after", "correct_logged_after", "response_chars_after"]
    assert tuple(s.loc[("mmlu_abstract_algebra", "0", 1), columns]) == (None, "no_answer", 0, 0, 26.0)
    # 0.10's rules read a letter in "Answer: X\nDone." where 0.13 read none: right on capitals (gold A of 3 options,
    # seed 0 before) and arc item 4 (seed 1 after); every other row keeps its logged score
    changed = [
        (r.Index[0], r.Index[1], side, getattr(r, f"answer_{side}"))
        for r in s.itertuples() for side in ("before", "after")
        if getattr(r, side) != getattr(r, f"correct_logged_{side}")
    ]  # fmt: skip
    assert sorted(changed) == [("arc_easy", "1", "after", "B"), ("synth_reasoning_letter:capitals", "0", "before", "A")]
    assert len(s) == 30 and result.warnings == []


@pytest.mark.parametrize("version", VERSIONS)
def test_load_item_gives_show_the_question_options_gold_and_full_response(version):
    run = next(r for r in _runs(version, "before") if "capitals" in r.task and r.seed == 0)
    items = SOURCE.read([ReadRequest(run, None, None)], 1, None)[0].items
    row = items.iloc[0]
    item = SOURCE.load_item(str(row["file"]), int(row["locator"]))
    assert item.question.startswith("What is the capital of ") and len(item.options) == 3
    assert item.gold == row["gold"] and item.doc_id == row["doc_id"]
    assert len(item.responses) == 1 and float(len(item.responses[0])) == row["response_chars"]
    assert item.prompt.endswith("Reasoning:") and "Question:" in item.prompt
    logged = pq.read_table(row["file"]).to_pylist()[int(row["locator"])]
    doc = logged["doc"] if version == "v0_13" else {k: logged[k] for k in ("example", "gold", "specifics")}
    assert item.doc == doc


def test_results_without_details_is_an_error_naming_save_details(tmp_path):
    shutil.copytree(FIXTURES / "v0_13" / "before" / "results", tmp_path / "before" / "results")
    shutil.copytree(FIXTURES / "v0_13" / "after", tmp_path / "after")
    assert detect(tmp_path / "before").name == "lighteval"  # found by its results file alone
    expected = r"holds LightEval results files \(2, .*no per-item details .*--save-details"
    with pytest.raises(PairingError, match=expected):
        pair(tmp_path / "before", tmp_path / "after")
    with pytest.raises(PairingError) as error:
        SOURCE.find_runs(tmp_path / "before")
    first = tmp_path / "before" / "results" / "Qwen" / "Qwen2.5-7B" / "results_2026-11-22T08-04-01.283993.json"
    assert str(error.value) == (
        f"{tmp_path / 'before'} holds LightEval results files (2, e.g. {first}) but no per-item details "
        "(details/<model>/<date>/details_<task>_<date>.parquet): LightEval writes them only with --save-details; "
        "re-run with it, or copy the details folder beside results/"
    )


def test_detection_reads_only_the_head_of_a_results_file(tmp_path):
    """LightEval opens its results file with ``config_general``; a file that names it only past its first 256
    bytes (a large lm-eval results file quoting it) is not taken for LightEval, nor read whole."""
    folder = tmp_path / "run" / "results" / "m"
    folder.mkdir(parents=True)
    results = folder / "results_2025-01-01T00-00-00.000000.json"
    for pad, lighteval in ((239, True), (240, False)):  # the key's closing quote at byte 256, then 257
        results.write_text("{" + " " * pad + '"config_general": {}}', encoding="utf-8")
        assert SOURCE.matches(tmp_path / "run") is lighteval


def test_other_results_files_beside_a_lighteval_run_are_left_alone(tmp_path):
    """Beside a LightEval run: lm-eval's results file (same name, no ``config_general``), a JSON list, a cut file."""
    shutil.copytree(FIXTURES / "v0_13" / "before", tmp_path / "before")
    other = tmp_path / "before" / "results" / "other"
    other.mkdir()
    for date, text in (("01", '{"results": {}, "configs": {}}'), ("02", "[1, 2]"), ("03", '{"config_gen')):
        other.joinpath(f"results_2025-01-{date}T00-00-00.000001.json").write_text(text, encoding="utf-8")
    found = SOURCE.find_runs(tmp_path / "before")
    assert len(found.task_runs) == 6 and found.problems == []


def test_a_details_folder_without_its_results_is_recognised_and_each_file_named(tmp_path):
    shutil.copytree(FIXTURES / "v0_13" / "before" / "details", tmp_path / "before" / "details")
    assert SOURCE.matches(tmp_path / "before") and detect(tmp_path / "before").name == "lighteval"
    found = SOURCE.find_runs(tmp_path / "before")
    assert found.task_runs == [] and len(found.problems) == 6


def test_details_without_results_of_the_same_date_are_reported_and_skipped(tmp_path):
    shutil.copytree(FIXTURES / "v0_10" / "before", tmp_path / "before")
    orphan = sorted((tmp_path / "before" / "results").rglob("results_*.json"))[0]
    orphan.unlink()
    found = SOURCE.find_runs(tmp_path / "before")
    assert len(found.task_runs) == 5
    date = orphan.name.removeprefix("results_").removesuffix(".json")
    task = "community|mmlu_reasoning_letter:abstract_algebra|0"
    details = tmp_path / "before" / "details" / "Qwen" / "Qwen2.5-7B" / date / f"details_{task}_{date}.parquet"
    assert found.problems == [{
        "path": str(details),
        "problem": f"no results_{date}.json of the same date, so its seed is unknown; task {task} skipped",
    }]  # fmt: skip


def _lmeval_twin(version: str, root: Path) -> None:
    """lm-eval runs carrying the LightEval runs' per-item answers, status, k, gold and responses."""
    for side in ("before", "after"):
        runs = _runs(version, side)
        tables = [SOURCE.read([ReadRequest(r, None, None)], 1, None)[0].items for r in runs]
        items = pd.concat(tables, ignore_index=True)
        order = {d: i for i, d in enumerate(sorted(items["doc_id"].unique()))}
        for seed, by_seed in items.groupby("seed_value", observed=True):
            tasks = {}
            for subtask, group in by_seed.groupby("subtask"):
                lines = []
                for it in group.sort_values("doc_id").itertuples():
                    text = SOURCE.load_item(str(it.file), int(it.locator)).responses[0]
                    rec = pf_record(subtask, int(it.correct), k=it.k, answer=it.answer, status=it.status,
                                    category=it.category)  # fmt: skip
                    rec["gold"] = it.gold
                    lines.append(sample_line(order[it.doc_id], None, record=rec, response=text))
                tasks[f"postforget_{subtask.replace(':', '_')}"] = lines
            date = f"2025-01-0{int(seed) + 1}T00-00-00.000001"
            write_run(root / side, tasks, seed=int(seed), model_dir=f"seed{seed}", date=date)


@pytest.mark.parametrize("version", VERSIONS)
def test_lighteval_and_lmeval_runs_with_the_same_answers_give_identical_subtasks_csv(version, tmp_path):
    _lmeval_twin(version, tmp_path / "lmeval")
    outs = {}
    for name, root in (("lighteval", FIXTURES / version), ("lmeval", tmp_path / "lmeval")):
        write_outputs(pair(root / "before", root / "after"), tmp_path / f"out_{name}", plot=False)
        outs[name] = pd.read_csv(tmp_path / f"out_{name}" / "subtasks.csv")
    naming = ["task_before", "task_after"]  # the harness's task names: necessarily different
    # lm-eval's fast reader measures a response by the byte span of its JSON (an escaped newline or a
    # multi-byte character counts more than one), so the reply-length medians are checked against the
    # true lengths instead; every other column must be equal.
    lengths = ["median_chars_before", "median_chars_after"]
    le, lm = (outs[n].drop(columns=naming + lengths) for n in ("lighteval", "lmeval"))
    assert len(le) == 6 and le["n"].sum() == 30
    pd.testing.assert_frame_equal(le, lm)
    samples = pd.read_parquet(tmp_path / "out_lighteval" / "samples.parquet")
    for side in ("before", "after"):
        true = samples.groupby(["subtask", "seed"])[f"response_chars_{side}"].median()
        got = outs["lighteval"].assign(seed=outs["lighteval"]["seed"].astype(str)).set_index(["subtask", "seed"])
        assert got[f"median_chars_{side}"].to_dict() == true.to_dict()


def test_show_lists_a_forgotten_lighteval_item_with_both_responses(tmp_path, capsys):
    from postforget_lmeval.cli import main

    out = tmp_path / "out"
    runs = [str(FIXTURES / "v0_10" / side) for side in ("before", "after")]
    assert main([*runs, "-o", str(out), "--no-plot", "-q"]) == 0
    capsys.readouterr()
    assert main(["show", str(out), "--subtask", "mmlu_abstract_algebra", "--seed", "1", "--responses"]) == 0
    printed = capsys.readouterr().out
    # seed 1: the only 1->0 item is item 4 (before right, after "Answer: B\nDone.", which LightEval 0.10 reads as D)
    assert "1 forgotten item(s) of mmlu_abstract_algebra" in printed
    assert "How many generators does Z_8 have?" in printed and "B) 4" in printed
    assert "gold: B" in printed and "before: B" in printed and "after: D" in printed and "Done." in printed


def test_a_results_file_without_its_details_is_reported(tmp_path):
    shutil.copytree(FIXTURES / "v0_13" / "before", tmp_path / "before")
    run = SOURCE.find_runs(tmp_path / "before").task_runs[0]
    shutil.rmtree(run.samples_path.parent)
    # LightEval adds an average per namespace of several tasks, and "all": neither is a task that was skipped
    averages = {"all": {}, "mmlu_reasoning_letter:_average|0": {}}
    _edit_results(run.results_path.parent, lambda d: d["results"].update(averages))
    found = SOURCE.find_runs(tmp_path / "before")
    assert len(found.task_runs) == 3 and {r.seed for r in found.task_runs} == {1 - run.seed}
    tasks = (
        "mmlu_reasoning_letter:abstract_algebra|0, arc_reasoning_custom_prompt_letter:easy|0, "
        "synth_reasoning_letter:capitals|0"
    )
    assert found.problems == [{
        "path": str(run.results_path),
        "problem": f"no details_<task>_{run.date}.parquet (run without --save-details?); task(s) {tasks} skipped",
    }]  # fmt: skip
    _edit_results(run.results_path.parent, lambda d: d.__setitem__("results", averages))
    assert SOURCE.find_runs(tmp_path / "before").problems[0]["problem"].endswith("; task(s) ? skipped")


def test_a_details_file_left_as_a_git_lfs_pointer_is_named_unusable(tmp_path):
    """A clone of a LightEval output repository made without ``git lfs pull`` holds pointer stubs."""
    shutil.copytree(FIXTURES / "v0_13" / "before", tmp_path / "before")
    stub = SOURCE.find_runs(tmp_path / "before").task_runs[0].samples_path
    stub.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 123456\n", encoding="utf-8")
    runs = SOURCE.find_runs(tmp_path / "before").task_runs
    assert [r.samples_path for r in runs if r.unusable is not None] == [stub]
    assert next(r.unusable for r in runs if r.samples_path == stub).startswith(
        "is a Git LFS pointer stub (0.1 MB on the LFS server), not the logged samples"
    )


def test_reading_tells_progress_the_bytes_read_after_each_file():
    runs = _runs("v0_13", "before")[:2]
    sizes = [r.samples_path.stat().st_size for r in runs]
    told = []
    reads = SOURCE.read([ReadRequest(r, None, None) for r in runs], 1, lambda done, total: told.append((done, total)))
    assert [len(r.items) for r in reads] == [len(pq.read_table(r.samples_path)) for r in runs]
    assert told == [(sizes[0], sum(sizes)), (sum(sizes), sum(sizes))]


def test_an_item_without_question_text_shows_its_whole_query(tmp_path):
    query = "A) 4\nB) 7\nC) 9"  # the item's options only: nothing to show as its question but the query

    def options_only(row):
        row["doc"]["query"] = query

    _rewrite_after_item(FIXTURES / "v0_13", tmp_path / "pair", options_only)
    path = next(
        r.samples_path
        for r in SOURCE.find_runs(tmp_path / "pair" / "after").task_runs
        if r.seed == 0 and "mmlu" in r.task
    )
    locator = [row["doc"]["query"] for row in pq.read_table(path).to_pylist()].index(query)
    item = SOURCE.load_item(str(path), locator)
    assert (item.question, item.options, item.gold) == (query, ["4", "7", "9"], "B")


def test_an_unreadable_details_file_is_reported_with_its_path(tmp_path):
    shutil.copytree(FIXTURES / "v0_10", tmp_path / "pair")
    run = next(r for r in _runs("v0_10", "after") if "capitals" in r.task and r.seed == 1)
    broken = tmp_path / "pair" / run.samples_path.relative_to(FIXTURES / "v0_10")
    broken.write_bytes(broken.read_bytes()[:100])  # cut short, as by an interrupted copy
    result = pair(tmp_path / "pair" / "before", tmp_path / "pair" / "after")
    assert any(str(broken) in w and "not a readable parquet file" in w for w in result.warnings)
    sub = result.subtasks.set_index(["subtask", "seed"])
    assert ("synth_reasoning_letter:capitals", "1") not in sub.index and sub["n"].sum() == 26
    with pytest.raises(PairingError, match="not a readable parquet file"):
        pair(tmp_path / "pair" / "before", tmp_path / "pair" / "after", strict=True)


def test_a_score_other_than_0_or_1_is_reported_and_its_item_skipped(tmp_path):
    """A details row whose extractive_match is neither 0 nor 1 (a foreign or edited file) is no transition:
    it is skipped with a warning naming the file and the values, never rounded into one."""

    def half(row):
        row["metric"]["extractive_match"] = 0.5

    _rewrite_after_item(FIXTURES / "v0_13", tmp_path / "pair", half)
    result = pair(tmp_path / "pair" / "before", tmp_path / "pair" / "after")
    runs = SOURCE.find_runs(tmp_path / "pair" / "after").task_runs
    path = next(r.samples_path for r in runs if r.seed == 0 and "mmlu" in r.task)
    warning = next(w for w in result.warnings if "non-binary" in w)
    assert warning.startswith("after: ") and path.name in warning  # the warning shortens the folders between
    assert "1 row(s) with a non-binary extractive_match (e.g. 0.5) skipped" in warning
    sub = result.subtasks.set_index(["subtask", "seed"])
    assert sub.loc[("mmlu_abstract_algebra", "0"), "n"] == 5 and sub["n_unpaired_before"].sum() == 1
