"""Items on one side only: the warning gives the fix for the cause, not always "(same --limit)".

On inspect_ai's own logs (``tests/fixtures/inspect``) with zip members changed: an after side that ran one epoch
where before ran two, and an after side whose sample ids are strings where before's are numbers; and a real
lm-eval run with a line left out, for the plain case of different items.
"""

from __future__ import annotations

import json
import shutil

import pytest

from postforget_lmeval import pair
from tests.sources.inspect_logs import ALGEBRA_LOG, CAPITALS_LOG, copy_side, edit_json, rewrite

pytest.importorskip("inspect_ai.log", reason="the inspect extra is not installed")


def _warning(tmp_path, log: str, changes: dict, subtask: str) -> str:
    """The one unpaired-items warning of ``subtask`` when after's ``log`` has its members changed."""
    before, after = copy_side("before_eval", tmp_path / "before"), copy_side("after_eval", tmp_path / "after")
    rewrite(next(after.glob(log)), changes)
    (warning,) = [w for w in pair(before, after, analyses=False).warnings if w.startswith(f"{subtask} seed ")]
    return warning


def test_a_side_with_fewer_epochs_is_told_to_run_the_same_number_of_epochs(tmp_path):
    one_epoch = {f"samples/aa-{i}_epoch_2.json": lambda _: None for i in range(1, 5)}
    one_epoch["header.json"] = edit_json(lambda d: d["eval"]["config"].update(epochs=1))
    warning = _warning(tmp_path, ALGEBRA_LOG, one_epoch, "mmlu_abstract_algebra")
    assert warning.startswith("mmlu_abstract_algebra seed 0 replicate 1: 4 item(s) only on the before side")
    assert warning.endswith(
        "(0 paired): replicate 1 exists on the before side only: the sides ran different numbers of epochs "
        "(inspect_ai --epochs) or repeats (lm-eval); run both with the same number"
    )


def test_ids_that_are_numbers_on_one_side_and_strings_on_the_other_are_named_as_the_cause(tmp_path):
    as_text = {f"samples/{i}_epoch_1.json": edit_json(lambda d: d.update(id=str(d["id"]))) for i in range(1, 7)}
    as_text["header.json"] = edit_json(lambda d: d["eval"]["dataset"].update(sample_ids=[str(i) for i in range(1, 7)]))
    warning = _warning(tmp_path, CAPITALS_LOG, as_text, "synth_capitals")
    assert warning.startswith("synth_capitals seed 0: 6 item(s) only on the before side (doc_id 1, 2, 3, 4, 5, 6)")
    assert warning.endswith(
        "(0 paired): the item ids are numbers on one side and strings on the other (an inspect_ai sample id 1 is "
        'not "1"): give the samples the same ids on both sides'
    )


def test_different_items_keep_the_limit_advice(tmp_path, reference_logs):
    copa = reference_logs / "errorbars_copa_trimmed"
    shutil.copytree(copa / "after", tmp_path / "after")
    (samples,) = (tmp_path / "after").rglob("samples_copa_*.jsonl")
    lines = samples.read_text().splitlines(keepends=True)
    samples.write_text("".join(lines[:-1]))  # the last item not run
    last = json.loads(lines[-1])["doc_id"]
    (warning,) = [w for w in pair(copa / "before", tmp_path / "after", analyses=False).warnings if w.startswith("copa")]
    assert f"1 item(s) only on the before side (doc_id {last})" in warning
    assert warning.endswith("paired): run both sides on the same items (same --limit)")
