"""The inspect_ai source on evaluation logs written by inspect_ai 0.3.285 itself.

The fixtures (``tests/fixtures/inspect``) come from ``scripts/make_inspect_fixtures.py``: two
multiple-choice tasks run by ``eval()`` against a ``mockllm`` model whose replies follow the script's
PATTERNS table, so the transitions below are worked by hand from that table. ``before_*`` set the seed
with ``eval(seed=0)``, ``after_*`` with the model's ``GenerateConfig(seed=0)``; ``after_eval`` is an
``eval_set`` folder.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval import pair
from postforget_lmeval.pairing.results import PairingError
from postforget_lmeval.report.files import write_outputs
from postforget_lmeval.sources import Problem, ReadRequest, TaskRun, detect
from postforget_lmeval.sources import item_id as doc_id
from postforget_lmeval.sources._inspect import SOURCE
from postforget_lmeval.sources._inspect_log import subtask_and_category
from tests.helpers import paths
from tests.helpers.lmeval_runs import pf_record, sample_line, write_run
from tests.sources.inspect_logs import byte_not_utf8_in_last_sample, changed_capitals

inspect_log = pytest.importorskip("inspect_ai.log", reason="the inspect extra is not installed")

FIXTURES = paths.FIXTURES / "inspect"
SIDES = {"before": ("before_eval", "before_json"), "after": ("after_eval", "after_json")}
CAPITALS, ALGEBRA = "synth_capitals", "mmlu_abstract_algebra"
# (n_11, n_10, n_01, n_00) per (subtask, seed), from PATTERNS:
# capitals  before C C C I C I(no ANSWER line), after C I N(empty reply) C C C;
# algebra   epoch 1 before C C I C, after I C C C; epoch 2 before C I I C, after C C I N: the two epochs are
# replicates under seed 0 (2 1 1 0 and 1 1 1 1), counted together.
TRANSITIONS = {(CAPITALS, "0"): (2, 2, 2, 0), (ALGEBRA, "0"): (3, 2, 2, 1)}


def test_a_log_is_read_whole_into_its_task_run_rows_notes_and_info():
    """Every field of the task run a log's header gives and every column of its rows, one epoch and two."""
    found = SOURCE.find_runs(FIXTURES / "before_eval")
    algebra, capitals = found.task_runs
    for run, log in ((algebra, next((FIXTURES / "before_eval").glob("*abstract-algebra*.eval"))),
                     (capitals, next((FIXTURES / "before_eval").glob("*synth-capitals*.eval")))):  # fmt: skip
        epochs, ids = (2, 4) if run is algebra else (1, 6)
        assert run == TaskRun(
            task=run.task, results_path=log, date="2026-11-25T20:47:25+00:00", samples_path=log, seed=0,
            seed_source="plan.config.seed", output_type="generate_until", filters=("none",), metrics=("choice",),
            group=None, n_expected=ids * epochs, repeats=epochs, self_scored=True, max_gen_toks=None,
            samples_bytes=log.stat().st_size, unusable=None,
        )  # fmt: skip
    requests = [ReadRequest(r, None, None) for r in (algebra, capitals)]
    read_algebra, read_capitals = SOURCE.read(requests, 1, None)
    assert [r.request for r in (read_algebra, read_capitals)] == requests
    assert (read_capitals.rows.run, read_capitals.rows.file) == (capitals, str(capitals.samples_path))
    assert read_capitals.rows.columns == {
        "doc_id": [1, 2, 3, 4, 5, 6], "doc_hash": read_capitals.rows.columns["doc_hash"],
        "replicate": [0] * 6, "correct": [1, 1, 1, 0, 1, 0], "k": [3.0] * 6,
        "answer": ["A", "C", "B", "B", "B", None], "gold": ["A", "C", "B", "A", "B", "C"],
        "status": ["answered"] * 5 + ["no_answer"], "locator": [0, 1, 2, 3, 4, 5],
        "response_chars": [50.0] * 5 + [float(len("I am not sure which one it is."))],
        "subtask": [CAPITALS] * 6, "category": [CAPITALS] * 6,
    }  # fmt: skip
    # an item's hash is its question, options and gold as UTF-8 JSON: the same item on either side and harness
    item = json.dumps(["What is the capital of Broutregoth?", ["Vell", "Sarn", "Ilo"], "A"]).encode()
    hashes = read_capitals.rows.columns["doc_hash"]
    assert hashes[0] == hashlib.sha256(item).hexdigest() and len(set(hashes)) == 6
    assert (read_capitals.problems, read_capitals.notes) == ([], [])
    assert read_capitals.info == {"filter": "none", "metric": "choice", "lines": 6, "items": 6, "extractors": []}
    columns = read_algebra.rows.columns
    assert columns["doc_id"] == [doc_id(f"aa-{i}") for i in (1, 2, 3, 4)] * 2
    assert columns["doc_hash"][:4] == columns["doc_hash"][4:] and len(set(columns["doc_hash"])) == 4
    assert (columns["replicate"], columns["locator"]) == ([0] * 4 + [1] * 4, [0, 1, 2, 3] * 2)
    assert (columns["correct"], columns["answer"]) == ([1, 1, 0, 1, 1, 0, 0, 1], [*"CBBBCCBB"])
    assert (columns["gold"], columns["k"], columns["subtask"]) == ([*"CBAB"] * 2, [4.0] * 8, [ALGEBRA] * 8)
    assert read_algebra.notes == [
        "task mmlu_reasoning_letter:abstract_algebra_5_shots ran 2 epochs: each epoch is a replicate, paired epoch "
        "by epoch"
    ]
    assert read_algebra.info == {"filter": "none", "metric": "choice", "lines": 8, "items": 4, "extractors": []}


