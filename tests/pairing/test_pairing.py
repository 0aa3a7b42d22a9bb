"""Pairing through ``pair()`` and ``postforget-pair`` on hand-built lm-eval output directories."""

from __future__ import annotations

import hashlib
import io
import json
import math
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from postforget_lmeval import PairingError, PairResult, pair
from postforget_lmeval.cli import main, main_tool
from postforget_lmeval.cli.console import Bar as _Bar
from postforget_lmeval.pairing.run_plan import listing
from postforget_lmeval.sources import _lmeval as lmeval_source
from tests.helpers.lmeval_runs import doc_for, ordinary, ours, pf_record, sample_line, write_run

FIRST_COLUMNS = [
    "subtask",
    "category",
    "seed",
    "k",
    "n",
    "n_11",
    "n_10",
    "n_01",
    "n_00",
    "acc_before",
    "acc_after",
    "F",
    "BT",
    "F_chance",
    "BT_chance",
    "F_true",
    "BT_true",
    "F_max",
    "BT_max",
    "F_rel",
]


def dirs(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "before", tmp_path / "after"


def one_row(result: PairResult, subtask: str | None = None) -> dict:
    df = result.subtasks if subtask is None else result.subtasks[result.subtasks["subtask"] == subtask]
    assert len(df) == 1
    return df.iloc[0].to_dict()


@pytest.mark.parametrize(
    ("before", "after", "k", "expected"),
    [
        (
            "1111111100",
            "1111110010",
            4,
            dict(
                n_11=6,
                n_10=2,
                n_01=1,
                n_00=1,
                F=0.2,
                BT=0.1,
                F_chance=0.02,
                F_true=0.18,
                BT_true=0.08,
                F_max=0.7333333,
                BT_max=0.6,
                F_rel=0.25,
            ),
        ),
        (
            "1010",
            "0110",
            2,
            dict(
                n_11=1,
                n_10=1,
                n_01=1,
                n_00=1,
                F=0.25,
                BT=0.25,
                F_chance=0.25,
                F_true=0,
                BT_true=0,
                F_max=0,
                BT_max=0,
                F_rel=0.5,
            ),
        ),
        (
            "1" * 80 + "0" * 20,
            "1" * 70 + "0" * 30,
            4,
            dict(
                n_11=70,
                n_10=10,
                n_01=0,
                n_00=20,
                F=0.1,
                BT=0,
                F_chance=0.02,
                F_true=0.08,
                BT_true=0,
                F_max=0.7333333,
                BT_max=0.6,
                F_rel=0.125,
            ),
        ),
    ],
)
def test_spec_worked_examples_through_pairing(tmp_path, before, after, k, expected):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", before, k=k))
    write_run(a, ours("mmlu_x", after, k=k))
    row = one_row(pair(b, a))
    assert row["n"] == len(before) and row["k"] == k
    for key, value in expected.items():
        assert row[key] == pytest.approx(value, abs=1e-6), key
    assert row["acc_before"] == pytest.approx(before.count("1") / len(before))


def test_base_variant_pairs_with_chat_variant_by_subtask(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("bbh_navigate", "1100", task="postforget_bbh_navigate_base"))
    write_run(a, ours("bbh_navigate", "1010", task="postforget_bbh_navigate"))
    result = pair(b, a)
    row = one_row(result)
    assert (row["subtask"], row["task_before"], row["task_after"]) == (
        "bbh_navigate",
        "postforget_bbh_navigate_base",
        "postforget_bbh_navigate",
    )
    assert (row["n_11"], row["n_10"], row["n_01"], row["n_00"]) == (1, 1, 1, 1)
    assert result.summary["subtasks"]["bbh_navigate"]["paired"] == 4


def test_same_subtask_from_two_tasks_on_one_side_is_an_error_until_excluded(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, {**ours("bbh_navigate", "1100", task="postforget_bbh_navigate_base"), **ours("bbh_navigate", "1100")})
    write_run(a, ours("bbh_navigate", "1010"))
    with pytest.raises(PairingError, match=r"bbh_navigate seed 0 comes from several tasks.*--exclude"):
        pair(b, a)
    assert one_row(pair(b, a, exclude=["*_base"]))["task_before"] == "postforget_bbh_navigate"


def test_seeds_pair_equal_seeds_and_report_spread(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "1111"), seed=1, date="2025-01-01T00-00-01.000000")
    write_run(b, ours("mmlu_x", "1100"), seed=2, date="2025-01-01T00-00-02.000000")
    write_run(a, ours("mmlu_x", "1100"), seed=2, date="2025-01-02T00-00-01.000000")
    write_run(a, ours("mmlu_x", "0000"), seed=1, date="2025-01-02T00-00-02.000000")
    result = pair(b, a)
    rows = result.subtasks.set_index("seed")
    assert rows.loc["1", "F"] == 1.0 and rows.loc["2", "F"] == 0.0
    overall = result.categories[
        (result.categories["category"] == "OVERALL") & (result.categories["average"] == "macro")
    ].iloc[0]
    assert overall["n_seeds"] == 2
    assert overall["F_mean"] == pytest.approx(0.5) and overall["F_std"] == pytest.approx(math.sqrt(0.5))
    assert result.summary["seed_matching"]["mmlu_x"]["method"] == "exact"
    assert not result.warnings


def test_sampling_seed_wins_over_random_seed(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "11"), seed=0, model_args="pretrained=m,seed=7")
    write_run(
        a, ours("mmlu_x", "10"), seed=0, model_args={"pretrained": "m", "seed": 3}, gen_kwargs="temperature=0.6,seed=7"
    )
    result = pair(b, a)
    assert one_row(result)["seed"] == "7"
    sources = {side: result.summary["runs"][side][0]["seed_source"] for side in ("before", "after")}
    assert sources == {"before": "model_args seed", "after": "gen_kwargs seed"}


