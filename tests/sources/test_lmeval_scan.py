"""The block path of postforget records checks every line's layout; a line it cannot vouch for sends the
block to the paths that parse, and the fields still agree with a full json parse of every line."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from postforget_lmeval.sources.base import ReadRequest, TaskRun
from postforget_lmeval.sources.lmeval import scan_range

from tests.helpers.lmeval_runs import pf_record, sample_line


def _sub(pattern: str, replacement: str) -> Callable[[str], str]:
    return lambda line: re.sub(pattern, replacement, line, count=1)


# Each keeps the line valid JSON (so a full parse reads it) while breaking something the block path relies on.
ODD_LINES = {
    "upper-case doc_hash": _sub(r'"doc_hash": "[0-9a-f]', '"doc_hash": "F'),
    # escapes as long as the digits they replace: the raw bytes are not what JSON decodes
    "escaped doc_hash": _sub(r'"doc_hash": "[0-9a-f]{6}', r'"doc_hash": "\\u0061'),
    "escaped backslash in doc_hash": _sub(r'"doc_hash": "[0-9a-f]{2}', r'"doc_hash": "\\\\'),
    "short prompt_hash": _sub(r'"prompt_hash": "[0-9a-f]', '"prompt_hash": "'),
    "non-hex target_hash": _sub(r'"target_hash": "[0-9a-f]', '"target_hash": "g'),
    "negative doc_id": _sub(r'^\{"doc_id": \d+', '{"doc_id": -7'),
    "19-digit doc_id": _sub(r'^\{"doc_id": \d+', '{"doc_id": 9223372036854775807'),
    "spaced doc_id": _sub(r'^\{"doc_id": ', '{"doc_id":  '),
    "another key first": _sub(r'^\{"doc_id": ', '{"doc_ix": 5, "doc_id": '),
    "other metrics": _sub(r'"metrics": \[[^\]]*\]', '"metrics": ["acc"]'),
    "escaped quote closing the response": _sub(r'"\], "filter"', r'\\""], "filter"'),
    "key after the hashes": _sub(r'("target_hash": "[0-9a-f]{64}")', r'\1, "extra": [1]'),
}


def _request(path: Path) -> ReadRequest:
    run = TaskRun(
        task="t",
        results_path=path,
        date="",
        samples_path=path,
        seed=None,
        seed_source="none logged",
        output_type="generate_until",
        filters=(),
        metrics=(),
        group=None,
        n_expected=None,
    )
    return ReadRequest(run, None, None)


def _fields(lines: list[str], tmp_path: Path) -> tuple[list[tuple], list[tuple]]:
    """(what the scanner reads, what json.loads of every line says) for the lines written as one file."""
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    chunk = scan_range(_request(path), 0, path.stat().st_size)
    read = list(zip(chunk.doc_id, chunk.doc_hash, chunk.correct, chunk.answer, chunk.status, chunk.k))
    samples = [json.loads(line) for line in lines]
    full = [
        (s["doc_id"], s["doc_hash"], s["postforget"]["correct"], s["postforget"]["answer"], s["postforget"]["status"], 4.0)
        for s in samples
    ]
    return read, full


def _lines(n: int = 6) -> list[str]:
    return [
        sample_line(i, None, response=f"Reasoning {i}. Answer: B", record=pf_record("mmlu_x", i % 2, answer="AB"[i % 2]))
        for i in range(n)
    ]


def test_a_block_in_lmeval_layout_reads_as_a_full_parse(tmp_path):
    read, full = _fields(_lines(), tmp_path)
    assert read == full


@pytest.mark.parametrize("where", [0, 3, 5])
@pytest.mark.parametrize("odd", list(ODD_LINES))
def test_a_line_the_block_path_cannot_vouch_for(tmp_path, odd, where):
    lines = _lines()
    changed = ODD_LINES[odd](lines[where])
    assert changed != lines[where] and json.loads(changed)
    lines[where] = changed
    read, full = _fields(lines, tmp_path)
    assert read == full


def test_a_line_that_is_not_json_is_skipped(tmp_path):
    """A raw control character in a digest: not JSON, so malformed, not read off the block's layout."""
    lines = _lines()
    lines[2] = re.sub(r'"doc_hash": "[0-9a-f]', '"doc_hash": "\t', lines[2], count=1)
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    chunk = scan_range(_request(path), 0, path.stat().st_size)
    assert chunk.doc_id == [0, 1, 3, 4, 5] and chunk.malformed == [len("".join(lines[:2]).encode())]