@pytest.mark.parametrize("folder", [*SIDES["before"], *SIDES["after"]])
def test_finds_one_run_per_log_with_task_from_the_header_and_seed_where_the_run_set_it(folder):
    assert detect(FIXTURES / folder).name == "inspect"
    found = SOURCE.find_runs(FIXTURES / folder)
    assert found.problems == []  # eval_set's logs.json, eval-set.json and .eval-set-id are not logs
    runs = {r.task: r for r in found.task_runs}
    assert sorted(runs) == ["mmlu_reasoning_letter:abstract_algebra_5_shots", CAPITALS]
    source = "plan.config.seed" if folder.startswith("before") else "eval.model_generate_config.seed"
    assert {(r.seed, r.seed_source) for r in runs.values()} == {(0, source)}  # seed 0 is a real seed
    assert runs[CAPITALS].repeats == 1 and runs[CAPITALS].n_expected == 6
    assert runs["mmlu_reasoning_letter:abstract_algebra_5_shots"].repeats == 2
    assert runs["mmlu_reasoning_letter:abstract_algebra_5_shots"].n_expected == 8


def test_lighteval_inspect_task_names_map_onto_the_catalog():
    assert subtask_and_category("mmlu_reasoning_letter:abstract_algebra_5_shots") == (ALGEBRA, "Math")
    assert subtask_and_category("bbh_reasoning_letter:causal_judgment") == ("bbh_causal_judgement", "Logic")
    assert subtask_and_category(CAPITALS) == (CAPITALS, CAPITALS)
    assert subtask_and_category("many_shots") == ("many_shots", "many_shots")


