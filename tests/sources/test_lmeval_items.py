"""Items read back by their locator with ``load_item``. Checked on every line of the real logs beside the
checkout, of the fixtures' writers (generative, ordinary, log-likelihood, repeats, 0.4.0-0.4.2 arrays), on
replies that look like the line's keys, cut lines and locators that point nowhere.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from postforget_lmeval.sources import UNREADABLE, by_name
from tests.helpers import paths
from tests.helpers.lmeval_runs import LONG_RESPONSE, ordinary, ours, pf_record, sample_line, write_old_run

SOURCE, LIGHTEVAL = by_name("lmeval"), by_name("lighteval")
LIGHTEVAL_FIXTURES = paths.FIXTURES / "lighteval"

NASTY = [
    'He wrote "filter": "none" and then "filtered_resps": ["x"].',
    ', "filter": "none", "metrics": ["acc"], "doc_hash": "0"}',
    '"]], "filtered_resps": ["',
    ', "resps": [["inner"]], "filtered_resps": ["inner"], "filter": "none',
    'a backslash before a quote: \\" and two: \\\\" and a lone one \\',
    "ends with a backslash \\",
    "ends with two backslashes \\\\",
    '\\"',
    'a "quoted" answer: "B"',
    "naïve café — “curly” ‘quotes’ 日本語 🙂 \u2028 \u2029 \x7f",
    "line one\nline two\r\n\ttabbed \x00 \x1f",
    "",
    '{"doc_id": 1, "resps": [["x"]]}',
    LONG_RESPONSE,
]


def _expected(path: Path, locator: int) -> list[str] | None:
    try:
        return SOURCE.load_item(str(path), locator).responses
    except UNREADABLE:
        return None


def _locators(path: Path) -> list[int]:
    """Every item's locator: line byte offsets, or element indices of a JSON-array log."""
    data = path.read_bytes()
    if data.lstrip()[:1] == b"[":
        try:
            return list(range(len(json.loads(data))))
        except ValueError:
            return [0]
    starts = [0] + [m.end() for m in re.finditer(b"\n", data)]
    return [s for s in starts if s < len(data)]


def _check(path: Path, extra: list[int] = ()) -> list[list[str] | None]:
    """The responses read back at every locator of ``path`` (and ``extra``), None where unreadable."""
    return [_expected(path, loc) for loc in _locators(path) + list(extra)]


def _repeats(line: str, replies: list[str]) -> str:
    """``line`` with one generation per replicate, as lm-eval logs ``repeats``."""
    sample = json.loads(line) | {"resps": [replies], "filtered_resps": replies}
    return json.dumps(sample, ensure_ascii=False) + "\n"


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_every_line_of_the_real_logs(reference_logs):
    files = sorted(reference_logs.rglob("*.jsonl"))
    assert len(files) > 100
    read = sum(r is not None for path in files for r in _check(path))
    assert read > 3000


def test_every_line_of_the_fixture_writers(tmp_path):
    record = pf_record("logic_x", 0, answer=None, status="no_answer")
    tasks = {
        **ours("logic_x", "0110"),
        **ordinary("gen", "0101"),
        **ordinary("mc", "0110", n_options=4),
        "repeats": [_repeats(sample_line(i, None, record=[record] * 3), ["one", 'tw"o', "three"]) for i in range(3)],
        "unicode": [sample_line(i, None, response=r, record=record) for i, r in enumerate(NASTY)],
        "ordinary_nasty": [sample_line(i, float(i % 2), response=r) for i, r in enumerate(NASTY)],
    }
    for task, lines in tasks.items():
        path = _write(tmp_path / f"samples_{task}.jsonl", lines)
        got = _check(path)
        assert None not in got
    assert _check(tmp_path / "samples_unicode.jsonl") == [[r] for r in NASTY]
    assert _check(tmp_path / "samples_repeats.jsonl")[1] == ["one", 'tw"o', "three"]
    assert _check(tmp_path / "samples_mc.jsonl")[0] == ["log-likelihoods A -1.00, B -5.00, C -5.00, D -5.00"]
    for as_lines in (False, True):  # 0.4.0-0.4.2 logs: one JSON array, or one sample a line without hashes
        write_old_run(tmp_path / f"old_{as_lines}", {**ours("logic_x", "01"), **ordinary("mc", "01", n_options=4)},
                      as_lines=as_lines)  # fmt: skip
        for path in sorted((tmp_path / f"old_{as_lines}").glob("*.jsonl")):
            _check(path, extra=[2, 99])


def test_nested_look_alikes_of_the_keys_are_parsed_in_full(tmp_path):
    fake = {"resps": [["fake"]], "filtered_resps": ["fake"], "filter": "none"}
    record = pf_record("logic_x", 0) | {"trap": fake}
    doc = {"question": "Q?", "choices": ["a", "b"], "trap": fake}
    path = _write(tmp_path / "samples_trap.jsonl", [
        sample_line(0, None, record=record, response="real 0"),
        sample_line(1, None, doc=doc, record=pf_record("logic_x", 0), response="real 1"),
    ])  # fmt: skip
    assert _check(path) == [["real 0"], ["real 1"]]


def test_cut_last_line_and_locators_that_point_nowhere(tmp_path):
    lines = [sample_line(i, None, record=pf_record("logic_x", 0), response=f'reply {i} \\" “x”') for i in range(3)]
    whole = "".join(lines).encode()
    last = len(whole) - len(lines[-1].encode())
    for cut in range(last + 1, len(whole) + 1):
        path = tmp_path / "samples_cut.jsonl"
        path.write_bytes(whole[:cut])
        got = _check(path)
        assert got[:2] == [['reply 0 \\" “x”'], ['reply 1 \\" “x”']]
        assert got[2:] == ([['reply 2 \\" “x”']] if cut >= len(whole) - 1 else [None])  # whole, or cut: unreadable
    path = tmp_path / "samples_whole.jsonl"
    path.write_bytes(whole)
    nowhere = [-1, 1, 40, last - 1, last + 5, len(whole), len(whole) + 10, 10**12]
    assert _check(path, extra=nowhere)[3:] == [None] * len(nowhere)
    assert _expected(tmp_path / "missing.jsonl", 0) is None
    empty = tmp_path / "samples_empty.jsonl"
    empty.write_bytes(b"")
    assert _expected(empty, 0) is None


def test_a_line_longer_than_one_read(tmp_path):
    long = "word " * 20_000  # 100 KB: read again in larger pieces
    path = _write(tmp_path / "samples_long.jsonl", [
        sample_line(i, None, record=pf_record("logic_x", 0), response=f"{i} {long}") for i in range(3)
    ])  # fmt: skip
    assert [r[0][:2] for r in _check(path)] == ["0 ", "1 ", "2 "]


reply_text = st.lists(
    st.sampled_from(['"', "\\", " ", "a", "é", "🙂", "\n", "]", "[", ",", ":", "filter", "resps", '", "', "\u2028"]),
    max_size=30,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(response=reply_text, ours_=st.booleans())
def test_any_reply_reads_back_as_load_item_reads_it(response: str, ours_: bool):
    line = (
        sample_line(7, None, record=pf_record("logic_x", 0), response=response)
        if ours_
        else sample_line(7, 1.0, response=response)
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(Path(tmp) / "samples_x.jsonl", [sample_line(0, 1.0), line, line])
        offset = len(sample_line(0, 1.0).encode())
        assert _expected(path, offset) == [response]