def test_seeds_without_overlap_pair_in_order_and_say_so(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "11"), seed=0)
    write_run(a, ours("mmlu_x", "10"), seed=1234)
    result = pair(b, a)
    row = one_row(result)
    assert (row["seed"], row["seed_before"], row["seed_after"]) == ("0~1234", "0", "1234")
    assert any("sorted order" in w and "before 0 ~ after 1234" in w for w in result.warnings)
    with pytest.raises(PairingError, match="--strict"):
        pair(b, a, strict=True)


def test_seeds_that_do_not_line_up(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "11"), seed=0, date="2025-01-01T00-00-01.000000")
    write_run(b, ours("mmlu_x", "11"), seed=1, date="2025-01-01T00-00-02.000000")
    write_run(a, ours("mmlu_x", "10"), seed=5)
    with pytest.raises(PairingError, match=r"seeds of mmlu_x do not line up: before 0, 1, after 5.*--seed-match order"):
        pair(b, a)
    result = pair(b, a, seed_match="order")
    assert one_row(result)["seed"] == "0~5"
    assert result.summary["seed_matching"]["mmlu_x"]["unmatched_before"] == ["1"]
    assert any("without a partner" in w for w in result.warnings)


def test_partly_shared_seeds_pair_the_shared_ones(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "11"), seed=0, date="2025-01-01T00-00-01.000000")
    write_run(b, ours("mmlu_x", "11"), seed=1, date="2025-01-01T00-00-02.000000")
    write_run(a, ours("mmlu_x", "10"), seed=1)
    result = pair(b, a)
    assert one_row(result)["seed"] == "1"
    assert result.summary["seed_matching"]["mmlu_x"]["unmatched_before"] == ["0"]


def test_exact_seed_match_without_common_seed_is_an_error(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "11"), seed=0)
    write_run(a, ours("mmlu_x", "10"), seed=1)
    with pytest.raises(PairingError, match="nothing to pair"):
        pair(b, a, seed_match="exact")


def test_duplicate_runs_use_the_newest_and_report_the_others(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "0000"), date="2025-01-01T00-00-00.000000", model_dir="old")
    write_run(b, ours("mmlu_x", "1111"), date="2025-03-01T00-00-00.000000", model_dir="new")
    write_run(a, ours("mmlu_x", "1100"))
    result = pair(b, a)
    assert one_row(result)["acc_before"] == 1.0
    superseded = result.summary["superseded_runs"]["before"]
    assert len(superseded) == 1 and "old" in superseded[0]["results"] and "new" in superseded[0]["used_instead"]
    assert result.summary["totals"]["superseded_runs"] == 1
    assert any("more than once" in w for w in result.warnings)


def test_of_three_runs_of_one_task_and_seed_the_newest_is_read_and_both_others_reported(tmp_path):
    b, a = dirs(tmp_path)
    first = write_run(b, ours("mmlu_x", "0000"), date="2025-01-01T00-00-00.000000", model_dir="first")
    newest = write_run(b, ours("mmlu_x", "11"), date="2025-03-01T00-00-00.000000", model_dir="newest")
    second = write_run(b, ours("mmlu_x", "000"), date="2025-02-01T00-00-00.000000", model_dir="second")
    write_run(b, ours("mmlu_x", "1"), seed=1, model_dir="seed1")
    write_run(a, ours("mmlu_x", "10"))
    write_run(a, ours("mmlu_x", "1"), seed=1, model_dir="seed1")
    result = pair(b, a)
    rows = result.subtasks.set_index("seed")
    assert rows.loc["0", "n"] == 2 and rows.loc["0", "acc_before"] == 1.0  # the March run's "11", not "0000"
    record = {"task": "postforget_mmlu_x", "seed": "0", "used_instead": str(newest), "n_samples_used": 2}
    assert result.summary["superseded_runs"] == {
        "before": [
            {**record, "results": str(second), "n_samples": 3},
            {**record, "results": str(first), "n_samples": 4},
        ],
        "after": [],
    }
    expected = [
        f"before: task postforget_mmlu_x seed 0 was run more than once; using the newest ({newest}), "
        f"ignoring {old} (it has {n} samples, the newest 2)"
        for old, n in ((second, 3), (first, 4))
    ]
    assert [w for w in result.warnings if "more than once" in w] == expected


def test_a_rerun_with_as_many_samples_is_warned_without_a_count(tmp_path):
    b, a = dirs(tmp_path)
    old = write_run(b, ours("mmlu_x", "00"), date="2025-01-01T00-00-00.000000", model_dir="old")
    new = write_run(b, ours("mmlu_x", "11"), date="2025-03-01T00-00-00.000000", model_dir="new")
    write_run(a, ours("mmlu_x", "10"))
    warned = [w for w in pair(b, a).warnings if "more than once" in w]
    assert warned == [
        f"before: task postforget_mmlu_x seed 0 was run more than once; using the newest ({new}), ignoring {old}"
    ]


def test_items_and_tasks_on_one_side_only_are_counted(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, {**ours("mmlu_x", "111100"), **ours("mmlu_only_before", "1")})
    write_run(a, {**ours("mmlu_x", "1111"), **ours("mmlu_only_after", "1")})
    result = pair(b, a)
    row = one_row(result, "mmlu_x")
    assert (row["n"], row["n_unpaired_before"], row["n_unpaired_after"]) == (4, 2, 0)
    s = result.summary
    assert s["only_before"] == ["mmlu_only_before"] and s["only_after"] == ["mmlu_only_after"]
    assert s["subtasks"]["mmlu_x"]["unpaired_before"] == 2 and s["totals"]["unpaired_before"] == 2
    assert any("only on the before side" in w for w in result.warnings)