@pytest.mark.parametrize("before", SIDES["before"])
@pytest.mark.parametrize("after", SIDES["after"])
def test_eval_and_json_logs_pair_alike_with_each_epoch_a_replicate(before, after):
    result = pair(FIXTURES / before, FIXTURES / after)
    sub = result.subtasks.set_index(["subtask", "seed"])
    got = {key: tuple(int(v) for v in sub.loc[key, ["n_11", "n_10", "n_01", "n_00"]]) for key in TRANSITIONS}
    assert got == TRANSITIONS and len(sub) == 2
    assert sub.loc[(CAPITALS, "0"), "k"] == 3 and sub.loc[(ALGEBRA, "0"), "k"] == 4
    assert sub["replicates"].to_dict() == {(ALGEBRA, "0"): 2, (CAPITALS, "0"): 1}
    # the rates are the mean of the epochs' (each 1/4 forgotten, 1/4 gained; accuracy before 3/4 and 2/4)
    assert sub.loc[(ALGEBRA, "0"), ["F", "BT", "acc_before", "acc_after"]].tolist() == [0.25, 0.25, 0.625, 0.625]
    # an N (empty reply) and a reply without an ANSWER line are incorrect, unanswered, and stay in n
    assert sub.loc[(CAPITALS, "0"), ["n", "unanswered_before", "unanswered_after"]].tolist() == [6, 1, 1]
    assert sub.loc[(ALGEBRA, "0"), ["n", "unanswered_before", "unanswered_after"]].tolist() == [8, 0, 1]
    # one seed: the counts say so, and the epochs make no spread across seeds and no all-seeds-agree row
    overall = result.categories.query("average == 'macro' and category == 'OVERALL'").iloc[0]
    assert overall["n_seeds"] == 1 and np.isnan(overall["F_true_std"])
    assert result.summary["totals"]["seeds"] == ["0"] and result.agreement.empty
    assert result.summary["subtasks"][ALGEBRA]["replicates"] == 2
    s = result.samples
    algebra = s[s["subtask"] == ALGEBRA]
    assert sorted(algebra["replicate"].tolist()) == [0] * 4 + [1] * 4
    aa1 = algebra[algebra["doc_id"] == doc_id("aa-1")].set_index("replicate")
    assert aa1["transition"].tolist() == ["1->0", "1->1"]  # epoch 1: before right, after wrong; epoch 2: both right


@pytest.mark.parametrize("folder", ["before_eval", "after_json"])
def test_samples_streamed_one_at_a_time_are_those_inspect_ai_reads_whole(folder):
    """The stream (zip members, or the JSON array item by item) gives inspect_ai's own samples and scores."""
    runs = SOURCE.find_runs(FIXTURES / folder).task_runs
    for run, read in zip(runs, SOURCE.read([ReadRequest(r, None, None) for r in runs], 1, None)):
        whole = inspect_log.read_eval_log(str(run.samples_path)).samples
        expected = sorted((doc_id(s.id), s.epoch - 1, int(s.scores["choice"].value == "C")) for s in whole)
        items = read.items
        assert sorted(zip(items["doc_id"], items["replicate"], items["correct"])) == expected
        assert read.problems == []
    assert sum(len(r.rows) for r in SOURCE.read([ReadRequest(r, None, None) for r in runs], 1, None)) == 14


def test_strict_rescoring_reads_the_answer_inspect_choice_scored():
    s = pair(FIXTURES / "before_eval", FIXTURES / "after_json", rescore="strict").samples
    assert (s["before"] == s["correct_logged_before"]).all() and (s["after"] == s["correct_logged_after"]).all()
    capitals = s[s["subtask"] == CAPITALS].set_index("doc_id")
    assert capitals.loc[6, "status_before"] == "no_answer" and capitals.loc[3, "status_after"] == "no_answer"
    assert capitals.loc[2, ["answer_before", "answer_after"]].tolist() == ["C", "A"]


def test_load_item_reads_the_question_options_and_every_epoch():
    run = next(r for r in SOURCE.find_runs(FIXTURES / "before_json").task_runs if r.repeats == 2)
    items = SOURCE.read([ReadRequest(run, None, None)], 1, None)[0].items
    row = items[items["doc_id"] == doc_id("aa-2")].iloc[0]
    item = SOURCE.load_item(str(row["file"]), int(row["locator"]))
    assert item.question == "How many elements does the symmetric group S_3 have?"
    assert item.options == ["3", "6", "9", "12"] and item.gold == "B" and item.doc_id == row["doc_id"]
    assert [r[-1] for r in item.responses] == ["B", "C"]  # epoch 1 right, epoch 2 wrong
    assert item.prompt.startswith("Answer the following multiple choice question.") and "A) 3" in item.prompt
    assert item.doc == {"id": "aa-2", "metadata": {}}


