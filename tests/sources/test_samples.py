"""Finding runs and streaming sample lines: the fast tail parse must agree with a full json parse."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from postforget_lmeval.sources.base import ReadRequest, TaskRun
from postforget_lmeval.sources.lmeval import scan_range
from postforget_lmeval.sources.lmeval_layout import find_runs, run_seed

from tests.helpers.lmeval_runs import pf_record, sample_line, write_run

# Any text a model or dataset may produce, including the byte patterns the fast path searches for.
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60) | st.sampled_from(
    [
        '", "filter": "none", "metrics": ["acc"], "doc_hash": "',
        '"doc_hash": "x"}',
        '\n{"doc_id": 1, ',
        '\\"',
        "é😀\u2028",
    ]
)


def ScanSpec(path: str, filter_: str | None, metric: str | None, multiple_choice: bool) -> ReadRequest:  # noqa: N802
    """A read request for one samples file, as pairing makes one."""
    run = TaskRun(
        task="t",
        results_path=Path(path),
        date="",
        samples_path=Path(path),
        seed=None,
        seed_source="none logged",
        output_type="multiple_choice" if multiple_choice else "generate_until",
        filters=(),
        metrics=(),
        group=None,
        n_expected=None,
    )
    return ReadRequest(run, filter_, metric)


def scan_file(path: Path, spec: ReadRequest | None = None, start: int = 0, end: int | None = None):
    spec = spec or ScanSpec(str(path), None, None, False)
    return scan_range(spec, start, path.stat().st_size if end is None else end)


def reference(lines: list[str]) -> list[tuple[int, str, int, str | None, str | None]]:
    """What a full json.loads of every line says, for the fields pairing keeps."""
    out = []
    for line in lines:
        s = json.loads(line)
        out.append(
            (
                s["doc_id"],
                s["doc_hash"],
                s["postforget"]["correct"],
                s["postforget"]["answer"],
                s["postforget"]["status"],
            )
        )
    return out


def fields(chunk) -> list[tuple[int, str, int, str | None, str | None]]:
    return list(zip(chunk.doc_id, chunk.doc_hash, chunk.correct, chunk.answer, chunk.status))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(st.tuples(TEXT, TEXT, TEXT, st.booleans()), min_size=1, max_size=8))
def test_fast_path_agrees_with_full_parse(tmp_path_factory, items):
    path = tmp_path_factory.mktemp("s") / "samples.jsonl"
    lines = [
        sample_line(
            i,
            None,
            doc={"question": q, "target": "x", "doc_hash": q},
            response=r,
            record=pf_record("mmlu_x", int(ok), answer=a or None, status="answered" if ok else "invalid"),
        )
        for i, (q, r, a, ok) in enumerate(items)
    ]
    path.write_text("".join(lines), encoding="utf-8")
    chunk = scan_file(path)
    assert fields(chunk) == reference(lines)
    assert chunk.slow_lines == 0 and not chunk.malformed and chunk.truncated is None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(range_bytes=st.integers(min_value=1, max_value=6000), bits=st.text(alphabet="01", min_size=1, max_size=12))
def test_byte_ranges_read_every_line_once(tmp_path_factory, range_bytes, bits):
    path = tmp_path_factory.mktemp("r") / "samples.jsonl"
    lines = [sample_line(i, None, record=pf_record("mmlu_x", int(b))) for i, b in enumerate(bits)]
    path.write_text("".join(lines), encoding="utf-8")
    size = path.stat().st_size
    spec = ScanSpec(str(path), "none", None, False)
    parts = [scan_range(spec, s, min(s + range_bytes, size)) for s in range(0, size, range_bytes)]
    whole = parts[0]
    for part in parts[1:]:
        whole.extend(part)
    assert fields(whole) == reference(lines)
    offsets = [0]
    for line in lines[:-1]:
        offsets.append(offsets[-1] + len(line.encode()))
    assert whole.locator == offsets


def test_cut_last_line_is_truncation_not_malformed(tmp_path):
    path = tmp_path / "samples.jsonl"
    lines = [sample_line(i, None, record=pf_record("mmlu_x", 1)) for i in range(3)]
    data = "".join(lines).encode()
    last_start = len(data) - len(lines[-1].encode())
    for cut in range(last_start + 1, len(data) - 1, 97):
        path.write_bytes(data[:cut])
        chunk = scan_file(path)
        assert chunk.doc_id == [0, 1] and chunk.truncated == last_start and not chunk.malformed
    path.write_bytes(data[:-1])  # only the final newline missing: the line is complete
    chunk = scan_file(path)
    assert chunk.doc_id == [0, 1, 2] and chunk.truncated is None


def test_other_key_order_falls_back_to_full_parse(tmp_path):
    path = tmp_path / "samples.jsonl"
    line = json.loads(sample_line(4, None, record=pf_record("mmlu_x", 1)))
    path.write_text(json.dumps(line, sort_keys=True) + "\n" + "not json\n", encoding="utf-8")
    chunk = scan_file(path)
    assert chunk.doc_id == [4] and chunk.correct == [1] and chunk.slow_lines == 1
    assert chunk.malformed == [len(json.dumps(line, sort_keys=True)) + 1]


def test_ordinary_samples_metric_filter_and_options(tmp_path):
    path = tmp_path / "samples.jsonl"
    lines = [
        sample_line(0, 1.0, n_options=3, filter_="a"),
        sample_line(0, 0.0, n_options=3, filter_="b"),
        sample_line(1, 0.0, n_options=5, filter_="a"),
    ]
    path.write_text("".join(lines), encoding="utf-8")
    chunk = scan_file(path, ScanSpec(str(path), "a", None, True))
    assert chunk.doc_id == [0, 1] and chunk.correct == [1, 0] and chunk.k == [3.0, 5.0]
    assert chunk.answer == ["A", "A"] and chunk.gold == ["A", "A"] and chunk.other_filter == 1
    assert chunk.metric_used == "acc"
    path.write_text(sample_line(0, 1.0, n_options=4, target="2"), encoding="utf-8")
    assert scan_file(path, ScanSpec(str(path), None, None, True)).gold == ["C"]  # logged option index -> letter
    path.write_text("".join(lines), encoding="utf-8")
    missing = scan_file(path, ScanSpec(str(path), "a", "exact_match", True))
    assert missing.doc_id == [] and missing.no_metric == 2 and missing.metrics_seen == ["acc"]


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


def test_response_length_from_the_logged_bytes(tmp_path):
    """Exact for plain ASCII; escapes and multi-byte characters only ever make it longer."""
    path = tmp_path / "samples.jsonl"
    responses = ["The answer is B.", 'He said "B"\nAnswer: B', "Réponse : B 😀"]
    lines = [sample_line(i, None, response=r, record=pf_record("mmlu_x", 1)) for i, r in enumerate(responses)]
    path.write_text("".join(lines), encoding="utf-8")
    chars = scan_file(path).response_chars
    assert chars[0] == len(responses[0])
    assert chars[1] == len(json.dumps(responses[1])) - 2 > len(responses[1])  # two escapes
    assert chars[2] == len(responses[2].encode()) > len(responses[2])