def test_doc_hash_mismatch_names_task_and_item(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "111"))
    write_run(a, ours("mmlu_x", "111", docs={2: doc_for(2, " (edited)")}))
    with pytest.raises(PairingError, match=r"doc_hash differs for mmlu_x doc_id 2 .*postforget_mmlu_x"):
        pair(b, a)


def test_doc_hash_mismatch_between_runs_of_one_side(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "11"), seed=0, date="2025-01-01T00-00-01.000000")
    write_run(b, ours("mmlu_x", "11", docs={1: doc_for(1, "!")}), seed=1, date="2025-01-01T00-00-02.000000")
    write_run(a, ours("mmlu_x", "11"), seed=0)
    with pytest.raises(PairingError, match="before: doc_hash of mmlu_x doc_id 1 differs between runs"):
        pair(b, a)


def test_empty_and_missing_directories(tmp_path):
    b, a = dirs(tmp_path)
    b.mkdir()
    write_run(a, ours("mmlu_x", "1"))
    with pytest.raises(PairingError, match=r"no lm-eval results_<time>.json .* found under before directory"):
        pair(b, a)
    with pytest.raises(PairingError, match="does not exist"):
        pair(tmp_path / "nope", a)


def test_overlapping_directories_and_task_patterns(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "1"))
    write_run(a, ours("mmlu_x", "1"))
    with pytest.raises(PairingError, match="overlap"):
        pair(tmp_path, a)
    with pytest.raises(PairingError, match="matches --tasks/--exclude; tasks found: postforget_mmlu_x"):
        pair(b, a, tasks=["arc_*"])
    assert one_row(pair(b, a, tasks=["postforget_mmlu_*"]))["n"] == 1


def test_no_task_matching_the_patterns_lists_twenty_found_tasks_and_how_many_more(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, {k: v for i in range(21) for k, v in ours(f"mmlu_{i:02d}", "1").items()})
    write_run(a, ours("mmlu_00", "1"))
    with pytest.raises(PairingError) as error:
        pair(b, a, exclude=["postforget_*"])
    names = ", ".join(f"postforget_mmlu_{i:02d}" for i in range(20))
    assert str(error.value) == f"no task under {b} matches --tasks/--exclude; tasks found: {names}, ... (1 more)"


def test_input_folder_errors_are_whole_sentences_with_the_fix(tmp_path):
    """Every sentence of each message, as the user reads it."""
    b, a = dirs(tmp_path)
    write_run(a, {**ours("mmlu_x", "1"), **ours("mmlu_y", "1")})
    missing = tmp_path / "nope"
    with pytest.raises(PairingError) as error:
        pair(missing, a)
    assert str(error.value) == (
        f"before directory {missing} does not exist or is not a directory: "
        "give the output directory of an lm_eval (--output_path) or LightEval run"
    )
    with pytest.raises(PairingError) as error:
        pair(a, missing)
    assert str(error.value).startswith(f"after directory {missing} does not exist")
    with pytest.raises(PairingError) as error:
        pair(tmp_path, a)
    assert str(error.value) == (
        f"before ({tmp_path.resolve()}) and after ({a.resolve()}) overlap: runs in the inner one would be read "
        "on both sides; give two separate directories"
    )
    b.mkdir()
    with pytest.raises(PairingError) as error:
        pair(b, a)
    assert str(error.value) == (
        f"no lm-eval results_<time>.json (0.4.3+) or results.json (0.4.0-0.4.2) found under before directory {b} "
        "(searched its readable subfolders, following links, hidden folders aside): point at the output directory "
        "of an `lm_eval ... --log_samples` run (or of LightEval, or inspect_ai logs)"
    )
    write_run(b, ours("mmlu_x", "1"))
    with pytest.raises(PairingError) as error:
        pair(b, a, tasks=["arc_*"], exclude=["postforget_mmlu_x"])
    assert str(error.value) == f"no task under {b} matches --tasks/--exclude; tasks found: postforget_mmlu_x"
    with pytest.raises(PairingError) as error:
        pair(b, a, exclude=["postforget_mmlu_*"])
    assert str(error.value) == f"no task under {b} matches --tasks/--exclude; tasks found: postforget_mmlu_x"
    assert one_row(pair(b, a, tasks=["postforget_mmlu_*"], exclude=["*_y"]))["subtask"] == "mmlu_x"


LFS_STUB = "version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 2500000\n"
LFS_PROBLEM = (
    "is a Git LFS pointer stub (2.5 MB on the LFS server), not the logged samples: the clone was made without the "
    "LFS objects; run `git lfs pull` in it (or download the real files) and pair again"
)


def test_unreadable_results_files_are_listed_in_the_not_found_message(tmp_path):
    b, a = dirs(tmp_path)
    write_run(a, ours("mmlu_x", "1"))
    b.mkdir()
    broken = [b / f"results_2025-01-0{i}T00-00-00.000000.json" for i in range(1, 5)]
    for path in broken:
        path.write_text("{", encoding="utf-8")
    with pytest.raises(PairingError) as error:
        pair(b, a)
    why = (
        "unreadable results file (Expecting property name enclosed in double quotes: line 1 column 2 (char 1)); "
        "its run is skipped"
    )
    shown = "; ".join(f"{path}: {why}" for path in broken[:3])
    assert str(error.value) == (
        f"no lm-eval results_<time>.json (0.4.3+) or results.json (0.4.0-0.4.2) found under before directory {b} "
        f"(searched its readable subfolders, following links, hidden folders aside) [{shown}; ... (1 more)]: "
        "point at the output directory of an `lm_eval ... --log_samples` run (or of LightEval, or inspect_ai logs)"
    )