def test_show_prints_the_question_of_a_forgotten_item(tmp_path, capsys):
    from postforget_lmeval.cli import main

    out = tmp_path / "out"
    runs = [str(FIXTURES / "before_eval"), str(FIXTURES / "after_json")]
    assert main([*runs, "-o", str(out), "--format", "inspect", "--no-plot", "-q"]) == 0
    capsys.readouterr()
    assert main(["show", str(out), "--subtask", CAPITALS, "--responses"]) == 0
    printed = capsys.readouterr().out
    assert "2 forgotten item(s) of synth_capitals" in printed
    assert "What is the capital of Maxtrandia?" in printed and "C) Ust" in printed
    assert "What is the capital of Oskelan?" in printed


def _lmeval_twin(root: Path) -> None:
    """lm-eval runs carrying the inspect logs' answers, read with inspect_ai's own reader: one postforget record
    per sample and epoch (lm-eval repeats), the same replies, gold, k and answer."""
    for side, folder in (("before", "before_eval"), ("after", "after_eval")):
        tasks = {}
        for path in sorted((FIXTURES / folder).glob("*.eval")):
            log = inspect_log.read_eval_log(str(path))
            subtask, category = subtask_and_category(log.eval.task)
            by_id: dict[object, list] = {}
            for s in sorted(log.samples, key=lambda s: s.epoch):
                by_id.setdefault(s.id, []).append(s)
            lines = []
            for sid, epochs in by_id.items():
                records = []
                for s in epochs:
                    score = s.scores["choice"]
                    answer = score.answer or None
                    rec = pf_record(subtask, int(score.value == "C"), k=len(s.choices), answer=answer,
                                    status="answered" if answer else "no_answer", category=category)  # fmt: skip
                    records.append({**rec, "gold": s.target})
                sample = json.loads(sample_line(doc_id(sid), None, record=records))
                sample["resps"] = [[s.output.completion for s in epochs]]
                lines.append(json.dumps(sample, ensure_ascii=False) + "\n")
            tasks[f"postforget_{subtask}"] = lines
        write_run(root / side, tasks, seed=0)


def test_inspect_and_lmeval_runs_with_the_same_answers_give_identical_subtasks_csv(tmp_path):
    _lmeval_twin(tmp_path / "lmeval")
    roots = {"inspect": FIXTURES, "lmeval": tmp_path / "lmeval"}
    sides = {"inspect": ("before_eval", "after_eval"), "lmeval": ("before", "after")}
    for name, root in roots.items():
        write_outputs(pair(*(root / side for side in sides[name])), tmp_path / f"out_{name}", plot=False)
    ins, lm = (pd.read_csv(tmp_path / f"out_{name}" / "subtasks.csv") for name in roots)
    assert len(ins) == 2 and ins["n"].sum() == 14 and ins["replicates"].tolist() == [2, 1]
    assert (ins["task_before"] != lm["task_before"]).all()  # the harness's task names: necessarily different
    naming = ["task_before", "task_after"]
    pd.testing.assert_frame_equal(ins.drop(columns=naming), lm.drop(columns=naming))  # every other column
    assert set(ins["median_chars_before"]) == {float(len("Let me think about each option in turn.\n\nANSWER: X"))}


def test_a_log_without_samples_is_an_error_naming_the_file_and_the_option(tmp_path):
    with pytest.raises(PairingError) as e:
        pair(FIXTURES / "bad" / "no_samples", FIXTURES / "after_eval")
    (log,) = (FIXTURES / "bad" / "no_samples").glob("*.eval")
    assert str(log) in str(e.value) and "--no-log-samples" in str(e.value)
    (run,) = SOURCE.find_runs(FIXTURES / "bad" / "no_samples").task_runs
    assert run.unusable == (
        "holds no samples (the run was made with --no-log-samples / log_samples=False): re-run the task without it "
        "to pair its items"
    )


def no_scorer(logged: str) -> str:
    """The problem of the capitals task when no scorer logs correct/incorrect values; ``logged``: the scorers it has."""
    return (
        "task synth_capitals has no multiple-choice scorer (one whose values are correct/incorrect; logged: "
        f"{logged}): score the task with inspect_ai's choice() (or another C/I scorer) to pair it"
    )


