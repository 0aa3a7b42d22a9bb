"""Every error of inspect's sample reader names the file, the sample and the cause, in `pair` and in `show`.

The logs are inspect_ai's own (``tests/fixtures/inspect``) with one zip member changed (``inspect_logs``): a null
score, a null or missing id, an id that the log's ``sample_ids`` does not list, a member cut short, one whose
deflated data cannot be decoded. Before, each escaped as a traceback that named no file (pydantic's
ValidationError, KeyError, zlib.error, ijson's error); now the sample is skipped and named, and the others pair.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from postforget_lmeval import pair
from postforget_lmeval.pairing.results import PairingError
from postforget_lmeval.sources import Problem, ReadRequest
from postforget_lmeval.sources._inspect import SOURCE
from tests.helpers import paths
from tests.sources.inspect_logs import (
    ALGEBRA_LOG,
    CAPITALS_LOG,
    break_deflate,
    byte_not_utf8_in_last_sample,
    copy_side,
    edit_json,
    overstate_size,
    read_task,
    rewrite,
)

pytest.importorskip("inspect_ai.log", reason="the inspect extra is not installed")

MEMBER = "samples/aa-1_epoch_1.json"
ALGEBRA = "mmlu_reasoning_letter:abstract_algebra_5_shots"
CHANGES = {
    "null score": (edit_json(lambda d: d["scores"].update(choice=None)),
                   "scores.choice: Input should be a valid dictionary or instance of Score"),
    "null id": (edit_json(lambda d: d.update(id=None)),
                "id.int: Input should be a valid integer; id.str: Input should be a valid string"),
    "missing id": (edit_json(lambda d: d.pop("id")), "id: Field required"),
    "null id and score": (edit_json(lambda d: d.update(id=None, scores={"choice": None})),
                          "id.int: Input should be a valid integer; id.str: Input should be a valid string "
                          "(and 1 more)"),
    "not an object": (lambda data: b"null", "AttributeError: 'NoneType' object has no attribute 'items'"),
    "cut short": (lambda data: data[:100],
                  "json.decoder.JSONDecodeError: Unterminated string starting at: line 1 column 100 (char 99)"),
}  # fmt: skip


def _one_changed(tmp_path: Path, change) -> tuple[Path, Path]:
    before = copy_side("before_eval", tmp_path / "before")
    log = next(before.glob(ALGEBRA_LOG))
    rewrite(log, {MEMBER: change})
    return before, log


def _warning(result, log: Path) -> str:
    found = [w for w in result.warnings if w.startswith(f"before: {log}: ")]
    assert len(found) == 1, result.warnings
    return found[0]


@pytest.mark.parametrize("case", CHANGES)
def test_an_unreadable_sample_is_named_with_file_and_cause_and_the_others_pair(tmp_path, case):
    change, cause = CHANGES[case]
    before, log = _one_changed(tmp_path, change)
    result = pair(before, copy_side("after_eval", tmp_path / "after"), analyses=False)
    assert _warning(result, log) == (
        f"before: {log}: 1 sample(s) of task mmlu_reasoning_letter:abstract_algebra_5_shots cannot be read and are "
        f"skipped: {MEMBER}: {cause}"
    )
    algebra = result.samples[result.samples["subtask"] == "mmlu_abstract_algebra"]
    assert len(algebra) == 7  # 8 samples (4 items x 2 epochs), the unreadable one left out


def test_a_sample_whose_id_is_not_in_sample_ids_is_named_and_skipped(tmp_path):
    before, log = _one_changed(tmp_path, edit_json(lambda d: d.update(id="zz-9")))
    result = pair(before, copy_side("after_eval", tmp_path / "after"), analyses=False)
    assert _warning(result, log) == (
        f"before: {log}: 1 sample(s) of task mmlu_reasoning_letter:abstract_algebra_5_shots have an id that is not "
        f"in the log's sample_ids, so they cannot be found again; skipped: {MEMBER} (id 'zz-9')"
    )


def test_a_member_whose_compressed_data_is_corrupt_is_named_with_zlibs_error(tmp_path):
    before = copy_side("before_eval", tmp_path / "before")
    log = next(before.glob(ALGEBRA_LOG))
    rewrite(log, {})  # deflated members
    break_deflate(log, MEMBER)
    result = pair(before, copy_side("after_eval", tmp_path / "after"), analyses=False)
    assert _warning(result, log).endswith(
        f"cannot be read and are skipped: {MEMBER}: zlib.error: Error -3 while decompressing data: invalid block type"
    )


def test_show_names_the_file_the_sample_and_the_cause_of_an_item_it_cannot_read_back(tmp_path, capsys):
    from postforget_lmeval.cli import main

    before, out = copy_side("before_eval", tmp_path / "before"), tmp_path / "out"
    assert main([str(before), str(copy_side("after_eval", tmp_path / "after")), "-o", str(out), "--no-plot", "-q"]) == 0
    log = next(before.glob(CAPITALS_LOG))
    rewrite(log, {"samples/2_epoch_1.json": edit_json(lambda d: d["scores"].update(choice=None))})  # forgotten: 1->0
    capsys.readouterr()
    assert main(["show", str(out), "--subtask", "synth_capitals"]) != 0
    err = capsys.readouterr().err
    assert f"sample 2 epoch 1 of {log} cannot be read (scores.choice: Input should be a valid dictionary" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("fmt", [None, "inspect"])
def test_a_json_log_rewritten_with_sorted_keys_is_recognised_and_pairs_as_written(tmp_path, fmt):
    """Sorted keys put ``eval`` first and ``version`` last; inspect_ai's header reader stops at ``samples``."""
    before = copy_side("before_json", tmp_path / "before")
    for log in before.glob("*.json"):
        log.write_text(json.dumps(json.loads(log.read_text()), sort_keys=True, indent=2))
        assert log.read_text().startswith('{\n  "eval": {')
    after = paths.FIXTURES / "inspect" / "after_json"
    options = {"source_format": fmt} if fmt else {}
    written = pair(paths.FIXTURES / "inspect" / "before_json", after, analyses=False)
    result = pair(before, after, analyses=False, **options)
    columns = ["subtask", "seed", "n", "n_10", "n_01", "n_11", "n_00"]
    assert result.subtasks[columns].equals(written.subtasks[columns])
    assert len(result.samples) == 14 and not [w for w in result.warnings if str(before) in w]