def test_an_unreadable_results_file_beside_readable_runs_is_recorded_and_the_search_notes_name_the_side(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "1"))
    write_run(a, ours("mmlu_x", "1"))
    broken = b / "results_2025-01-09T00-00-00.000000.json"
    broken.write_text("{", encoding="utf-8")
    b.joinpath("loop").symlink_to(b, target_is_directory=True)
    result = pair(b, a)
    why = (
        "unreadable results file (Expecting property name enclosed in double quotes: line 1 column 2 (char 1)); "
        "its run is skipped"
    )
    assert result.summary["problems"]["before"] == [{"path": str(broken), "problem": why, "kind": "file", "count": 1}]
    assert f"before: {broken}: {why}" in result.warnings
    assert f"before: {b / 'loop'} is a link to {b.resolve()}, already searched; not read twice" in result.notes


def test_lfs_stubs_are_skipped_with_the_reason_or_refused_when_nothing_else_is_left(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, {**ours("mmlu_x", "11"), **ours("mmlu_y", "1")})
    write_run(a, {**ours("mmlu_x", "10"), **ours("mmlu_y", "1")})
    stub = next((b / "model").glob("samples_postforget_mmlu_y_*.jsonl"))
    stub.write_text(LFS_STUB, encoding="utf-8")
    result = pair(b, a)
    assert list(result.subtasks["subtask"]) == ["mmlu_x"]
    problem = {"path": str(stub), "problem": f"{LFS_PROBLEM}; task postforget_mmlu_y skipped", "kind": "unusable"}
    assert result.summary["problems"]["before"] == [{**problem, "count": 1}]
    second = next((b / "model").glob("samples_postforget_mmlu_x_*.jsonl"))
    second.write_text(LFS_STUB.replace("2500000", "1000000"), encoding="utf-8")  # mmlu_x: named first (task order)
    with pytest.raises(PairingError) as error:
        pair(b, a)
    assert str(error.value) == (
        f"every samples file under before directory {b} is unusable: {second} "
        f"{LFS_PROBLEM.replace('2.5 MB', '1.0 MB')} (2 file(s) alike)"
    )


def test_a_run_without_samples_is_named_in_the_advice(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "1"), log_samples=False, date="2025-02-03T04-05-06.000007")
    write_run(a, ours("mmlu_x", "1"))
    with pytest.raises(PairingError) as error:
        pair(b, a)
    assert str(error.value) == (
        f"the runs under before directory {b} were made without --log_samples "
        "(e.g. results_2025-02-03T04-05-06.000007.json has no per-item samples of task postforget_mmlu_x beside it): "
        "re-run lm_eval with --log_samples"
    )


def test_tasks_without_a_binary_metric_are_dropped_with_the_reason(tmp_path):
    b, a = dirs(tmp_path)
    for root in (b, a):
        tasks = {
            **ordinary("arc_a", "10", metric="f1"),
            **ordinary("arc_b", "10"),
            **ordinary("arc_c", "10", metric="f1"),
        }
        write_run(root, tasks, metrics={"arc_a": ["f1", "bleu"], "arc_b": ["acc", "acc_norm"], "arc_c": ["f1"]})
    result = pair(b, a)
    assert list(result.subtasks["subtask"]) == ["arc_b"]
    reason = "no per-sample binary metric (acc/exact_match); it logs {}: pass --metric"
    assert result.summary["dropped_tasks"] == [
        {"side": side, "task": task, "kind": "metric", "reason": reason.format(logs)}
        for side in ("before", "after")
        for task, logs in (("arc_a", "f1, bleu"), ("arc_c", "f1"))
    ]
    explicit = pair(b, a, metric="f1")
    assert sorted(explicit.subtasks["subtask"]) == ["arc_a", "arc_c"]
    assert [d["reason"] for d in explicit.summary["dropped_tasks"]] == [
        "metric f1 not logged (it logs acc, acc_norm)"
    ] * 2


def test_runs_without_log_samples(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "1"), log_samples=False)
    write_run(a, ours("mmlu_x", "1"))
    with pytest.raises(PairingError, match="without --log_samples"):
        pair(b, a)


def test_malformed_lines_are_skipped_and_counted(tmp_path):
    b, a = dirs(tmp_path)
    run = ours("mmlu_x", "1111")
    run["postforget_mmlu_x"][1] = '{"doc_id": 1, "doc": {"broken\n'
    write_run(b, run)
    write_run(a, ours("mmlu_x", "1110"))
    result = pair(b, a)
    row = one_row(result)
    assert (row["n"], row["n_unpaired_after"]) == (3, 1)
    assert result.summary["totals"]["malformed_lines"] == 1
    assert any("1 malformed line(s)" in w for w in result.warnings)


def test_a_task_whose_every_line_is_malformed_still_names_the_filter_it_was_read_with(tmp_path):
    """Without --filter a task is read with its config's first filter, named even where no line of it was readable."""
    b, a = dirs(tmp_path)
    configs = {"gen_task": {"filter_list": [{"name": "strict-match"}, {"name": "flexible-extract"}]}}
    for root, bits in ((b, "10"), (a, "01")):
        two = ordinary("g", bits, filter_="strict-match")["g"] + ordinary("g", bits, filter_="flexible-extract")["g"]
        write_run(root, {"gen_task": two, **ordinary("arc_x", bits)}, configs=configs)
    samples = next((b / "model").glob("samples_gen_task_*.jsonl"))
    samples.write_text('{"doc_id": 1, "doc": {"broken\n' * 4, encoding="utf-8")
    result = pair(b, a, analyses=False)
    assert {r["task"]: r["filter"] for r in result.summary["runs"]["before"]} == {
        "arc_x": "none",
        "gen_task": "strict-match",
    }
    using = "task gen_task logs filters strict-match, flexible-extract; using 'strict-match' (choose with --filter)"
    assert [n for n in result.notes if "logs filters" in n] == [using]


