"""Reading lm-eval samples files: the rows of each sample, and every problem named with where it is."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from postforget_lmeval.sources import ReadRequest, RunRead, TaskRun, by_name
from postforget_lmeval.sources._lmeval_runs import find_runs, run_seed
from tests.helpers.lmeval_runs import pf_record, sample_line, write_old_run, write_run

# Any text a model or dataset may produce, including look-alikes of the keys of a sample line.
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60) | st.sampled_from(
    ['", "filter": "none", "metrics": ["acc"], "doc_hash": "', '"doc_hash": "x"}', '\n{"doc_id": 1, ', '\\"']
    + ["é😀\u2028"]
)


def request(path: Path, filter_: str | None = None, metric: str | None = None, multiple_choice: bool = False,
            rescore: str | None = None) -> ReadRequest:  # fmt: skip
    """A read request for one samples file, as pairing makes one."""
    run = TaskRun(
        task="t", results_path=path, date="", samples_path=path, seed=None, seed_source="none logged",
        output_type="multiple_choice" if multiple_choice else "generate_until", filters=(), metrics=(), group=None,
        n_expected=None, self_scored=rescore is not None,
    )  # fmt: skip
    return ReadRequest(run, filter_, metric, rescore)


def read(path: Path, req: ReadRequest | None = None) -> RunRead:
    return by_name("lmeval").read([req or request(path)], 1, None)[0]


def problems(got: RunRead) -> dict[str, tuple[str, int]]:
    return {p.kind: (p.message, p.count) for p in got.problems}


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(lines), encoding="utf-8")
    return path


def ours(n: int, response: str = "Reasoning. Answer: B") -> list[str]:
    return [
        sample_line(i, None, response=f"{response} {i}", record=pf_record("mmlu_x", i % 2, answer="AB"[i % 2]))
        for i in range(n)
    ]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(st.tuples(TEXT, TEXT, TEXT, st.booleans()), min_size=1, max_size=8))
def test_rows_are_what_each_line_logs(tmp_path_factory, items):
    lines = [
        sample_line(i, None, doc={"question": q, "doc_hash": q}, response=r,
                    record=pf_record("mmlu_x", int(ok), answer=a or None, status="answered" if ok else "invalid"))
        for i, (q, r, a, ok) in enumerate(items)
    ]  # fmt: skip
    got = read(write(tmp_path_factory.mktemp("s") / "samples.jsonl", lines))
    samples = [json.loads(line) for line in lines]
    columns = got.rows.columns
    assert columns["doc_id"] == [s["doc_id"] for s in samples]
    assert columns["doc_hash"] == [s["doc_hash"] for s in samples]
    assert columns["correct"] == [s["postforget"]["correct"] for s in samples]
    assert columns["answer"] == [s["postforget"]["answer"] for s in samples]
    assert columns["status"] == [s["postforget"]["status"] for s in samples]
    assert columns["locator"] == [sum(len(x.encode()) for x in lines[:i]) for i in range(len(lines))]
    assert not got.problems and got.info["lines"] == len(lines)


def test_a_line_that_is_not_json_is_counted_and_named(tmp_path):
    lines = ours(6)
    lines[2] = re.sub(r'"doc_hash": "[0-9a-f]', '"doc_hash": "\t', lines[2], count=1)  # a raw control character
    lines[4] = "not json\n"
    got = read(write(tmp_path / "samples.jsonl", lines))
    assert got.rows.columns["doc_id"] == [0, 1, 3, 5]
    first = len("".join(lines[:2]).encode())
    assert problems(got) == {"malformed": (f"2 malformed line(s) skipped (2 not JSON; first at byte {first})", 2)}


def test_a_line_cut_and_run_into_the_next_is_malformed(tmp_path):
    """An interrupted write followed by the next line: one line in the file, neither sample whole."""
    lines = ours(4)
    cut = lines[1][: lines[1].index('"doc_hash"') - 40]  # cut inside the logged response
    path = write(tmp_path / "samples.jsonl", [lines[0], cut + lines[2], lines[3]])
    got = read(path)
    assert got.rows.columns["doc_id"] == [0, 3]
    at = len(lines[0].encode())
    assert problems(got) == {"malformed": (f"1 malformed line(s) skipped (1 not JSON; first at byte {at})", 1)}
    assert got.info["lines"] == 3


def test_cut_last_line_is_truncation_not_malformed(tmp_path):
    path = tmp_path / "samples.jsonl"
    lines = ours(3)
    data = "".join(lines).encode()
    last_start = len(data) - len(lines[-1].encode())
    for cut in range(last_start + 1, len(data) - 1, 97):
        path.write_bytes(data[:cut])
        got = read(path)
        assert got.rows.columns["doc_id"] == [0, 1] and got.info["lines"] == 2
        message = f"ends mid-line at byte {last_start} (interrupted run?); the incomplete last line is ignored"
        assert problems(got) == {"truncated": (message, 1)}
    path.write_bytes(data[:-1])  # only the final newline missing: the line is complete
    got = read(path)
    assert got.rows.columns["doc_id"] == [0, 1, 2] and not got.problems


def test_any_key_order_reads_alike(tmp_path):
    line = json.loads(sample_line(4, None, record=pf_record("mmlu_x", 1)))
    path = write(tmp_path / "samples.jsonl", [json.dumps(line, sort_keys=True) + "\n"])
    got = read(path)
    assert got.rows.columns["doc_id"] == [4] and got.rows.columns["correct"] == [1] and not got.problems


def test_ordinary_samples_metric_filter_and_options(tmp_path):
    path = tmp_path / "samples.jsonl"
    lines = [
        sample_line(0, 1.0, n_options=3, filter_="a"),
        sample_line(0, 0.0, n_options=3, filter_="b"),
        sample_line(1, 0.0, n_options=5, filter_="a"),
    ]
    write(path, lines)
    got = read(path, request(path, "a", None, True))
    columns = got.rows.columns
    assert columns["doc_id"] == [0, 1] and columns["correct"] == [1, 0] and columns["k"] == [3.0, 5.0]
    assert columns["answer"] == ["A", "A"] and columns["gold"] == ["A", "A"] and got.info["metric"] == "acc"
    assert columns["option_ll"] == [[-1.0, -5.0, -5.0], [-1.0, -5.0, -5.0, -5.0, -5.0]]
    write(path, [sample_line(0, 1.0, n_options=4, target="2")])
    assert read(path, request(path, None, None, True)).rows.columns["gold"] == ["C"]  # option index -> letter
    write(path, lines)
    missing = read(path, request(path, "a", "exact_match", True))
    assert not len(missing.rows)
    assert problems(missing) == {"no_metric": ("2 sample(s) without metric exact_match (logged: acc) skipped", 2)}


def test_non_binary_scores_are_named_and_skipped(tmp_path):
    path = write(tmp_path / "samples.jsonl", [sample_line(0, 0.5), sample_line(1, 1.0), sample_line(2, "x")])
    got = read(path)
    assert got.rows.columns["doc_id"] == [1]
    message = "2 sample(s) with a non-binary score (e.g. 0.5, 'x') skipped: a score in (0,1) is not a transition"
    assert problems(got)["non_binary"] == (message, 2)


def test_repeats_are_replicates(tmp_path):
    record = [pf_record("mmlu_x", c) for c in (1, 0, 1)]
    line = json.loads(sample_line(0, None, record=record)) | {"resps": [["one", "two", "three!"]]}
    got = read(write(tmp_path / "samples.jsonl", [json.dumps(line) + "\n"]))
    assert got.rows.columns["replicate"] == [0, 1, 2] and got.rows.columns["correct"] == [1, 0, 1]
    assert got.rows.columns["response_chars"] == [3.0, 3.0, 6.0]


def test_response_length_in_characters(tmp_path):
    """A reply's length is its characters as decoded: escapes and multi-byte characters count once."""
    responses = ["The answer is B.", 'He said "B"\nAnswer: B', "Réponse : B 😀"]
    lines = [sample_line(i, None, response=r, record=pf_record("mmlu_x", 1)) for i, r in enumerate(responses)]
    chars = read(write(tmp_path / "samples.jsonl", lines)).rows.columns["response_chars"]
    assert chars == [16.0, 21.0, 13.0]