@pytest.mark.parametrize("sort_keys", [False, True])
def test_a_json_log_re_indented_deeply_is_still_recognised(tmp_path, sort_keys):
    before = copy_side("before_json", tmp_path / "before")
    for log in before.glob("*.json"):
        log.write_text(json.dumps(json.loads(log.read_text()), sort_keys=sort_keys, indent=40))
    assert sorted(r.task for r in SOURCE.find_runs(before).task_runs) == [
        "mmlu_reasoning_letter:abstract_algebra_5_shots",
        "synth_capitals",
    ]


def test_a_folder_without_logs_read_as_inspect_is_told_where_inspect_writes_them(tmp_path):
    for side in ("before", "after"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "notes.json").write_text('{"note": 1}')
    with pytest.raises(PairingError) as e:
        pair(tmp_path / "before", tmp_path / "after", source_format="inspect")
    assert str(e.value).endswith(": point at the --log-dir of an `inspect eval` run (or of eval_set)")
    assert "lm_eval" not in str(e.value)


def test_an_unreadable_sample_of_a_json_log_is_named_by_its_place(tmp_path):
    before = copy_side("before_json", tmp_path / "before")
    log = next(before.glob("*synth-capitals*.json"))
    doc = json.loads(log.read_text())
    doc["samples"][1]["scores"]["choice"] = None
    log.write_text(json.dumps(doc, indent=2))
    result = pair(before, paths.FIXTURES / "inspect" / "after_json", analyses=False)
    assert _warning(result, log) == (
        f"before: {log}: 1 sample(s) of task synth_capitals cannot be read and are skipped: samples[1]: "
        "scores.choice: Input should be a valid dictionary or instance of Score"
    )
    assert len(result.samples[result.samples["subtask"] == "synth_capitals"]) == 5