def test_problems_are_recorded_with_their_file_kind_and_count(tmp_path):
    b, a = dirs(tmp_path)
    run = ours("mmlu_x", "1111")
    run["postforget_mmlu_x"][1] = run["postforget_mmlu_x"][2] = '{"doc_id": 1, "doc": {"broken\n'
    write_run(b, run)
    no_samples = write_run(b, ours("mmlu_y", "1"), log_samples=False, model_dir="without_samples")
    write_run(a, {**ours("mmlu_x", "1111"), **ours("mmlu_y", "1")})
    samples = next((b / "model").glob("samples_*.jsonl"))
    problems = pair(b, a).summary["problems"]
    assert problems["after"] == []
    by_kind = {p["kind"]: p for p in problems["before"]}
    assert sorted(by_kind) == ["file", "incomplete", "malformed"]
    malformed = by_kind["malformed"]
    assert (malformed["path"], malformed["count"]) == (str(samples), 2)
    assert malformed["problem"].startswith("2 malformed line(s) skipped")
    assert by_kind["file"] == {
        "path": str(no_samples),
        "problem": "task postforget_mmlu_y: no samples file (run without --log_samples?); task skipped",
        "kind": "file",
        "count": 1,
    }


def test_long_lists_in_messages_say_how_many_more():
    assert listing([f"t{i}" for i in range(10)]) == "t0, t1, t2, t3, t4, t5, t6, t7, t8, t9"
    assert listing([f"t{i}" for i in range(12)]) == "t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, ... (2 more)"
    assert listing(["a", "b", "c", "d"], 3, "; ") == "a; b; c; ... (1 more)"
    assert listing([1, 2, 3], 3, "; ") == "1; 2; 3"


def test_samples_file_cut_mid_line(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "1111"))
    write_run(a, ours("mmlu_x", "1111"))
    samples = next((a / "model").glob("samples_*.jsonl"))
    data = samples.read_bytes()
    samples.write_bytes(data[: len(data) - 100])
    result = pair(b, a)
    assert one_row(result)["n"] == 3
    totals = result.summary["totals"]
    assert totals["truncated_files"] == 1 and totals["malformed_lines"] == 0 and totals["incomplete_files"] == 1
    assert any("ends mid-line" in w for w in result.warnings)


def test_orphan_samples_file_is_reported(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "11"))
    write_run(a, ours("mmlu_x", "11"))
    (b / "model" / "samples_postforget_mmlu_y_2024-01-01T00-00-00.000000.jsonl").write_text("")
    result = pair(b, a)
    assert any("without a results file" in p["problem"] for p in result.summary["problems"]["before"])


def test_ordinary_tasks_metric_k_filter_and_group(tmp_path):
    b, a = dirs(tmp_path)
    groups = {"suite": ["suite_science"], "suite_science": ["mc_task", "gen_task"]}
    gen_cfg = {
        "gen_task": {"filter_list": [{"name": "strict-match"}, {"name": "flexible-extract"}]},
        "mc_task": {"output_type": "multiple_choice"},
    }
    for root, mc_bits, strict_bits, flex_bits in ((b, "1100", "1010", "1111"), (a, "1010", "0110", "0000")):
        tasks = {
            **ordinary("mc_task", mc_bits, n_options=5),
            "gen_task": ordinary("g", strict_bits, metric="exact_match", filter_="strict-match")["g"]
            + ordinary("g", flex_bits, metric="exact_match", filter_="flexible-extract")["g"],
        }
        write_run(root, tasks, configs=gen_cfg, group_subtasks=groups, metrics={"gen_task": ["exact_match"]})
    result = pair(b, a)
    mc, gen = one_row(result, "mc_task"), one_row(result, "gen_task")
    assert mc["category"] == "suite_science" and mc["k"] == 5 and (mc["n_10"], mc["n_01"]) == (1, 1)
    assert gen["category"] == "suite_science" and math.isnan(gen["k"]) and math.isnan(gen["F_chance"])
    assert (gen["n_11"], gen["n_10"], gen["n_01"], gen["n_00"]) == (1, 1, 1, 1)
    assert any("using 'strict-match'" in n for n in result.notes)
    flex = one_row(pair(b, a, filter="flexible-extract", k=3), "gen_task")
    assert (flex["n_10"], flex["k"], flex["F_chance"]) == (4, 3, 0.0)
    samples = result.samples[result.samples["subtask"] == "mc_task"]
    assert set(samples["answer_before"]) == {"A"} and set(samples["gold"]) == {"A"}
    with pytest.raises(PairingError, match="--filter nope is not one of them"):
        pair(b, a, filter="nope")


def test_a_filter_is_used_where_logged_and_refused_naming_the_filters_where_there_is_a_choice(tmp_path):
    b, a = dirs(tmp_path)
    configs = {"gen_task": {"filter_list": [{"name": "strict-match"}, {"name": "flexible-extract"}]}}
    paths = {}
    for root, strict, flexible, one in ((b, "10", "11", "1"), (a, "01", "00", "0")):
        two = (
            ordinary("g", strict, filter_="strict-match")["g"]
            + ordinary("g", flexible, filter_="flexible-extract")["g"]
        )
        paths[root] = write_run(root, {"gen_task": two, **ordinary("one_filter", one)}, configs=configs)
    rows = pair(b, a, filter="flexible-extract").subtasks.set_index("subtask")
    assert (rows.loc["gen_task", "n_10"], rows.loc["one_filter", "n_10"]) == (2, 1)  # one_filter keeps "none"
    with pytest.raises(PairingError) as error:
        pair(b, a, filter="nope")
    assert str(error.value) == (
        f"task gen_task ({paths[b]}) has filters strict-match, flexible-extract; --filter nope is not one of them"
    )


