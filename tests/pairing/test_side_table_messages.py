"""What one side's table says when a side cannot be used, each message whole, against hand-made runs.

The side table raises on a side with no usable sample, on a sub-benchmark that two tasks give at one
seed, and on an item whose doc_hash changed between runs; it warns about duplicated item lines. These
messages tell the user which run to fix, so each is asserted in full on a case small enough to read:
which warnings, runs, tasks and counts they name is worked out by hand below, not taken from the code.
(Mutation survivors of ``pairing.join.side_table``.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from postforget_lmeval import pair
from postforget_lmeval.errors import PairingError
from tests.helpers.lmeval_runs import doc_for, ours, pf_record, sample_line, write_run

DATE = "2025-01-01T00-00-00.000001"  # write_run's default run date, part of every samples file name


def dirs(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "before", tmp_path / "after"


def error_of(before: Path, after: Path) -> str:
    """The message of the PairingError that pairing the two directories raises."""
    with pytest.raises(PairingError) as caught:
        pair(before, after)
    return str(caught.value)


def test_a_side_without_usable_samples_lists_its_own_left_out_tasks_five_then_a_count(tmp_path):
    """Seven before tasks log no sample line, and one after task too: the error lists the first five of the
    before side's warnings (tasks read in name order, t0..t4), '; ' apart, then '... (2 more)' for t5 and
    t6. The after side's warning is not among them, nor counted."""
    b, a = dirs(tmp_path)
    write_run(b, {f"postforget_t{i}": [] for i in range(7)})
    write_run(a, {**ours("mmlu_x", "1"), "postforget_t9": []})

    def left_out(task: str) -> str:
        return f"before: task {task} left out: no usable sample in {b / 'model' / f'samples_{task}_{DATE}.jsonl'}"

    shown = "; ".join(left_out(f"postforget_t{i}") for i in range(5))
    assert error_of(b, a) == f"no usable samples on the before side: {shown}; ... (2 more)"


def test_duplicate_item_lines_are_warned_and_counted_under_their_sub_benchmark(tmp_path):
    """Items 0 and 1 of mmlu_x logged twice in one before run: one warning naming mmlu_x and 2 lines, and
    the summary counts the 2 duplicates under mmlu_x's before side."""
    b, a = dirs(tmp_path)
    lines = ours("mmlu_x", "10")["postforget_mmlu_x"]
    write_run(b, {"postforget_mmlu_x": lines + lines})
    write_run(a, ours("mmlu_x", "11"))
    result = pair(b, a)
    assert [w for w in result.warnings if "duplicate" in w] == [
        "before: mmlu_x: 2 duplicate item line(s) in one run; the first is used"
    ]
    assert result.summary["subtasks"]["mmlu_x"]["duplicates_before"] == 2


def test_a_changed_item_names_the_runs_that_hold_it_and_only_those(tmp_path):
    """Before side, three runs of mmlu_x: seed 0 (items 0, 1, and mmlu_y's items 0, 1 beside them), seed 1
    (item 1 edited) and seed 2 (item 0 only). Item 1 of mmlu_x changed; the runs holding it are seed 0 and
    seed 1, not seed 2 (no item 1) and not mmlu_y's task (another sub-benchmark)."""
    b, a = dirs(tmp_path)
    write_run(b, {**ours("mmlu_x", "11"), **ours("mmlu_y", "11")}, seed=0, model_dir="s0")
    write_run(b, ours("mmlu_x", "11", docs={1: doc_for(1, "!")}), seed=1, model_dir="s1")
    write_run(b, ours("mmlu_x", "1"), seed=2, model_dir="s2")
    write_run(a, ours("mmlu_x", "11"))
    assert error_of(b, a) == (
        "before: doc_hash of mmlu_x doc_id 1 differs between runs (postforget_mmlu_x seed 0, postforget_mmlu_x "
        "seed 1): the dataset changed between them (1 item(s) in all); re-run them on the same data"
    )


def test_a_sub_benchmark_from_two_tasks_names_the_first_one_met_and_its_tasks(tmp_path):
    """One before run, tasks read in name order: t1 gives mm, t2 and t3 give zz, t4 and t5 give aa, all at
    seed 0. Two sub-benchmarks come from two tasks each; the error names the first met (zz, not aa, which
    sorts first; not mm, which comes from one task) and exactly zz's two tasks."""
    b, a = dirs(tmp_path)
    runs = {"postforget_t1": "mm", "postforget_t2": "zz", "postforget_t3": "zz", "postforget_t4": "aa"}
    runs["postforget_t5"] = "aa"
    write_run(b, {task: [sample_line(0, None, record=pf_record(sub, 1))] for task, sub in runs.items()})
    write_run(a, ours("mm", "1"))
    assert error_of(b, a) == (
        "before: sub-benchmark zz seed 0 comes from several tasks (postforget_t2, postforget_t3); keep one with "
        "--exclude (e.g. --exclude '*_base') or move the other run out of the directory"
    )