def test_a_task_without_a_multiple_choice_scorer_is_an_error_naming_the_file_and_the_scorer():
    with pytest.raises(PairingError) as e:
        pair(FIXTURES / "bad" / "no_binary_scorer", FIXTURES / "after_eval")
    (log,) = (FIXTURES / "bad" / "no_binary_scorer").glob("*.eval")
    assert str(log) in str(e.value) and "no multiple-choice scorer" in str(e.value) and "choice()" in str(e.value)
    assert "overlap" in str(e.value)  # the scorer it logged
    (run,) = SOURCE.find_runs(FIXTURES / "bad" / "no_binary_scorer").task_runs
    (read,) = SOURCE.read([ReadRequest(run, None, None)], 1, None)
    assert read.problems == [Problem(str(log), no_scorer("overlap"), "no_metric", 6)]
    assert len(read.rows) == 0 and read.info == {"filter": "none", "metric": None, "lines": 0, "items": 0,
                                                 "extractors": []}  # fmt: skip


@pytest.mark.parametrize("sort_keys", [False, True])  # sorted: inspect_ai's header reader stops at "samples"
def test_a_log_of_a_newer_format_version_is_reported_with_what_to_do(tmp_path, sort_keys):
    import inspect_ai

    shutil.copytree(FIXTURES / "before_json", tmp_path / "before")
    newer = next((tmp_path / "before").glob("*synth-capitals*.json"))
    data = json.loads(newer.read_text(encoding="utf-8"))
    newer.write_text(json.dumps({**data, "version": 99}, sort_keys=sort_keys), encoding="utf-8")
    found = SOURCE.find_runs(tmp_path / "before")
    assert [r.task for r in found.task_runs] == ["mmlu_reasoning_letter:abstract_algebra_5_shots"]
    (problem,) = found.problems
    assert problem == {"path": str(newer), "problem": (
        f"cannot be read by the installed inspect_ai {inspect_ai.__version__} (Unable to read version 99 of log "
        "format.); the log was written by a newer inspect_ai: upgrade it (pip install -U inspect-ai)"
    )}  # fmt: skip


def test_without_inspect_ai_a_folder_of_logs_gets_the_extra_to_install(monkeypatch):
    runs = SOURCE.find_runs(FIXTURES / "before_eval").task_runs
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # import inspect_ai now fails, as when not installed
    assert detect(FIXTURES / "before_eval").name == "inspect"  # recognised from the files' first bytes
    with pytest.raises(PairingError, match=r"postforget-lmeval\[inspect\]"):
        pair(FIXTURES / "before_eval", FIXTURES / "after_eval")
    # finding the runs, reading one and showing an item: each names the log it could not read
    for log, read in ((runs[0].samples_path, lambda: SOURCE.find_runs(FIXTURES / "before_eval")),
                      (runs[1].samples_path, lambda: SOURCE.read([ReadRequest(runs[1], None, None)], 1, None)),
                      (runs[1].samples_path, lambda: SOURCE.load_item(str(runs[1].samples_path), 0))):  # fmt: skip
        with pytest.raises(PairingError) as e:
            read()
        assert str(e.value) == (
            f"{log} is an inspect_ai evaluation log, but inspect_ai is not installed (import of inspect_ai halted; "
            "None in sys.modules): pip install 'postforget-lmeval[inspect]'"
        )


def test_a_folder_is_inspect_only_where_a_file_opens_like_a_log_under_a_log_name(tmp_path):
    """A copy with another suffix and a link to a file that is gone are not logs; an empty folder holds none."""
    assert not SOURCE.matches(tmp_path)
    log = next((FIXTURES / "before_json").glob("*synth-capitals*.json"))
    shutil.copy(log, tmp_path / f"{log.name}.bak")  # opens like a log, but is not named like one
    (tmp_path / "gone.json").symlink_to(tmp_path / "deleted.json")
    assert not SOURCE.matches(tmp_path)
    found = SOURCE.find_runs(tmp_path)
    assert (found.task_runs, found.problems) == ([], [])
    shutil.copy(log, tmp_path / log.name)
    assert SOURCE.matches(tmp_path) and [r.task for r in SOURCE.find_runs(tmp_path).task_runs] == [CAPITALS]


