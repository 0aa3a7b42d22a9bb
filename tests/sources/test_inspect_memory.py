"""Reading an inspect log takes memory bounded by its largest sample, not by the log's unpacked size.

The log is inspect_ai's own capitals log (``tests/fixtures/inspect/before_eval``) grown to many samples, each
with a long reply: a few hundred KB deflated that unpack to tens of MB. inspect_ai's ``read_eval_log`` held every
sample at once (a 220 KB log unpacking to 200 MB took 670 MB); the reader now parses one member at a time and
keeps no reply text. Finding the runs reads each log's header only (around the samples, in a ``.json`` log whose
keys were sorted), and recognising a log only its first bytes.
"""

from __future__ import annotations

import json
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from postforget_lmeval.sources import ReadRequest
from postforget_lmeval.sources._inspect import SOURCE
from tests.helpers import paths
from tests.sources.inspect_logs import CAPITALS_LOG, copy_side, task_run

pytest.importorskip("inspect_ai.log", reason="the inspect extra is not installed")

N_SAMPLES = 24
REPLY_BYTES = 2 << 20  # per sample, twice in it (the completion and the assistant message)


def _grown(folder: Path) -> Path:
    """The capitals log with N_SAMPLES samples (copies of sample 1 under new ids), each replying REPLY_BYTES."""
    log = next(folder.glob(CAPITALS_LOG))
    with zipfile.ZipFile(log) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    head = json.loads(members["header.json"])
    head["eval"]["dataset"].update(samples=N_SAMPLES, sample_ids=list(range(1, N_SAMPLES + 1)))
    sample = json.loads(members["samples/1_epoch_1.json"])
    reply = "Let me think. " * (REPLY_BYTES // 14) + "\n\nANSWER: A"
    sample["output"]["completion"] = sample["output"]["choices"][0]["message"]["content"] = reply
    with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(head))
        for i in range(1, N_SAMPLES + 1):
            archive.writestr(f"samples/{i}_epoch_1.json", json.dumps({**sample, "id": i}))
    return log


def test_peak_memory_is_bounded_by_the_largest_sample_not_the_log(tmp_path):
    folder = copy_side("before_eval", tmp_path / "before")
    log = _grown(folder)
    with zipfile.ZipFile(log) as archive:
        unpacked = sum(i.file_size for i in archive.infolist())
    assert log.stat().st_size < 2 << 20 and unpacked > N_SAMPLES * 2 * REPLY_BYTES  # small log, large unpacked
    run = task_run(folder)
    tracemalloc.start()
    try:
        (read,) = SOURCE.read([ReadRequest(run, None, None)], 1, None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(read.rows) == N_SAMPLES and read.problems == []
    assert read.rows.columns["response_chars"][0] == len("Let me think. " * (REPLY_BYTES // 14) + "\n\nANSWER: A")
    assert peak < 8 * 2 * REPLY_BYTES  # a few copies of one sample; the log unpacks to 48 of them


def _peak_finding_runs(folder: Path) -> tuple[list[str], int]:
    """The tasks found under ``folder`` and the peak memory finding them took (inspect_ai imported before)."""
    SOURCE.find_runs(paths.FIXTURES / "inspect" / "before_json")
    tracemalloc.start()
    try:
        found = SOURCE.find_runs(folder)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found.problems == []
    return sorted(r.task for r in found.task_runs), peak


def test_finding_the_runs_reads_a_logs_header_not_its_samples(tmp_path):
    folder = copy_side("before_eval", tmp_path / "before")
    _grown(folder)
    tasks, peak = _peak_finding_runs(folder)
    assert tasks == ["mmlu_reasoning_letter:abstract_algebra_5_shots", "synth_capitals"]
    assert peak < 2 * REPLY_BYTES  # less than one sample's reply; the samples hold 48 of them


def test_the_header_of_a_json_log_with_sorted_keys_is_read_around_its_samples(tmp_path):
    """Its header fields sit on both sides of ``samples``, which is passed over without being built."""
    folder = copy_side("before_json", tmp_path / "before")
    log = next(folder.glob("*synth-capitals*.json"))
    doc = json.loads(log.read_text(encoding="utf-8"))
    reply = "Let me think. " * (REPLY_BYTES // 14)
    for sample in doc["samples"]:
        sample["output"]["completion"] = reply
    log.write_text(json.dumps(doc, sort_keys=True), encoding="utf-8")
    tasks, peak = _peak_finding_runs(folder)
    assert tasks == ["mmlu_reasoning_letter:abstract_algebra_5_shots", "synth_capitals"]
    assert log.stat().st_size > 6 * REPLY_BYTES and peak < 2 * REPLY_BYTES  # ijson hands over one reply at a time


def test_recognising_logs_reads_only_the_first_bytes_of_a_large_json_file_beside_them(tmp_path):
    folder = copy_side("before_json", tmp_path / "before")
    (folder / "results.json").write_bytes(b'{"scores": [' + b"0.5, " * (4 << 20) + b"0.5]}")  # 20 MB, not a log
    tasks, peak = _peak_finding_runs(folder)
    assert tasks == ["mmlu_reasoning_letter:abstract_algebra_5_shots", "synth_capitals"]
    assert peak < 4 << 20  # the logs' headers, not the 20 MB file