def test_rescoring_reextracts_and_keeps_the_logged_score(tmp_path):
    doc = {"pf_question": "Q?", "pf_options": ["w", "x", "y", "z"], "pf_gold": "B", "pf_format": "letter"}
    lines = [
        sample_line(0, None, doc=doc, response="The answer is (B).", record=pf_record("mmlu_x", 0)),
        sample_line(1, None, response="The answer is (B).", record=pf_record("mmlu_x", 0)),  # no pf_ fields
    ]
    path = write(tmp_path / "samples.jsonl", lines)
    got = read(path, request(path, rescore="strict"))
    assert got.rows.columns["correct"] == [1, 0] and got.rows.columns["correct_logged"] == [0, 0]
    assert got.rows.columns["status"][0] == "answered"
    assert problems(got)["not_rescored"][1] == 1


@pytest.mark.parametrize("as_lines", [False, True])
def test_old_layouts_read_like_the_current_one(tmp_path, as_lines):
    """0.4.0-0.4.2: one JSON array (locators: element indices), or one sample a line; no doc_hash nor filter."""
    lines = ours(3)
    write_old_run(tmp_path / "old", {"postforget_mmlu_x": lines}, as_lines=as_lines)
    write_run(tmp_path / "new", {"postforget_mmlu_x": lines})
    old, new = (find_runs(tmp_path / side).task_runs[0] for side in ("old", "new"))
    got_old, got_new = (read(r.samples_path, ReadRequest(r, None, None)) for r in (old, new))
    for name in ("doc_id", "doc_hash", "correct", "answer", "response_chars"):
        assert got_old.rows.columns[name] == got_new.rows.columns[name]
    if not as_lines:
        assert got_old.rows.columns["locator"] == [0, 1, 2]
    assert not got_old.problems