def test_a_member_cut_short_is_named_with_zipfiles_bare_eoferror(tmp_path):
    before = copy_side("before_eval", tmp_path / "before")
    log = next(before.glob(ALGEBRA_LOG))
    overstate_size(log, MEMBER)
    result = pair(before, copy_side("after_eval", tmp_path / "after"), analyses=False)
    assert _warning(result, log).endswith(f"cannot be read and are skipped: {MEMBER}: EOFError")
    assert len(result.samples[result.samples["subtask"] == "mmlu_abstract_algebra"]) == 7


def test_a_sorted_keys_log_from_a_newer_inspect_ai_is_read_as_inspect_ai_reads_it(tmp_path):
    """A generation option the installed inspect_ai does not know is dropped, as inspect_ai drops it reading a log."""
    before = copy_side("before_json", tmp_path / "before")
    log = next(before.glob("*synth-capitals*.json"))
    doc = json.loads(log.read_text())
    doc["eval"]["model_generate_config"]["option_of_a_newer_inspect_ai"] = 1
    log.write_text(json.dumps(doc, sort_keys=True))
    found = SOURCE.find_runs(before)
    assert found.problems == [] and sorted(r.task for r in found.task_runs) == [
        "mmlu_reasoning_letter:abstract_algebra_5_shots", "synth_capitals"
    ]  # fmt: skip


def test_a_json_log_with_a_byte_that_is_not_utf8_in_a_sample_is_read_up_to_it_with_ijsons_reason(tmp_path):
    """A ``.json`` log's samples are parsed from the file's bytes (not text decoded by the locale): the samples before
    the byte are read, and the warning gives ijson's reason and place."""
    before = copy_side("before_json", tmp_path / "before")
    log = next(before.glob("*synth-capitals*.json"))
    log.write_bytes(byte_not_utf8_in_last_sample(log.read_bytes()))
    result = pair(before, copy_side("after_json", tmp_path / "after"), analyses=False)
    (warning,) = [w for w in result.warnings if w.startswith(f"before: {log}: cannot be read past")]
    assert warning.startswith(
        f"before: {log}: cannot be read past its first 5 sample(s) (ijson.common.IncompleteJSONError: "
        "lexical error: invalid bytes in UTF8 string.); the rest of task synth_capitals is not read"
    )
    assert warning.endswith("); the rest of task synth_capitals is not read")


def test_a_header_without_sample_ids_or_results_gives_no_rows_and_says_why(tmp_path):
    """A log of an old inspect_ai lacks ``sample_ids``; one of a run still going has no ``results`` yet."""
    before = copy_side("before_eval", tmp_path / "before")
    log = next(before.glob(CAPITALS_LOG))
    rewrite(log, {"header.json": edit_json(lambda d: (d["eval"]["dataset"].update(sample_ids=None),
                                                      d.update(results=None)))})  # fmt: skip
    run, read = read_task(before)
    assert (run.n_expected, run.metrics) == (None, ())
    assert read.rows.columns == {"doc_id": [], "doc_hash": [], "correct": [], "locator": []}
    assert (read.request, read.rows.run, read.rows.file) == (ReadRequest(run, None, None), run, str(log))
    assert read.problems == [Problem(str(log), (
        "lists no sample_ids, so its samples cannot be found again; task synth_capitals skipped (reading the log with "
        "inspect_ai and writing it back adds them)"))]  # fmt: skip