def test_a_link_back_into_the_searched_folder_is_noted_and_its_logs_read_once(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path)  # searched before b/, so the loop is met before any log
    shutil.copytree(FIXTURES / "before_eval", tmp_path / "b")
    assert SOURCE.matches(tmp_path)
    found = SOURCE.find_runs(tmp_path)
    assert sorted(r.task for r in found.task_runs) == ["mmlu_reasoning_letter:abstract_algebra_5_shots", CAPITALS]
    assert found.notes == [f"{tmp_path / 'a'} is a link to {tmp_path}, already searched; not read twice"]


def test_a_file_that_opens_like_a_log_but_inspect_ai_cannot_read_is_a_problem_naming_it(tmp_path):
    shutil.copytree(FIXTURES / "before_eval", tmp_path / "before")
    broken, cut = tmp_path / "before" / "broken.eval", tmp_path / "before" / "cut.json"
    broken.write_bytes(b"PK\x03\x04 cut short")  # a zip's first bytes, no archive after them
    cut.write_text('{"version": 2, "status": "success", "eval": {')
    found = SOURCE.find_runs(tmp_path / "before")
    assert len(found.task_runs) == 2
    assert found.problems == [
        {"path": str(broken), "problem": "is not a readable inspect_ai log: EOCD not found"},
        {"path": str(cut), "problem": f"is not a readable inspect_ai log: Unable to read log file: {cut}"},
    ]


def test_a_sorted_keys_log_with_bytes_that_are_not_utf8_is_a_problem_with_ijsons_reason(tmp_path):
    """The header around the samples is parsed from the file's bytes (not text decoded by the locale), so a byte that
    is not UTF-8 in its last sample, past what inspect_ai's own header reader reads, is ijson's lexical error."""
    shutil.copytree(FIXTURES / "before_json", tmp_path / "before")
    log = next((tmp_path / "before").glob("*synth-capitals*.json"))
    text = json.dumps(json.loads(log.read_text(encoding="utf-8")), sort_keys=True, indent=2).encode()
    log.write_bytes(byte_not_utf8_in_last_sample(text))
    found = SOURCE.find_runs(tmp_path / "before")
    assert [r.task for r in found.task_runs] == ["mmlu_reasoning_letter:abstract_algebra_5_shots"]
    (problem,) = found.problems
    assert problem["path"] == str(log)
    assert problem["problem"].startswith(
        "is not a readable inspect_ai log: lexical error: invalid bytes in UTF8 string."
    )


def test_reading_tells_progress_the_bytes_read_after_each_log():
    runs = SOURCE.find_runs(FIXTURES / "before_eval").task_runs
    told: list[tuple[int, int]] = []
    SOURCE.read([ReadRequest(r, None, None) for r in runs], 1, lambda done, total: told.append((done, total)))
    first, total = runs[0].samples_bytes, sum(r.samples_bytes for r in runs)
    assert first > 0 and told == [(first, total), (total, total)]


def _stopped_at_the_budget(sample: dict) -> None:
    sample["output"]["choices"][0]["stop_reason"] = "max_tokens"


def test_a_reply_cut_at_the_token_budget_without_an_answer_is_unfinished_unless_scored_no_answer(tmp_path):
    def no_answer(sample: dict) -> None:  # what choice() logs for an empty reply
        _stopped_at_the_budget(sample)
        sample["scores"]["choice"].update(value="N", answer="")

    _, read = changed_capitals(tmp_path, {
        "samples/4_epoch_1.json": _stopped_at_the_budget, "samples/5_epoch_1.json": no_answer,
        "samples/6_epoch_1.json": _stopped_at_the_budget,
    })  # fmt: skip
    columns = read.rows.columns
    assert columns["status"] == ["answered"] * 4 + ["no_answer", "unfinished"]
    assert (columns["answer"], columns["correct"]) == (["A", "C", "B", "B", None, None], [1, 1, 1, 0, 0, 0])