def test_workers_read_what_one_process_reads(tmp_path, monkeypatch):
    from postforget_lmeval.sources import _lmeval

    paths = [write(tmp_path / f"samples_{i}.jsonl", ours(5 + i)) for i in range(3)]
    write(paths[1], [*ours(2), "broken\n"])
    requests = [request(p) for p in paths]
    here = _lmeval.read_files(requests, 1, None)
    monkeypatch.setattr(_lmeval, "PARALLEL_MIN_BYTES", 0)
    seen: list[tuple[int, int]] = []
    workers = _lmeval.read_files(requests, 2, lambda done, total: seen.append((done, total)))
    for a, b in zip(here, workers):
        assert a.rows.columns == b.rows.columns and a.problems == b.problems and a.info == b.info
    total = sum(p.stat().st_size for p in paths)
    assert len(seen) == 3 and seen[-1] == (total, total)


def test_run_seed_prefers_the_sampling_seed():
    assert run_seed({"random_seed": 0}, {}) == (0, "random_seed")
    assert run_seed({"random_seed": 0, "model_args": "pretrained=x,seed=5"}, {}) == (5, "model_args seed")
    assert run_seed({"random_seed": 0, "model_args": {"seed": 5}, "gen_kwargs": "seed=6"}, {}) == (6, "gen_kwargs seed")
    assert run_seed({"random_seed": 0, "gen_kwargs": {"seed": 6}}, {"generation_kwargs": {"seed": 7}}) == (
        7,
        "generation_kwargs seed",
    )
    assert run_seed({"random_seed": None, "torch_seed": 3}, {}) == (3, "torch_seed")
    assert run_seed({}, {}) == (None, "none logged")


def test_find_runs_at_any_depth_with_groups_and_problems(tmp_path):
    lines = {"mmlu_a": [sample_line(0, 1.0)], "mmlu_b": [sample_line(0, 1.0)]}
    groups = {"mmlu": ["mmlu_stem"], "mmlu_stem": ["mmlu_a"], "other": ["mmlu_b"]}
    write_run(tmp_path / "a" / "b" / "c", lines, group_subtasks=groups)
    write_run(tmp_path / "nolog", {"mmlu_a": []}, log_samples=False)
    (tmp_path / "results_2025-01-01T00-00-00.000000.json").write_text("{cut")
    (tmp_path / "results_2025-02-01T00-00-00.000000.json").write_text('{"not": "lm-eval"}')
    (tmp_path / "samples_x_2025-03-01T00-00-00.000000.jsonl").write_text("")
    found = find_runs(tmp_path)
    by_task = {(r.task, r.samples_path is not None): r for r in found.task_runs}
    assert by_task[("mmlu_a", True)].group == "mmlu_stem" and by_task[("mmlu_b", True)].group == "other"
    assert ("mmlu_a", False) in by_task
    problems = sorted(p["problem"].split(" ")[0] for p in found.problems)
    assert problems == ["samples", "unreadable"]