def test_unreadable_and_unlisted_samples_are_counted_and_the_first_three_named(tmp_path):
    before = copy_side("before_eval", tmp_path / "before")
    log = next(before.glob(ALGEBRA_LOG))
    changes = {f"samples/aa-{i}_epoch_1.json": CHANGES["null score"][0] for i in (1, 2, 3, 4)}
    for i in (1, 2, 3):
        changes[f"samples/aa-{i}_epoch_2.json"] = edit_json(lambda d, i=i: d.update(id=f"zz-{i}"))
    rewrite(log, changes)
    _, read = read_task(before, ALGEBRA)
    cause = CHANGES["null score"][1]
    assert read.problems == [
        Problem(str(log), f"4 sample(s) of task {ALGEBRA} cannot be read and are skipped: samples/aa-1_epoch_1.json: "
                f"{cause}; samples/aa-2_epoch_1.json: {cause}; samples/aa-3_epoch_1.json: {cause}; ... (1 more)",
                "malformed", 4),
        Problem(str(log), f"3 sample(s) of task {ALGEBRA} have an id that is not in the log's sample_ids, so they "
                "cannot be found again; skipped: samples/aa-1_epoch_2.json (id 'zz-1'); samples/aa-2_epoch_2.json "
                "(id 'zz-2'); samples/aa-3_epoch_2.json (id 'zz-3')", "malformed", 3),
    ]  # fmt: skip
    assert (read.rows.columns["locator"], read.rows.columns["replicate"], read.info["lines"]) == ([3], [1], 1)


def test_a_json_log_cut_short_counts_the_samples_before_the_cut_and_the_ones_missing(tmp_path):
    """Samples read, one unreadable, the rest past a byte that is not UTF-8: 5 of the 6 planned samples are held."""
    before = copy_side("before_json", tmp_path / "before")
    log = next(before.glob("*synth-capitals*.json"))
    doc = json.loads(log.read_text())
    doc["samples"][1]["scores"]["choice"] = None
    log.write_bytes(byte_not_utf8_in_last_sample(json.dumps(doc, indent=2).encode()))
    _, read = read_task(before)
    cut, unreadable, incomplete = read.problems
    assert (cut.path, cut.kind, cut.count) == (str(log), "unreadable", 1)
    assert cut.message.startswith(
        "cannot be read past its first 5 sample(s) (ijson.common.IncompleteJSONError: lexical error: invalid bytes "
        "in UTF8 string.); the rest of task synth_capitals is not read"
    )
    assert unreadable == Problem(str(log), "1 sample(s) of task synth_capitals cannot be read and are skipped: "
                                 f"samples[1]: {CHANGES['null score'][1]}", "malformed", 1)  # fmt: skip
    assert incomplete == Problem(str(log), "holds 5 of the 6 samples inspect_ai planned (status success)", "incomplete")
    assert read.rows.columns["doc_id"] == [1, 3, 4, 5]


def test_a_log_missing_samples_says_how_many_of_those_planned_it_holds(tmp_path):
    """Held counts the samples read, unreadable and unlisted alike: only the member left out is missing."""
    before = copy_side("before_eval", tmp_path / "before")
    log = next(before.glob(CAPITALS_LOG))
    rewrite(log, {"samples/1_epoch_1.json": CHANGES["null score"][0], "samples/6_epoch_1.json": lambda _: None,
                  "samples/2_epoch_1.json": edit_json(lambda d: d.update(id=99))})  # fmt: skip
    _, read = read_task(before)
    assert [(p.kind, p.count) for p in read.problems] == [("malformed", 1), ("malformed", 1), ("incomplete", 1)]
    assert read.problems[2].message == "holds 5 of the 6 samples inspect_ai planned (status success)"
    assert read.rows.columns["doc_id"] == [3, 4, 5]


def _cut_short_algebra(tmp_path: Path) -> Path:
    """The algebra log of a run cut short: samples aa-2 (epoch 1) and aa-4 (both epochs) never written."""
    log = next(copy_side("before_eval", tmp_path / "before").glob(ALGEBRA_LOG))
    rewrite(log, {f"samples/aa-{i}.json": lambda _: None for i in ("2_epoch_1", "4_epoch_1", "4_epoch_2")})
    return log


