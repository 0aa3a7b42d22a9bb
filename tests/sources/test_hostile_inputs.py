"""Careless or hostile run folders: links, unreadable paths, odd first lines, lines run together.

Nothing may be lost without a word: each input either is read or is named with its cause.
"""

from __future__ import annotations

import builtins
import os
from pathlib import Path

import pytest

from postforget_lmeval import PairingError, pair
from postforget_lmeval.sources import by_name
from postforget_lmeval.sources._lmeval_runs import find_runs
from tests.helpers.lmeval_runs import ours, write_run


def dirs(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "before", tmp_path / "after"


def test_runs_behind_folder_links_are_read_once_and_loops_end(tmp_path):
    b, a = dirs(tmp_path)
    elsewhere = tmp_path / "shared_disk"
    write_run(b, ours("mmlu_x", "11"), seed=1, date="2025-01-01T00-00-01.000000")
    write_run(elsewhere, ours("mmlu_x", "10"), seed=2, date="2025-01-01T00-00-02.000000")
    b.joinpath("seed2").symlink_to(elsewhere, target_is_directory=True)
    b.joinpath("loop").symlink_to(b, target_is_directory=True)  # a link back to the top: must not recurse
    write_run(a, ours("mmlu_x", "00"), seed=1, date="2025-01-02T00-00-01.000000")
    write_run(a, ours("mmlu_x", "00"), seed=2, date="2025-01-02T00-00-02.000000")
    result = pair(b, a)
    assert sorted(result.subtasks["seed"]) == ["1", "2"]
    # seed 1 forgets both items, seed 2 the one it knew: F = 1 and 1/2
    assert sorted(result.subtasks["F"]) == [0.5, 1.0]
    assert any("loop" in n and "already searched" in n for n in result.notes)


def test_nothing_found_does_not_claim_every_subfolder_was_searched(tmp_path):
    b, a = dirs(tmp_path)
    b.mkdir()
    b.joinpath("gone").symlink_to(tmp_path / "missing", target_is_directory=True)
    write_run(a, ours("mmlu_x", "1"))
    with pytest.raises(PairingError) as e:
        pair(b, a)
    assert "searched every subdirectory" not in str(e.value)
    assert "readable subfolders, following links" in str(e.value)


def _deny(monkeypatch, denied: Path) -> None:
    """Make ``denied`` (a folder or file) unreadable even for root, as chmod 000 is for other users."""
    real_scandir, real_open = os.scandir, builtins.open

    def scandir(path=".", *args):
        if Path(path) == denied:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path, *args)

    def open_(file, *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and Path(file) == denied:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    if os.geteuid() != 0:  # a real user: the real permission, and no simulation needed
        denied.chmod(0)
        return
    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(builtins, "open", open_)
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: open_(self, "r", *a[1:], **k).read())


def test_unreadable_folder_is_named_with_its_cause(tmp_path, monkeypatch):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "11"), seed=1, date="2025-01-01T00-00-01.000000")
    write_run(b / "locked", ours("mmlu_x", "10"), seed=2, date="2025-01-01T00-00-02.000000")
    write_run(a, ours("mmlu_x", "00"), seed=1)
    _deny(monkeypatch, b / "locked")
    found = find_runs(b)
    assert [(p["path"], "Permission denied" in p["problem"]) for p in found.problems] == [(str(b / "locked"), True)]
    result = pair(b, a)
    assert any(str(b / "locked") in w and "cannot be read" in w for w in result.warnings)


def test_unreadable_results_and_samples_files_are_named(tmp_path, monkeypatch):
    b = tmp_path / "before"
    results = write_run(b, ours("mmlu_x", "11"), seed=1, date="2025-01-01T00-00-01.000000")
    other = write_run(b, ours("mmlu_y", "11"), seed=1, date="2025-01-01T00-00-02.000000")
    old_layout = b / "model" / "results.json"  # 0.4.0-0.4.2 name: recognised by its first bytes
    old_layout.write_bytes(other.read_bytes())
    samples = results.parent / "samples_postforget_mmlu_x_2025-01-01T00-00-01.000000.jsonl"
    real_open = builtins.open
    denied = {samples, old_layout}

    def open_(file, *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and Path(file) in denied:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", open_)
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: open_(self, "r", encoding="utf-8").read())
    found = find_runs(b)
    problems = {p["path"]: p["problem"] for p in found.problems}
    assert "file cannot be read (Permission denied)" in problems[str(old_layout)]
    run = next(r for r in found.task_runs if r.task == "postforget_mmlu_x")
    assert run.unusable is not None and "Permission denied" in run.unusable


def test_lighteval_detection_survives_an_unreadable_results_file(tmp_path, monkeypatch):
    root = tmp_path / "run" / "results" / "m"
    root.mkdir(parents=True)
    locked = root / "results_2025-01-01T00-00-00.000000.json"
    locked.write_text('{"config_general": {}}', encoding="utf-8")
    _deny(monkeypatch, locked)
    assert by_name("lighteval").matches(tmp_path / "run") is False
    found = by_name("lighteval").find_runs(tmp_path / "run")
    assert found.problems == [
        {"path": str(locked), "problem": "results file cannot be read (Permission denied); skipped"}
    ]