def test_metric_is_not_asked_of_our_tasks_even_of_lines_without_our_record(tmp_path):
    """A postforget task's line without its record (an older log) is read by the default binary metric."""
    b, a = dirs(tmp_path)
    write_run(b, {"postforget_mmlu_x": ordinary("x", "10")["x"]})
    write_run(a, {"postforget_mmlu_x": ordinary("x", "01")["x"]})
    row = one_row(pair(b, a, metric="f1"))
    assert (row["n"], row["n_10"], row["n_01"]) == (2, 1, 1)


def test_unknown_metric_is_an_error(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ordinary("arc_x", "10"))
    write_run(a, ordinary("arc_x", "01"))
    with pytest.raises(PairingError, match="unknown metric 'bogus'"):
        pair(b, a, metric="bogus")


def test_an_unknown_metric_names_three_dropped_tasks_and_how_many_more(tmp_path):
    b, a = dirs(tmp_path)
    tasks = {k: v for t in ("arc_a", "arc_b", "arc_c", "arc_d") for k, v in ordinary(t, "10").items()}
    write_run(b, tasks)
    write_run(a, tasks)
    reason = "metric bogus not logged (it logs acc)"
    # 4 tasks dropped on each side: 8, of which the first 3 are named
    expected = f"unknown metric 'bogus': no task declares it in its results file (arc_a: {reason}; arc_b: {reason}; "
    with pytest.raises(PairingError) as error:
        pair(b, a, metric="bogus")
    assert str(error.value) == expected + f"arc_c: {reason}; ... (5 more))"


def test_a_metric_is_noted_as_ignored_only_where_no_task_reads_it(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "10"))
    write_run(a, ours("mmlu_x", "01"))
    ignored = "--metric acc ignored: postforget tasks log their own correctness"
    assert ignored in pair(b, a, metric="acc").notes
    assert ignored.replace("acc", "f1") in pair(b, a, metric="f1").notes  # a metric they do not log: still ignored
    write_run(b, ordinary("arc_x", "10"), model_dir="ordinary")
    write_run(a, ordinary("arc_x", "01"), model_dir="ordinary")
    result = pair(b, a, metric="acc")
    assert ignored not in result.notes and set(result.subtasks["subtask"]) == {"mmlu_x", "arc_x"}


def test_non_binary_scores_are_not_transitions(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, {"t": [sample_line(0, 1.0), sample_line(1, 0.5), sample_line(2, 0.0)]})
    write_run(a, ordinary("t", "111"))
    result = pair(b, a)
    assert one_row(result)["n"] == 2
    assert result.summary["totals"]["non_binary_samples"] == 1
    assert any("non-binary" in w and "0.5" in w for w in result.warnings)


def test_repeats_are_replicates(tmp_path):
    b, a = dirs(tmp_path)
    for root, reps in ((b, ("11", "10")), (a, ("01", "00"))):
        lines = [sample_line(i, None, record=[pf_record("mmlu_x", int(r[i])) for r in reps]) for i in range(2)]
        write_run(root, {"postforget_mmlu_x": lines}, configs={"postforget_mmlu_x": {"repeats": 2}})
    result = pair(b, a)
    # replicate 0: 1->0, 1->1; replicate 1: 1->0, 0->0. One row for seed 0: the counts summed, the rates the mean
    # of the replicates' (F 1/2 and 1/2; F_true 1/2 - 0/3 and 1/2 - 1/2 * 1 / 3 with k 4), one seed in the counts
    row = result.subtasks.set_index("seed").loc["0"]
    assert [row[c] for c in ("replicates", "n", "n_11", "n_10", "n_01", "n_00")] == [2, 4, 1, 2, 0, 1]
    assert row["F"] == 0.5 and row["acc_before"] == 0.75 and row["acc_after"] == 0.25
    assert row["F_true"] == pytest.approx((0.5 + 0.5 - 1 / 6) / 2)
    overall = result.categories.query("average == 'macro' and category == 'OVERALL'").iloc[0]
    assert overall["n_seeds"] == 1 and result.summary["totals"]["seeds"] == ["0"]
    assert result.summary["subtasks"]["mmlu_x"]["replicates"] == 2 and result.agreement.empty


def test_parallel_reading_matches_sequential(tmp_path, monkeypatch):
    b, a = dirs(tmp_path)
    write_run(b, {**ours("mmlu_x", "1101" * 30), **ours("mmlu_y", "10" * 50)})
    write_run(a, {**ours("mmlu_x", "0111" * 30), **ours("mmlu_y", "11" * 50)})
    sequential = pair(b, a, jobs=1)
    monkeypatch.setattr(lmeval_source, "PARALLEL_MIN_BYTES", 0)
    seen = []
    parallel = pair(b, a, jobs=2, progress=lambda done, total: seen.append((done, total)))
    pd.testing.assert_frame_equal(sequential.subtasks, parallel.subtasks)
    pd.testing.assert_frame_equal(sequential.samples, parallel.samples)
    assert len(seen) == 4 and seen[-1][0] == seen[-1][1]  # one step per file read
    assert sequential.summary["runs"] == parallel.summary["runs"]