def test_samples_without_a_correct_incorrect_value_of_the_scorer_are_skipped_and_counted(tmp_path):
    def several_values(sample: dict) -> None:
        sample["scores"]["choice"]["value"] = ["C", "I"]

    log, read = changed_capitals(tmp_path, {
        "samples/2_epoch_1.json": several_values, "samples/4_epoch_1.json": lambda sample: sample.update(scores=None),
    })  # fmt: skip
    assert read.problems == [Problem(str(log), "2 sample(s) without a correct/incorrect choice score skipped",
                                     "non_binary", 2)]  # fmt: skip
    assert (read.rows.columns["doc_id"], read.rows.columns["correct"]) == ([1, 3, 5, 6], [1, 1, 1, 0])


def test_samples_without_any_score_name_no_scorer(tmp_path):
    log, read = changed_capitals(
        tmp_path,
        {f"samples/{i}_epoch_1.json": lambda s: s.update(scores=None) for i in range(1, 7)},
    )
    assert read.problems == [Problem(str(log), no_scorer("none"), "no_metric", 6)]


def test_an_input_of_chat_messages_is_their_texts_line_by_line_in_the_hash_and_the_question(tmp_path):
    """inspect_ai logs a sample made from messages with ``input`` as the list; its hash is the UTF-8 JSON."""
    messages = [
        {"role": "system", "content": "Réponds d'un mot."},
        {"role": "user", "content": "Capitale de Broutregoth ?"},
    ]
    log, read = changed_capitals(tmp_path,
                               {"samples/1_epoch_1.json": lambda sample: sample.update(input=messages)})  # fmt: skip
    question = "Réponds d'un mot.\nCapitale de Broutregoth ?"
    item = json.dumps([question, ["Vell", "Sarn", "Ilo"], "A"], ensure_ascii=False).encode("utf-8")
    assert read.rows.columns["doc_hash"][0] == hashlib.sha256(item).hexdigest()
    assert SOURCE.load_item(str(log), 0).question == question


def _replied(text: str, **fields) -> Callable[[dict], None]:
    """A sample change: the model replied ``text``; ``fields`` of the sample set too."""

    def change(sample: dict) -> None:
        sample["output"]["completion"] = sample["output"]["choices"][0]["message"]["content"] = text
        sample.update(fields)

    return change


def test_rescoring_reads_letters_where_the_target_is_several_and_keeps_the_logged_score_without_options(tmp_path):
    log, read = changed_capitals(tmp_path, {
        "samples/1_epoch_1.json": _replied("ANSWER: A, C", target=["A", "C"]),  # gold AC: read as letters, right
        "samples/2_epoch_1.json": _replied("ANSWER: A, C"),  # gold C: one letter expected, two given: no answer
        "samples/4_epoch_1.json": _replied("ANSWER: B", choices=None),  # no options to rescore against
        "samples/5_epoch_1.json": _replied("ANSWER: B", choices=None),
    }, rescore="strict")  # fmt: skip
    columns = read.rows.columns
    assert columns["answer"] == ["AC", None, "B", "B", "B", None]
    assert columns["status"] == ["answered", "no_answer", "answered", "answered", "answered", "no_answer"]
    assert (columns["correct"], columns["correct_logged"]) == ([1, 0, 1, 0, 1, 0], [1, 1, 1, 0, 1, 0])
    assert (columns["gold"][0], columns["k"][:3], [math.isnan(k) for k in columns["k"][3:]]) == (
        "AC",
        [3.0] * 3,
        [True, True, False],
    )
    assert read.problems == [Problem(str(log), "2 sample(s) cannot be rescored (no choices, target or response "
                                     "logged); their logged score is used", "not_rescored", 2)]  # fmt: skip


def test_a_task_with_several_graded_scorers_names_each_in_the_no_scorer_problem(tmp_path):
    def graded(sample: dict) -> None:
        choice = sample["scores"]["choice"]
        sample["scores"] = {"overlap": dict(choice, value=0.5), "bleu": dict(choice, value=0.25)}

    log, read = changed_capitals(tmp_path,
                               {f"samples/{i}_epoch_1.json": graded for i in range(1, 7)})  # fmt: skip
    assert [p.message for p in read.problems] == [no_scorer("bleu, overlap")]