def test_a_lighteval_run_with_a_link_back_to_itself_is_recognised_and_read_once(tmp_path):
    import shutil

    from tests.helpers import paths

    root = tmp_path / "run"
    shutil.copytree(paths.FIXTURES / "lighteval" / "v0_13" / "before", root)
    root.joinpath("current").symlink_to(root, target_is_directory=True)  # searched before details/ and results/
    assert by_name("lighteval").matches(root) is True
    found = by_name("lighteval").find_runs(root)
    assert len(found.task_runs) == 6 and found.problems == []
    assert found.notes == [f"{root / 'current'} is a link to {root}, already searched; not read twice"]


def _read(run):
    from postforget_lmeval.sources import ReadRequest

    return by_name("lmeval").read([ReadRequest(run, None, None, None)], 1, None)[0]


def _malformed(got) -> int:
    return sum(p.count for p in got.problems if p.kind == "malformed")


def test_json_lines_whose_first_line_starts_with_a_bracket_lose_that_line_only(tmp_path):
    b = tmp_path / "b"
    task = ours("mmlu_x", "1101")
    task["postforget_mmlu_x"][0] = '["a stray list", 1]\n'  # a corrupt first line that happens to open with [
    write_run(b, task)
    got = _read(find_runs(b).task_runs[0])
    assert got.rows.columns["doc_id"] == [1, 2, 3]
    assert got.rows.columns["correct"] == [1, 0, 1]
    assert _malformed(got) == 1


def test_an_old_layout_array_with_one_corrupt_element_loses_that_element_only(tmp_path):
    from tests.helpers.lmeval_runs import write_old_run

    old = tmp_path / "old"
    write_old_run(old, ours("mmlu_x", "10110"))
    (samples,) = old.glob("*_postforget_mmlu_x.jsonl")
    text = samples.read_text(encoding="utf-8")
    third = text.index('"doc_id": 2')
    samples.write_text(text[:third] + '"doc_id": 2, "doc": {"question": "cut' + text[text.index("\n  },", third) :])
    run = find_runs(old).task_runs[0]
    got = _read(run)
    assert got.rows.columns["doc_id"] == [0, 1, 3, 4]
    assert got.rows.columns["correct"] == [1, 0, 1, 0]
    assert got.rows.columns["locator"] == [0, 1, 3, 4]  # element indices: item 4 is read back as item 4
    assert _malformed(got) == 1
    assert by_name("lmeval").load_item(str(samples), 4).doc_id == 4


@pytest.mark.parametrize("record", [True, False])
def test_a_line_cut_and_run_into_the_next_is_a_malformed_line(tmp_path, record):
    from tests.helpers.lmeval_runs import ordinary

    b = tmp_path / "b"
    task = ours("mmlu_x", "101") if record else ordinary("plain", "101")
    lines = next(iter(task.values()))
    for cut in range(1, len(lines[0]) - 1, 13):
        write_run(b, {next(iter(task)): [lines[0][:cut] + lines[1], lines[2]]})
        got = _read(find_runs(b).task_runs[0])
        assert got.rows.columns["doc_id"] == [2], cut  # never item 0 carrying item 1's hash and score
        assert _malformed(got) == 1, cut


def test_an_item_without_a_usable_chance_k_is_named_and_the_category_says_what_it_averages(tmp_path):
    import json

    b, a = dirs(tmp_path)
    for root, bits in ((b, ("1100", "1010")), (a, ("1010", "0110"))):
        tasks = {**ours("mmlu_x", bits[0], category="Logic"), **ours("mmlu_y", bits[1], category="Logic")}
        lines = tasks["postforget_mmlu_y"]
        for doc_id, k in ((1, 1), (2, "four"), (3, None)):
            sample = json.loads(lines[doc_id])
            if k is None:
                del sample["postforget"]["k"]
            else:
                sample["postforget"]["k"] = k
            lines[doc_id] = json.dumps(sample) + "\n"
        write_run(root, tasks, seed=1)
    result = pair(b, a)
    rows = result.subtasks.set_index("subtask")
    assert rows.loc["mmlu_x", "k"] == 4.0 and rows.loc["mmlu_y", "F_true"] != rows.loc["mmlu_y", "F_true"]  # NaN
    bad = [p for p in result.summary["problems"]["before"] if p["kind"] == "bad_k"]
    assert [p["count"] for p in bad] == [3]
    assert "doc 1: k=1, doc 2: k='four', doc 3: k=None" in bad[0]["problem"]
    assert any("category Logic: F_chance, F_true and BT_true average 1 of its 2" in w for w in result.warnings)
    logic = result.categories.query("category == 'Logic' and average == 'macro'").iloc[0]
    assert logic["n_subtasks"] == 2
    assert logic["F_true_mean"] == rows.loc["mmlu_x", "F_true"]


def test_a_samples_file_gone_between_finding_and_reading_is_a_problem_not_a_traceback(tmp_path):
    from postforget_lmeval.sources import ReadRequest

    b = tmp_path / "b"
    write_run(b, ours("mmlu_x", "10"))
    run = find_runs(b).task_runs[0]
    run.samples_path.unlink()
    got = by_name("lmeval").read([ReadRequest(run, None, None, None)], 1, None)[0]
    assert len(got.rows) == 0
    assert [(p.kind, "No such file" in p.message) for p in got.problems] == [("unreadable", True)]