def test_cli_writes_every_output_without_touching_inputs(tmp_path, capsys):
    b, a = dirs(tmp_path)
    for seed, (bb, ab) in enumerate((("1111111100", "1111110010"), ("1111111000", "1111110000"))):
        write_run(
            b, {**ours("mmlu_x", bb), **ordinary("plain", "1100")}, seed=seed, date=f"2025-01-01T00-00-0{seed}.000000"
        )
        write_run(
            a, {**ours("mmlu_x", ab), **ordinary("plain", "0110")}, seed=seed, date=f"2025-01-02T00-00-0{seed}.000000"
        )
    digest = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in tmp_path.rglob("*") if p.is_file()}
    out = tmp_path / "out"
    assert main([str(b), str(a), "-o", str(out)]) == 0
    assert digest == {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in digest}
    summary = json.loads((out / "summary.json").read_text())
    names = sorted(p.name for p in out.iterdir())
    core = ["agreement.csv", "categories.csv", "forgetting.png", "report.md", "samples.parquet", "subtasks.csv"]
    assert set(core) <= set(names)
    assert {f"{t}.csv" for t in summary["tables"]} <= set(names)  # extra tables (analyses), named in summary.json
    sub = pd.read_csv(out / "subtasks.csv")
    assert list(sub.columns[:20]) == FIRST_COLUMNS
    rates = sub[["acc_before", "acc_after", "F", "BT", "F_true", "BT_true", "F_rel"]]
    assert ((rates.fillna(0) >= 0) & (rates.fillna(0) <= 1)).all().all()
    assert sub.loc[sub["subtask"] == "plain", "F_chance"].isna().all()  # no k: empty, not 0
    assert "\nplain,plain,0,,4," in (out / "subtasks.csv").read_text()
    cats = pd.read_csv(out / "categories.csv")
    assert (
        set(cats["average"]) == {"macro", "micro"}
        and cats[cats["average"] == "macro"]["category"].iloc[-1] == "OVERALL"
    )
    samples = pd.read_parquet(out / "samples.parquet")
    assert len(samples) == 2 * 10 + 2 * 4
    assert set(samples["transition"].astype(str)) <= {"1->1", "1->0", "0->1", "0->0"}
    assert {
        "inputs",
        "runs",
        "seed_matching",
        "subtasks",
        "totals",
        "problems",
        "superseded_runs",
        "dropped_tasks",
    } <= set(summary)
    assert summary["totals"]["items_paired"] == 28
    report = (out / "report.md").read_text()
    assert "| Overall |" in report and "±" in report
    assert not list(out.glob(".*tmp"))
    printed = capsys.readouterr()
    assert "Overall" in printed.out and "paired 28 items" in printed.err


def test_cli_errors_are_one_message_and_exit_1(tmp_path, capsys):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "111"))
    write_run(a, ours("mmlu_x", "111", docs={0: doc_for(0, "?")}))
    assert main([str(b), str(a), "-o", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "error:" in err and "doc_id 0" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_paths_are_printed_as_they_are(tmp_path, capsys):
    """A directory name with ":smile:" in it is a path, not an emoji code (rich would draw one by default)."""
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "110"))
    write_run(a, ours("mmlu_x", "100"))
    out = tmp_path / "run:smile:s"
    assert main([str(b), str(a), "-o", str(out), "--no-plot"]) == 0
    printed = capsys.readouterr()
    assert f"to {out}" in printed.err and "\N{SMILING FACE WITH OPEN MOUTH AND SMILING EYES}" not in printed.err
    assert main([str(b), str(tmp_path / "gone:x:"), "-o", str(out)]) == 1
    assert "gone:x:" in capsys.readouterr().err


def test_show_lists_forgotten_items_with_question_and_answers(tmp_path, capsys):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "1100"))
    write_run(a, ours("mmlu_x", "0110"))
    out = tmp_path / "out"
    assert main([str(b), str(a), "-o", str(out), "--no-plot", "-q"]) == 0
    capsys.readouterr()
    assert main(["show", str(out), "--subtask", "mmlu_x", "--responses"]) == 0
    printed = capsys.readouterr().out
    assert "1 forgotten item(s) of mmlu_x" in printed and "Question 0?" in printed and "Question 1?" not in printed
    assert "before: A" in printed and "after: B" in printed and "step by step" in printed
    assert main(["show", str(out), "--subtask", "mmlu_x", "--transition", "0->1"]) == 0
    assert "Question 2?" in capsys.readouterr().out
    assert main(["show", str(out), "--subtask", "mmlu_z"]) == 1
    assert "did you mean mmlu_x" in capsys.readouterr().err
    samples = next((b / "model").glob("samples_*.jsonl"))
    samples.write_text(samples.read_text()[10:])
    assert main(["show", str(out), "--subtask", "mmlu_x"]) == 1
    assert "re-run postforget-pair" in capsys.readouterr().err


def test_progress_bar_counts_bytes():
    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    bar = _Bar(console)
    bar(0, 2_000_000)
    bar(2_000_000, 2_000_000)
    assert bar.progress.tasks[0].completed == 2_000_000
    bar.stop()
    assert "reading sample logs" in console.file.getvalue()


def test_task_dir_command(capsys):
    assert main_tool(["task-dir"]) == 0
    assert Path(capsys.readouterr().out.strip()).name == "task_configs"


def _pf_docs(responses: list[str], logged: list[int], subtask: str = "mmlu_x") -> dict[str, list[str]]:
    """A postforget task whose docs carry pf_options/pf_gold/pf_format, with the given responses and logged 0/1."""
    lines = []
    for i, (response, correct) in enumerate(zip(responses, logged)):
        doc = {"pf_question": f"Q{i}?", "pf_options": ["w", "x", "y", "z"], "pf_gold": "B", "pf_format": "letter"}
        record = pf_record(
            subtask, correct, answer="B" if correct else None, status="answered" if correct else "no_answer"
        )
        record["gold"] = "B"
        lines.append(sample_line(i, None, doc=doc, response=response, record=record))
    return {f"postforget_{subtask}": lines}


