"""Messages that must say what is really wrong: a wrong one sends a user back to the GPU or hunting for a moved file."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from postforget_lmeval import PairingError, pair
from postforget_lmeval.cli import main
from tests.helpers.lmeval_runs import ours, write_run


def test_a_gzipped_samples_file_is_called_compressed_not_missing(tmp_path):
    b, a = tmp_path / "before", tmp_path / "after"
    write_run(b, ours("mmlu_x", "11"))
    write_run(a, ours("mmlu_x", "10"))
    (samples,) = (b / "model").glob("samples_*.jsonl")
    samples.with_name(samples.name + ".gz").write_bytes(gzip.compress(samples.read_bytes()))
    samples.unlink()
    with pytest.raises(PairingError) as e:
        pair(b, a)
    assert "is compressed (.gz)" in str(e.value) and "--log_samples" not in str(e.value)


def test_a_byte_order_mark_is_read_past_and_nul_bytes_are_named(tmp_path):
    b, a = tmp_path / "before", tmp_path / "after"
    tasks = ours("mmlu_x", "1111")
    lines = tasks["postforget_mmlu_x"]
    lines[0] = "\ufeff" + lines[0]  # saved by an editor that writes a BOM
    lines[2] = "\x00" * 40 + "\n"  # zero-filled after a crash
    write_run(b, tasks)
    write_run(a, ours("mmlu_x", "1010"))
    result = pair(b, a)
    assert result.subtasks["n"].tolist() == [3]
    (malformed,) = [p for p in result.summary["problems"]["before"] if p["kind"] == "malformed"]
    assert "1 NUL bytes" in malformed["problem"]
    out = tmp_path / "out"
    assert main([str(b), str(a), "-o", str(out), "-q", "--no-plot"]) == 0
    assert (
        main(["show", str(out), "--subtask", "mmlu_x", "--transition", "1->1"]) == 0
    )  # item 0, read back past its BOM


def test_invalid_utf8_is_named_as_such(tmp_path):
    b, a = tmp_path / "before", tmp_path / "after"
    write_run(b, ours("mmlu_x", "111"))
    write_run(a, ours("mmlu_x", "101"))
    (samples,) = (b / "model").glob("samples_*.jsonl")
    raw = samples.read_bytes().split(b"\n")
    raw[1] = raw[1].replace(b"Question 1", b"Question \xff")
    samples.write_bytes(b"\n".join(raw))
    (malformed,) = [p for p in pair(b, a).summary["problems"]["before"] if p["kind"] == "malformed"]
    assert "not valid UTF-8" in malformed["problem"]


def test_seed_match_order_names_the_shared_seeds_it_pairs_with_others(tmp_path):
    b, a = tmp_path / "before", tmp_path / "after"
    for seed, bits in ((1, "11"), (2, "10")):
        write_run(b, ours("mmlu_x", bits), seed=seed, date=f"2025-01-01T00-00-0{seed}.000000")
    for seed, bits in ((2, "00"), (3, "01")):
        write_run(a, ours("mmlu_x", bits), seed=seed, date=f"2025-01-02T00-00-0{seed}.000000")
    result = pair(b, a, seed_match="order")
    (message,) = [w for w in result.warnings if "sorted order" in w]
    assert "no seed shared" not in message and "seeds 2 are on both sides" in message


def paired(tmp_path, before: str, after: str) -> tuple[Path, Path]:
    """The before folder and the output folder of a pairing made by the command."""
    b, a = tmp_path / "before", tmp_path / "after"
    write_run(b, ours("mmlu_x", before))
    write_run(a, ours("mmlu_x", after))
    out = tmp_path / "out"
    assert main([str(b), str(a), "-o", str(out), "-q", "--no-plot"]) == 0
    return b, out


def test_show_says_how_many_exist_and_refuses_a_negative_limit(tmp_path, capsys):
    _, out = paired(tmp_path, "11111", "00001")
    capsys.readouterr()
    assert main(["show", str(out), "--subtask", "mmlu_x", "--limit", "2"]) == 0
    assert "the first 2 of 4 forgotten item(s) of mmlu_x" in capsys.readouterr().out
    assert main(["show", str(out), "--subtask", "mmlu_x", "--limit", "0"]) == 0
    assert "4 forgotten item(s) of mmlu_x" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main(["show", str(out), "--subtask", "mmlu_x", "--limit", "-3"])
    assert e.value.code == 2 and "not a count" in capsys.readouterr().err


def test_show_on_a_changed_file_says_it_changed_not_that_it_moved(tmp_path, capsys):
    b, out = paired(tmp_path, "11", "01")
    (samples,) = (b / "model").glob("samples_*.jsonl")
    lines = samples.read_text(encoding="utf-8").splitlines(True)
    samples.write_text(json.dumps({"doc_id": "0"}) + "\n" + "".join(lines[1:]), encoding="utf-8")
    capsys.readouterr()
    assert main(["show", str(out), "--subtask", "mmlu_x"]) == 1
    err = capsys.readouterr().err
    assert "changed since pairing" in err and "moved" not in err


def test_show_on_a_broken_samples_parquet_is_one_message(tmp_path, capsys):
    _, out = paired(tmp_path, "11", "01")
    (out / "samples.parquet").write_bytes(b"PAR1 not really")
    capsys.readouterr()
    assert main(["show", str(out), "--subtask", "mmlu_x"]) == 1
    err = capsys.readouterr().err
    assert "cannot read" in err and "samples.parquet" in err and "Traceback" not in err