def test_reading_an_item_back_gives_an_epoch_a_cut_short_run_lacks_an_empty_reply(tmp_path):
    log = _cut_short_algebra(tmp_path)
    item = SOURCE.load_item(str(log), 1)
    assert item.responses == ["", "Let me think about each option in turn.\n\nANSWER: C"]
    assert (item.question, item.options, item.gold) == (
        "How many elements does the symmetric group S_3 have?",
        ["3", "6", "9", "12"],
        "B",
    )
    assert SOURCE.load_item(str(log), 0).doc == {"id": "aa-1", "metadata": {}}


def test_reading_back_an_item_no_epoch_logged_or_a_position_past_the_ids_names_the_sample_or_position(tmp_path):
    log = _cut_short_algebra(tmp_path)
    with pytest.raises(IndexError) as e:
        SOURCE.load_item(str(log), 3)
    assert str(e.value) == f"no sample 'aa-4' in {log}"  # in sample_ids, in no epoch's member
    for locator in (-1, 4):
        with pytest.raises(IndexError) as e:
            SOURCE.load_item(str(log), locator)
        assert str(e.value) == f"no sample at position {locator} of {log}"


def test_a_header_without_epochs_is_one_epoch(tmp_path):
    """inspect_ai's EvalConfig allows ``epochs`` unset; the run then ran each sample once."""
    before = copy_side("before_eval", tmp_path / "before")
    log = next(before.glob(CAPITALS_LOG))
    rewrite(log, {"header.json": edit_json(lambda d: d["eval"]["config"].update(epochs=None))})
    run, read = read_task(before)
    assert (run.repeats, run.n_expected, read.rows.columns["replicate"], read.notes) == (1, 6, [0] * 6, [])
    assert SOURCE.load_item(str(log), 5).responses == ["I am not sure which one it is."]


def test_a_sample_that_failed_before_the_model_replied_is_skipped_and_the_samples_after_it_read(tmp_path):
    """inspect_ai logs a sample that errored before any reply with its error, no scores and an output without choices,
    whose ``stop_reason`` raises IndexError: it once cut the read of the log there."""

    def errored(sample: dict) -> None:
        sample["output"].update(choices=[], completion="")  # and, failing in its setup, no messages
        sample["messages"] = []
        sample.update(scores=None, error={"message": "RuntimeError: the model server went away",
                                          "traceback": "", "traceback_ansi": ""})  # fmt: skip

    before = copy_side("before_eval", tmp_path / "before")
    log = next(before.glob(CAPITALS_LOG))
    rewrite(log, {"samples/3_epoch_1.json": edit_json(errored)})
    _, read = read_task(before)
    assert read.problems == [Problem(str(log), "1 sample(s) without a correct/incorrect choice score skipped",
                                     "non_binary", 1)]  # fmt: skip
    assert read.rows.columns["doc_id"] == [1, 2, 4, 5, 6]
    item = SOURCE.load_item(str(log), 2)
    assert (item.responses, item.prompt, item.question) == ([""], None, "What is the capital of Oskelan?")


def test_a_sample_holding_an_event_of_a_newer_inspect_ai_is_read_and_read_back(tmp_path):
    """Events are not read (pairing and ``show`` need none), so a kind the installed inspect_ai does not know, which
    fails its own reader's validation, changes nothing."""

    def newer_event(sample: dict) -> None:
        sample["events"].append({"event": "event_of_a_newer_inspect_ai", "timestamp": sample["events"][0]["timestamp"]})

    before = copy_side("before_eval", tmp_path / "before")
    log = next(before.glob(CAPITALS_LOG))
    rewrite(log, {"samples/1_epoch_1.json": edit_json(newer_event)})
    _, read = read_task(before)
    assert (read.problems, read.rows.columns["doc_id"]) == ([], [1, 2, 3, 4, 5, 6])
    assert SOURCE.load_item(str(log), 0).responses == ["Let me think about each option in turn.\n\nANSWER: A"]