@pytest.mark.parametrize("parallel", [False, True])
def test_rescoring_reextracts_from_the_logged_response_and_keeps_the_logged_score(tmp_path, monkeypatch, parallel):
    from postforget_lmeval.scoring.rescoring import scorer_name

    if parallel:
        monkeypatch.setattr(lmeval_source, "PARALLEL_MIN_BYTES", 0)
    b, a = dirs(tmp_path)
    responses = ["The answer is (B).", "I think C", "Answer: B"]
    write_run(b, _pf_docs(responses, [0, 0, 1]))
    write_run(a, _pf_docs(["B", "B", "B"], [1, 1, 1]))
    logged = pair(b, a, jobs=2, analyses=False)
    rescored = pair(b, a, jobs=2, rescore="strict", analyses=False)
    assert logged.samples["before"].tolist() == [0, 0, 1] and logged.summary["scored_by"] == "logged"
    assert "correct_logged_before" not in logged.samples
    s = rescored.samples.sort_values("doc_id")
    assert s["before"].tolist() == [1, 0, 1] and s["correct_logged_before"].tolist() == [0, 0, 1]
    assert s["status_before"].astype(str).tolist() == ["answered", "no_answer", "answered"]
    assert s["response_chars_before"].tolist() == [float(len(r)) for r in responses]
    assert rescored.summary["scored_by"] == scorer_name("strict") == rescored.subtasks["scored_by"].iloc[0]
    assert rescored.summary["runs"]["before"][0]["scored_by"] == scorer_name("strict")
    assert one_row(rescored)["n_01"] == 1 and one_row(logged)["n_01"] == 2
    # the response's length as logged (plain ASCII: its characters)
    assert logged.samples.sort_values("doc_id")["response_chars_before"].tolist() == [float(len(r)) for r in responses]


def test_base_direct_rescoring_prefixes_answer_only_for_our_extractor(tmp_path):
    """base_direct prompts end at "Answer:": strict reads the answer after it, lighteval only the continuation."""
    b, a = dirs(tmp_path)
    config = {"postforget_mmlu_x": {"process_results": "!function utils.process_results_base_direct"}}
    write_run(b, _pf_docs([" B", " 2"], [1, 0]), configs=config)
    write_run(a, _pf_docs([" B", " 2"], [1, 0]), configs=config)
    strict = pair(b, a, rescore="strict", analyses=False).samples.sort_values("doc_id")
    lighteval = pair(b, a, rescore="lighteval", analyses=False).samples.sort_values("doc_id")
    assert strict["answer_before"].tolist() == ["B", None] and strict["before"].tolist() == [1, 0]
    # with "Answer:" in front, LightEval's letter search would take the "A" of "Answer" for " 2"
    assert lighteval["answer_before"].tolist() == ["B", None] and lighteval["before"].tolist() == [1, 0]
    assert lighteval["status_before"].astype(str).tolist() == ["answered", "no_answer"]


def test_rescoring_policy_is_checked(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "10"))
    write_run(a, ours("mmlu_x", "10"))
    with pytest.raises(PairingError, match="unknown policy; choose one of strict, lighteval"):
        pair(b, a, rescore="lenient")


def test_option_log_likelihoods_and_generation_budget_are_recorded(tmp_path):
    b, a = dirs(tmp_path)
    gen = {"plain": {"output_type": "multiple_choice"}}
    write_run(b, ordinary("plain", "10", n_options=3), configs=gen)
    write_run(a, ordinary("plain", "11", n_options=3), configs=gen)
    write_run(b / "x", ours("mmlu_x", "1"), configs={"postforget_mmlu_x": {"generation_kwargs": {"max_gen_toks": 512}}})
    write_run(a / "x", ours("mmlu_x", "1"))
    result = pair(b, a, analyses=False)
    mc = result.samples[result.samples["subtask"] == "plain"]
    assert [list(v) for v in mc["option_ll_before"]] == [[-1.0, -5.0, -5.0]] * 2
    runs = {r["task"]: r["max_gen_toks"] for r in result.summary["runs"]["before"]}
    assert runs == {"plain": None, "postforget_mmlu_x": 512}


def test_input_format_is_detected_or_named(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "10"))
    write_run(a, ours("mmlu_x", "11"))
    assert pair(b, a, analyses=False).summary["formats"] == {"before": "lmeval", "after": "lmeval"}
    assert pair(b, a, source_format="lmeval", analyses=False).summary["totals"]["items_paired"] == 2
    with pytest.raises(PairingError, match="unknown input format 'csv'; choose one of lmeval, lighteval"):
        pair(b, a, source_format="csv")
    with pytest.raises(PairingError, match="found under before directory"):
        pair(b, a, source_format="lighteval")


def test_no_analyses_writes_only_the_papers_figures(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "1100"))
    write_run(a, ours("mmlu_x", "1010"))
    full, bare = tmp_path / "full", tmp_path / "bare"
    assert main([str(b), str(a), "-o", str(full), "-q", "--no-plot"]) == 0
    assert main([str(b), str(a), "-o", str(bare), "-q", "--no-plot", "--no-analyses"]) == 0
    assert json.loads((bare / "summary.json").read_text())["tables"] == []
    assert json.loads((full / "summary.json").read_text())["tables"]
    columns = ["subtask", "n", "n_10", "n_01", "F_true", "BT_true"]
    assert pd.read_csv(bare / "subtasks.csv")[columns].equals(pd.read_csv(full / "subtasks.csv")[columns])
