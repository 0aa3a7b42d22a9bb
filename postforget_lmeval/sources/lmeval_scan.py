"""Streaming the few fields pairing needs out of lm-eval sample logs, at about disk speed.

A 0.4.3+ sample line is ``json.dumps(sample, ensure_ascii=False)`` of a dict built in a fixed key
order (``lm_eval.evaluator`` / ``loggers/evaluation_tracker.py``)::

    {"doc_id": .., "doc": {..}, "target": .., "arguments": {..}, "resps": [..],
     "filtered_resps": [..], "filter": "..", "metrics": [..], "doc_hash": "..",
     "prompt_hash": "..", "target_hash": "..", <metric>: <value>, ...}

Nearly all of a line is ``doc``, ``arguments`` and ``resps`` (chain-of-thought text), which the
figures never need. So a line is not parsed whole: the tail from ``"filter"`` on is located by
searching backwards from the end and only that slice (with ``doc_id``) is decoded. Inside a JSON
string every ``"`` is escaped, so the byte pattern ``, "filter": "`` can only be a real key; the
slice is still checked and any line the fast path cannot vouch for is parsed in full.

A block of postforget records (one filter, 0/1 scores) is read with still less work per line. Of a
tail only the three hashes change from line to line; the bytes before them (filter, metrics) and
after them (scores and the postforget record, which holds short answers and statuses) repeat. So
per line only the newline, the hashes and the response's opening quote are searched for; then,
for all lines of the block at once on numpy rows, doc_id is checked and decoded as a JSON integer,
the bytes before the hashes compared with the first line's and the hashes checked to be lm-eval's
(sha256 hex digests: strings that JSON decodes to themselves); and the tail less the hashes is
decoded by orjson once per distinct byte string: when ``{filter.., scores..}`` decodes to an object
without doc_id or hash keys, the tail decodes to that object plus the hashes. A block with any
line that does not fit is read by the path above.

``response_chars`` on the fast path is the byte length of the logged response JSON less its
brackets and quotes (a postforget line's ``filtered_resps``, which holds the scored response; else
``resps``, per replicate): exact for ASCII text without escapes, a slight overestimate otherwise
(escapes, multi-byte UTF-8). Rescoring parses every line in full (orjson) and measures
the response exactly. Besides numpy and orjson this module imports nothing heavy, so worker
processes start quickly.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import mmap
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson

from postforget_lmeval.sources.base import ReadRequest
from postforget_lmeval.sources.columns import Coded, Texts

Buffer = bytes | mmap.mmap
"""Bytes of a samples file: read into memory or mapped (both have find/rfind and slicing)."""
AUTO_METRICS = ("acc", "exact_match")
"""Per-sample binary metrics used for ordinary lm-eval tasks when ``--metric`` is not given."""

_HEAD = b'{"doc_id": '
_HASH = b'"doc_hash": "'
_FILTER = b', "filter": "'
_FILTERED = b', "filtered_resps": '
_RESPS = b', "resps": '
_TARGET = b', "target": '
_ARGS = b', "arguments": {"gen_args_0": '
_FILTERED_OPEN = _FILTERED + b"["
_HEAD_BYTES = len(_HEAD) + 24  # doc_id's comma is within these
_DIGEST_CHARS = 64  # a sha256 hex digest
_HASHES = b'"doc_hash": "%s", "prompt_hash": "%s", "target_hash": "%s"' % ((b"0" * _DIGEST_CHARS,) * 3)
"""How lm-eval logs the hashes: three sha256 hex digests, here all "0" (:func:`_lmeval_hashes`)."""
_HASHES_LEN = len(_HASHES)
_DIGESTS = [(m.start(), m.end()) for m in re.finditer(b"0{%d}" % _DIGEST_CHARS, _HASHES)]
_DIGIT_OFFSETS = np.where(np.frombuffer(_HASHES, np.uint8) == ord("0"), ord("f") - ord("0"), 0).astype(np.uint8)
"""Per byte of the hashes, the most a logged byte may exceed :data:`_HASHES`'s: in a digest ord("f") - ord("0"), else 0."""
_HEAD_ROW = np.frombuffer(_HEAD, np.uint8)
_FILTERED_OPEN_ROW = np.frombuffer(_FILTERED_OPEN, np.uint8)
_ID_KEYS = frozenset(("doc_id", "doc_hash", "prompt_hash", "target_hash"))
_SHORT = 4096  # bytes: a logged answer or gold longer than this is a response, not an answer
EXCERPT = 200  # characters kept of an ordinary task's logged answer or gold
_raw_decode = json.JSONDecoder().raw_decode  # on str: none of json.loads' wrapping, which shows at 10^5 lines/s
_LIST_FIELDS = (
    "doc_id",
    "doc_hash",
    "replicate",
    "correct",
    "k",
    "answer",
    "gold",
    "status",
    "locator",
    "subtask",
    "category",
    "response_chars",
    "option_ll",
    "correct_logged",
)


@dataclass
class Chunk:
    """Fields of the lines of one byte range of a samples file; one entry per item and replicate."""

    doc_id: list[int] = field(default_factory=list)
    doc_hash: Texts = field(default_factory=Texts)  # pickles as two buffers, not a str per row
    replicate: list[int] = field(default_factory=list)
    correct: list[int] = field(default_factory=list)
    k: list[float] = field(default_factory=list)
    answer: Coded = field(default_factory=Coded)  # text columns with few distinct values: codes
    gold: Coded = field(default_factory=Coded)
    status: Coded = field(default_factory=Coded)
    locator: list[int] = field(default_factory=list)
    subtask: Coded = field(default_factory=Coded)
    category: Coded = field(default_factory=Coded)
    response_chars: list[float] = field(default_factory=list)
    option_ll: list[list[float] | None] = field(default_factory=list)
    correct_logged: list[int] = field(default_factory=list)  # filled only when rescoring
    lines: int = 0
    filter_lines: int = 0  # lines of the chosen filter, scored or not
    other_filter: int = 0
    malformed: list[int] = field(default_factory=list)  # byte offsets
    truncated: int | None = None  # byte offset of an unterminated last line
    non_binary: list[str] = field(default_factory=list)  # a few example values
    n_non_binary: int = 0
    no_metric: int = 0
    not_rescorable: int = 0  # postforget records whose doc lacks pf_options/pf_gold/pf_format
    metrics_seen: list[str] = field(default_factory=list)
    metric_used: str | None = None
    filter_seen: str | None = None
    extractors: list[str] = field(default_factory=list)  # the `extractor` fields of postforget records
    slow_lines: int = 0

    def extend(self, other: Chunk) -> None:
        """Append the next range of the same file."""
        for name in (*_LIST_FIELDS, "malformed"):
            getattr(self, name).extend(getattr(other, name))
        self.non_binary.extend(other.non_binary[: max(0, 5 - len(self.non_binary))])
        for name in ("lines", "filter_lines", "other_filter", "n_non_binary", "no_metric", "not_rescorable"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.slow_lines += other.slow_lines
        self.truncated = other.truncated if other.truncated is not None else self.truncated
        self.metrics_seen = self.metrics_seen or other.metrics_seen
        self.metric_used = self.metric_used or other.metric_used
        self.filter_seen = self.filter_seen or other.filter_seen
        self.extractors.extend(e for e in other.extractors if e not in self.extractors)

    def columns(self) -> dict[str, Any]:
        """The per-row lists as item-table columns (subtask/category only when records name them)."""
        cols = {name: getattr(self, name) for name in _LIST_FIELDS}
        if not any(self.subtask.values):
            del cols["subtask"], cols["category"]
        if not self.correct_logged:
            del cols["correct_logged"]
        return cols


def _binary(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and value in (0, 1):
        return int(value)
    return None


def excerpt(value: Any) -> str | None:
    """A logged answer or gold as short text."""
    if value is None:
        return None
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text[:EXCERPT]


def _slice_json(line: bytes, start: int, end: int, limit: int = _SHORT) -> Any:
    """json of ``line[start:end]`` (a value followed by nothing), or None when too long or invalid."""
    if start < 0 or end < 0 or end - start > limit:
        return None
    try:
        return json.loads(line[start:end])
    except ValueError:
        return None


def option_letter(index: int) -> str:
    """A, B, ... for an option index, as the postforget tasks name options."""
    return chr(65 + index) if 0 <= index < 26 else str(index)


def option_lls(filtered: Any) -> list[float] | None:
    """Per-option log-likelihoods of a multiple-choice sample's ``[[loglik, is_greedy], ...]``, else None."""
    if not isinstance(filtered, list) or not filtered:
        return None
    if not all(isinstance(pair, list) and len(pair) == 2 for pair in filtered):
        return None
    try:
        return [float(pair[0]) for pair in filtered]
    except (TypeError, ValueError):
        return None


def _mc_gold(target: Any) -> str | None:
    """lm-eval logs a multiple-choice target as the option index (as text); anything else is kept as logged."""
    if isinstance(target, (int, str)) and str(target).isdigit():
        return option_letter(int(target))
    return excerpt(target)


def doc_hash(doc: Any) -> str:
    """lm-eval's doc_hash (sha256 of the doc dumped with indent=2), for 0.4.0-0.4.2 logs that lack it."""
    return hashlib.sha256(json.dumps(doc, indent=2, ensure_ascii=False, default=str).encode()).hexdigest()


def _is_sample(value: Any) -> bool:
    """A logged sample: an object with an integer doc_id and its doc (or at least the doc's hash)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("doc_id"), int)
        and ("doc" in value or "doc_hash" in value)
    )


def _old_layout_defaults(sample: dict[str, Any]) -> None:
    """lm-eval 0.4.0-0.4.2 samples have no doc_hash and no filter key: lm-eval's own hash, the 'none' filter."""
    if "doc_hash" not in sample:
        sample["doc_hash"] = doc_hash(sample.get("doc"))
    sample.setdefault("filter", "none")


def _rows(buf: Buffer, starts: np.ndarray, width: int) -> np.ndarray:
    """The ``width`` bytes of ``buf`` from each of ``starts``, as the rows of a new array (gathered through a
    strided view of ``buf`` that is gone when this returns: a mapping cannot be closed while exported)."""
    return np.ndarray((len(buf) - width + 1, width), np.uint8, buf, 0, (1, 1))[starts]


def _layout_fields(
    buf: Buffer, n: int, starts: list[int], hashes_at: list[int], quotes: list[int], before: bytes
) -> tuple[list[int], bytes, list[float]] | None:
    """doc_id, doc_hash (64 bytes per line, back to back) and response_chars of the lines of ``buf[:n]`` that
    start at ``starts``, with ``before`` + lm-eval's hashes at ``hashes_at`` (``before`` begins at the
    response's closing quote) and the last quote before that at ``quotes``; None unless every line is so
    and starts as lm-eval's do. The bytes are compared on rows copied out of ``buf``, all lines at once.
    """
    at, hashes, quote = (np.fromiter(x, np.int64, len(x)) for x in (starts, hashes_at, quotes))
    if hashes[-1] + _HASHES_LEN >= n or (hashes[:-1] + _HASHES_LEN >= at[1:]).any():  # past the line's newline
        return None
    width = len(before)
    # every line holds before + hashes after its start, so these rows lie inside it
    doc_hashes = _lmeval_hashes(_rows(buf, hashes - width, width + _HASHES_LEN), before)
    doc_ids = None if doc_hashes is None else _doc_ids(_rows(buf, at, _HEAD_BYTES))
    if doc_ids is None:
        return None
    opening = quote - len(_FILTERED_OPEN)
    opened = opening >= at
    opened &= (_rows(buf, np.where(opened, opening, at), len(_FILTERED_OPEN)) == _FILTERED_OPEN_ROW).all(axis=1)
    chars = hashes - quote - (width + 1)
    for i in np.flatnonzero(~opened):  # an escaped quote in the response (or no such response)
        chars[i] = _response_chars(buf, starts[i], hashes_at[i] - width + 2)
    return doc_ids, doc_hashes, np.where(chars >= 0, chars, math.nan).tolist()


def _doc_ids(heads: np.ndarray) -> list[int] | None:
    """The doc_id of each row of ``heads`` (a line's first bytes, ``'{"doc_id": <digits>, ..'``), None unless every
    row starts so, with 1 to 19 digits and minus signs (orjson then reads a 64-bit JSON integer or fails). Each
    row's number and comma are kept, the rest blanked, and orjson decodes them all as one JSON array."""
    number = heads[:, len(_HEAD) :]
    end = ((number - ord("0") < 10) | (number == ord("-"))).argmin(axis=1)  # the first other byte: the comma
    if (
        not (heads[:, : len(_HEAD)] == _HEAD_ROW).all()
        or end.min() < 1
        or end.max() > 19
        or not (number[np.arange(len(number)), end] == ord(",")).all()
    ):
        return None
    text = np.where(np.arange(number.shape[1]) <= end[:, None], number, ord(" "))
    text[-1, end[-1]] = ord("]")
    try:
        doc_ids = orjson.loads(b"[" + text.tobytes())
    except orjson.JSONDecodeError:
        return None
    return doc_ids if len(doc_ids) == len(heads) else None


def _lmeval_hashes(tails: np.ndarray, before: bytes) -> bytes | None:
    """The doc_hash of each row of ``tails`` (``before`` + ``'"doc_hash": "..", "prompt_hash": "..", "target_hash": ".."'``),
    back to back (64 bytes each), or None unless every row is exactly that with three sha256 hex digests (64
    of 0-9a-f: as JSON, such a string decodes to itself).

    Less the expected bytes (:data:`_HASHES` has "0" for every digit), a row holds 0 at every other byte
    and each digit's offset from "0": 0-9 for a decimal digit, 49-54 for a-f.
    """
    width = len(before)
    offsets = tails - np.frombuffer(before + _HASHES, np.uint8)
    if offsets[:, :width].any() or (offsets[:, width:] > _DIGIT_OFFSETS).any() or (offsets - 10 < 39).any():
        return None
    start, stop = _DIGESTS[0]  # the doc_hash digits
    return tails[:, width + start : width + stop].tobytes()


@functools.lru_cache(maxsize=1 << 14)
def _shared_fields(before: bytes, after: bytes) -> tuple[Any, ...] | None:
    """(correct, k, answer, gold, status, subtask, category, extractor, metrics, filter) of the lines whose
    tail is ``before`` + hashes + ``after``; None unless a postforget record with a 0/1 score (other
    records are left to the paths that read any record).

    Cached: the runs of one sub-benchmark (seeds, both sides) share most tails (bench pair: 1,320
    distinct of the 8,266 decoded file by file). The tuple is shared; its values are not changed.
    """
    if not before.startswith(b'"], ') or not before.endswith(b", ") or not after.startswith(b", "):
        return None
    try:  # '"], "filter": .., "metrics": [..], ' + ', "acc": 1, ..}' -> '{"filter": .., "metrics": [..], "acc": 1, ..}'
        rest = orjson.loads(b"{" + before[4:] + after[2:])
    except orjson.JSONDecodeError:
        return None
    pf = rest.get("postforget")
    if not _ID_KEYS.isdisjoint(rest) or type(pf) is not dict:
        return None
    correct, k = pf.get("correct"), pf.get("k")
    if type(correct) not in (int, bool) or correct not in (0, 1) or type(k) not in (int, float):
        return None
    text = [pf.get(name) for name in ("status", "subtask", "category")]
    return (int(correct), float(k), excerpt(pf.get("answer")), excerpt(pf.get("gold")), *text,
            pf.get("extractor"), rest.get("metrics"), rest.get("filter"))  # fmt: skip


def quote_escaped(buf: Buffer, q: int, start: int) -> bool:
    """Whether the ``"`` at ``q`` is escaped: an odd run of backslashes (counted back to ``start``) before it."""
    k = q
    while k > start and buf[k - 1] == 0x5C:
        k -= 1
    return (q - k) % 2 == 1


def _response_chars(buf: Buffer, p: int, f: int) -> int:
    """Bytes of the response in the ``"filtered_resps": [...]`` that ends at ``f`` (its ``, "filter"``), -1 if none.

    A postforget line's filtered_resps is ``["<response>"]``: its opening quote is the last unescaped
    ``"`` before the closing one, found with a one-byte backward search (memrchr) instead of a search
    for the key over the whole response. Anything else takes the key search.
    """
    q = f - 2
    if buf[q:f] == b'"]':
        s = buf.rfind(b'"', p, q)
        while s > p and quote_escaped(buf, s, p):
            s = buf.rfind(b'"', p, s)
        if s > p and buf[s - len(_FILTERED_OPEN) : s] == _FILTERED_OPEN:
            return q - s - 1
    r = buf.rfind(_FILTERED, p, f)
    return max(0, f - r - len(_FILTERED) - 4) if r >= 0 else -1  # ["response"]: brackets and quotes


class Scanner:
    """Per-line extraction into a :class:`Chunk`; the loops live in :mod:`lmeval_read`."""

    def __init__(self, request: ReadRequest) -> None:
        self.request = request
        self.run = request.run
        self.want_filter = request.filter
        self.rescore = request.rescore if request.run.self_scored else None
        self.out = Chunk()
        if self.rescore:
            from postforget_lmeval.scoring import rescoring  # only rescoring workers pay for the extractor's import

            self._rescoring = rescoring

    def line(self, line: bytes, offset: int) -> None:
        """One JSON line starting at byte ``offset``."""
        self.out.lines += 1
        record = None if self.rescore else self._fast(line)
        full = None
        if record is None:
            try:
                full = orjson.loads(line)
            except orjson.JSONDecodeError:
                full = None
            if not _is_sample(full):
                self.out.malformed.append(offset)
                return
            if not self.rescore:
                self.out.slow_lines += 1
            _old_layout_defaults(full)
            record = full
        self._record(record, line, full, offset)

    def block(self, buf: Buffer, p: int, n: int) -> None:
        """Every line of ``buf[p:n]`` (file bytes by absolute offset, ``bytes`` or an ``mmap``; ``n`` is
        just past a newline).

        The fast path: one pass of byte searches per line cuts out doc_id and the tail, one orjson
        call decodes all tails, and postforget records become columns in a few list comprehensions.
        A block with any line the fast path cannot vouch for is read line by line instead.
        """
        if self.rescore:
            self._lines(buf, p, n)
            return
        if self._repeated_tails(buf, p, n):
            return
        start = p
        objs, locs, chars = [], [], []
        find, rfind = buf.find, buf.rfind
        head_len = len(_HEAD)
        while p < n:
            e = find(b"\n", p)
            h = rfind(_HASH, p, e)
            f = rfind(_FILTER, p, h) if h > p else -1
            c = find(b",", p + head_len, p + head_len + 24)
            if f < 0 or c < 0 or buf[p : p + head_len] != _HEAD:
                self._lines(buf, start, n)
                return
            objs.append(buf[p : c + 1] + buf[f + 1 : e])
            locs.append(p)
            chars.append(_response_chars(buf, p, f))
            p = e + 1
        try:
            records = orjson.loads(b"[" + b",".join(objs) + b"]")
        except orjson.JSONDecodeError:
            self._lines(buf, start, n)
            return
        if not all(
            isinstance(r, dict) and isinstance(r.get("doc_hash"), str) and "target_hash" in r and type(r.get("doc_id")) is int
            for r in records
        ):
            self._lines(buf, start, n)
            return
        if not self._columns(records, locs, chars):
            for record, loc in zip(records, locs):
                self.out.lines += 1
                line = buf[loc : find(b"\n", loc) + 1]
                record["_filter_at"] = line.rfind(_FILTER, 0, line.rfind(_HASH))
                self._record(record, line, None, loc)

    def _repeated_tails(self, buf: Buffer, p: int, n: int) -> bool:
        """Every line of ``buf[p:n]`` when all are postforget records of the wanted filter with a 0/1
        score in lm-eval's layout whose tails differ only in their hashes (see the module docstring);
        False (nothing added) when any line is not.
        """
        find, rfind = buf.find, buf.rfind
        e = find(b"\n", p)
        h = rfind(_HASH, p, e)
        f = rfind(_FILTER, p, h) if h > p else -1
        if f < 0:
            return False
        before = buf[f - 2 : h]  # '"], "filter": .., "metrics": [..], ': the response's end to the hashes
        first = _shared_fields(before, buf[h + _HASHES_LEN : e])
        if first is None:
            return False  # not such a record: no need to look further
        want = self.want_filter if self.want_filter is not None else first[-1]
        width = len(before)
        starts, hashes_at, quotes, afters = [], [], [], []
        while p < n:  # per line only searches; what they found is checked for all lines at once
            e = find(b"\n", p)
            h = rfind(_HASH, p, e)
            if h - width < p:
                return False
            starts.append(p)
            hashes_at.append(h)
            quotes.append(rfind(b'"', p, h - width))  # the response's opening quote, unless it holds an escaped one
            afters.append(buf[h + _HASHES_LEN : e])
            p = e + 1
        fields = _layout_fields(buf, n, starts, hashes_at, quotes, before)
        tails = {after: i for i, after in enumerate(dict.fromkeys(afters))}  # the distinct tails, numbered
        shared = [_shared_fields(before, after) for after in tails]
        if fields is None or any(row is None or row[-1] != want for row in shared):
            return False
        self.want_filter = want
        out = self.out
        out.lines += len(starts)
        out.filter_lines += len(starts)
        out.filter_seen = want
        out.metric_used = "postforget"
        if not out.metrics_seen and isinstance(first[-2], list):
            out.metrics_seen = [str(m) for m in first[-2]]
        for row in shared:
            if row[-3] and row[-3] not in out.extractors:
                out.extractors.append(row[-3])
        doc_ids, doc_hashes, chars = fields
        out.doc_id.extend(doc_ids)
        out.doc_hash.extend_fixed(doc_hashes, _DIGEST_CHARS)
        out.replicate.extend([0] * len(starts))
        tail = np.fromiter(map(tails.__getitem__, afters), np.int32, len(afters))  # each line's tail
        values = list(zip(*shared))  # per field, its value in each distinct tail
        for i, name in enumerate(("correct", "k")):
            out_list: list[Any] = getattr(out, name)
            out_list.extend(np.array(values[i])[tail].tolist())
        for i, name in enumerate(("answer", "gold", "status", "subtask", "category"), start=2):
            getattr(out, name).extend_codes(tail, values[i])
        out.locator.extend(starts)
        out.response_chars.extend(chars)
        out.option_ll.extend([None] * len(starts))
        return True

    def _lines(self, buf: Buffer, p: int, n: int) -> None:
        while p < n:
            e = buf.find(b"\n", p)
            self.line(buf[p : e + 1], p)
            p = e + 1

    def _columns(self, records: list[dict[str, Any]], locs: list[int], spans: list[int]) -> bool:
        """Postforget records of the wanted filter, one per line, 0/1 scores: straight into columns.

        False (nothing added) when the block is anything else; the caller then goes record by record.
        """
        if self.want_filter is None and records:
            self.want_filter = records[0].get("filter")
        if any(r.get("filter") != self.want_filter for r in records):
            return False
        pfs = [r.get("postforget") for r in records]
        if not all(type(p) is dict for p in pfs):
            return False
        correct = [p.get("correct") for p in pfs]
        if not {type(v) for v in correct} <= {int, bool} or not set(correct) <= {0, 1}:
            return False
        ks = [p.get("k") for p in pfs]
        if not {type(v) for v in ks} <= {int, float}:
            return False
        text = {name: [p.get(name) for p in pfs] for name in ("answer", "gold", "status", "subtask", "category")}
        for name in ("answer", "gold"):
            values = text[name]
            if not all(v is None or (type(v) is str and len(v) <= EXCERPT) for v in values):
                text[name] = [excerpt(v) for v in values]
        out = self.out
        out.lines += len(records)
        out.filter_lines += len(records)
        out.filter_seen = self.want_filter
        out.metric_used = "postforget"
        if not out.metrics_seen and records and isinstance(records[0].get("metrics"), list):
            out.metrics_seen = [str(m) for m in records[0]["metrics"]]
        for extractor in {p.get("extractor") for p in pfs}:
            if extractor and extractor not in out.extractors:
                out.extractors.append(extractor)
        out.doc_id.extend(r["doc_id"] for r in records)
        out.doc_hash.extend(r["doc_hash"] for r in records)
        out.replicate.extend([0] * len(records))
        out.correct.extend(map(int, correct))
        out.k.extend(map(float, ks))
        out.locator.extend(locs)
        for name, values in text.items():
            getattr(out, name).extend(values)
        out.response_chars.extend(float(s) if s >= 0 else math.nan for s in spans)
        out.option_ll.extend([None] * len(records))
        return True

    def element(self, record: Any, index: int) -> None:
        """One sample of a 0.4.0-0.4.2 JSON-array log (already parsed; ``index`` is its locator)."""
        self.out.lines += 1
        if not _is_sample(record):
            self.out.malformed.append(index)
            return
        _old_layout_defaults(record)
        self._record(record, None, record, index)

    def _record(self, record: dict[str, Any], line: bytes | None, full: dict[str, Any] | None, locator: int) -> None:
        out = self.out
        filt = record.get("filter")
        if self.want_filter is None:
            self.want_filter = filt
        if filt != self.want_filter:
            out.other_filter += 1
            return
        out.filter_seen = filt
        out.filter_lines += 1
        if not out.metrics_seen and isinstance(record.get("metrics"), list):
            out.metrics_seen = [str(m) for m in record["metrics"]]
        pf = record.get("postforget")
        if pf is not None:
            self._ours(record, pf, line, full, locator)
        else:
            self._ordinary(record, line, full, locator)

    def _fast(self, line: bytes) -> dict[str, Any] | None:
        """doc_id plus the line's tail from "filter" on, or None when the layout is not lm-eval's."""
        if not line.startswith(_HEAD):
            return None
        h = line.rfind(_HASH)
        f = line.rfind(_FILTER, 0, h) if h > 0 else -1
        comma = line.find(b",", len(_HEAD), len(_HEAD) + 24)
        if f < 0 or comma < 0:
            return None
        try:  # '{"doc_id": 7,' + ' "filter": ..., "doc_hash": ..., <metrics>}' is one small JSON object
            text = line[: comma + 1].decode() + line[f + 1 :].decode()
            record, end = _raw_decode(text)
        except ValueError:
            return None
        if end < len(text) - 1 or not isinstance(record, dict):
            return None
        if (
            not isinstance(record.get("doc_hash"), str)
            or "target_hash" not in record
            or not isinstance(record.get("doc_id"), int)
        ):
            return None
        record["_filter_at"] = f
        return record

    def _add(self, record: dict[str, Any], replicate: int, correct: int, locator: int, **values: Any) -> None:
        out = self.out
        out.doc_id.append(record["doc_id"])
        out.doc_hash.append(record["doc_hash"])
        out.replicate.append(replicate)
        out.correct.append(correct)
        out.locator.append(locator)
        k = values.get("k")
        out.k.append(math.nan if k is None else k)
        for name in ("answer", "gold", "status", "subtask", "category", "option_ll"):
            getattr(out, name).append(values.get(name))
        chars = values.get("response_chars")
        out.response_chars.append(math.nan if chars is None else chars)
        if "correct_logged" in values:
            out.correct_logged.append(values["correct_logged"])

    def _bad_value(self, value: Any) -> None:
        self.out.n_non_binary += 1
        if len(self.out.non_binary) < 5:
            self.out.non_binary.append(textwrap.shorten(repr(value), 40, placeholder=" ..."))

    def _resps_chars(self, line: bytes | None, record: dict[str, Any], n: int) -> float | None:
        """Per-replicate response length from the byte span of the logged resps (see the module docstring)."""
        if line is None or "_filter_at" not in record:
            return None
        r = line.rfind(_FILTERED, 0, record["_filter_at"])
        s = line.rfind(_RESPS, 0, r) if r > 0 else -1
        if s < 0:
            return None
        span = r - s - len(_RESPS)  # [["a", "b"]]: 4 brackets, 2 quotes per text, ", " between texts
        return float(max(0, span - 4 * n - 2) / n)

    def _ours(self, record: dict[str, Any], pf: Any, line: bytes | None, full: dict[str, Any] | None, loc: int) -> None:
        """A postforget record (a list of them when lm-eval ``repeats`` > 1)."""
        self.out.metric_used = "postforget"
        records = pf if isinstance(pf, list) else (pf,)
        chars = None if full is not None else self._resps_chars(line, record, len(records))
        for rep, rec in enumerate(records):
            value = rec.get("correct", record.get("acc")) if isinstance(rec, dict) else None
            correct = _binary(value)
            if correct is None:
                self._bad_value(value)
                continue
            extractor = rec.get("extractor")
            if extractor and extractor not in self.out.extractors:
                self.out.extractors.append(extractor)
            k = rec.get("k")
            values = {
                "k": float(k) if isinstance(k, (int, float)) else None,
                "answer": excerpt(rec.get("answer")),
                "gold": excerpt(rec.get("gold")),
                "status": rec.get("status"),
                "subtask": rec.get("subtask"),
                "category": rec.get("category"),
                "response_chars": chars,
            }
            if self.rescore and full is not None:
                correct = self._rescored(full, rep, correct, values)
            self._add(record, rep, correct, loc, **values)

    def _rescored(self, full: dict[str, Any], rep: int, logged: int, values: dict[str, Any]) -> int:
        """Re-extract one replicate's answer from the logged response and doc; fills ``values``."""
        values["correct_logged"] = logged
        doc = full.get("doc") or {}
        response = _response(full, rep)
        options, gold, fmt = doc.get("pf_options"), doc.get("pf_gold"), doc.get("pf_format")
        if response is None or not isinstance(options, list) or not isinstance(gold, str) or not fmt:
            self.out.not_rescorable += 1
            return logged
        # base_direct prompts end at "Answer:"; our extractor reads the answer after it, while LightEval
        # scored only what the model generated (its "A" must not become an answer)
        text = response if self.rescore == "lighteval" else self.run.response_prefix + response
        found = self._rescoring.rescore(text, options, gold, fmt, self.rescore)
        values.update(answer=excerpt(found.answer), status=found.status, response_chars=float(len(response)))
        return found.correct

    def _ordinary(self, record: dict[str, Any], line: bytes | None, full: dict[str, Any] | None, loc: int) -> None:
        metric = self.request.metric or next((m for m in AUTO_METRICS if m in record), None)
        if metric is None or metric not in record:
            self.out.no_metric += 1
            return
        self.out.metric_used = metric
        values = record[metric] if isinstance(record[metric], list) else [record[metric]]
        mc = self.run.output_type == "multiple_choice" or self.run.output_type is None
        if full is not None:
            filtered, gold = full.get("filtered_resps"), full.get("target")
        else:
            f = record["_filter_at"]
            r = line.rfind(_FILTERED, 0, f)
            filtered = _slice_json(line, r + len(_FILTERED), f, _SHORT if not mc else 1 << 20) if r >= 0 else None
            a = line.find(_ARGS)
            t = line.rfind(_TARGET, 0, a) if a > 0 else -1
            gold = _slice_json(line, t + len(_TARGET), a) if t >= 0 else None
        lls = option_lls(filtered) if mc else None
        if lls:
            best = max(range(len(lls)), key=lls.__getitem__)
            extra = {"answer": option_letter(best), "k": float(len(lls)), "gold": _mc_gold(gold), "option_ll": lls}
        else:
            chars = None if full is not None else self._resps_chars(line, record, len(values))
            if full is not None:
                first = _response(full, 0)
                chars = None if first is None else float(len(first))
            extra = {"answer": excerpt(filtered), "gold": excerpt(gold), "response_chars": chars}
        for rep, value in enumerate(values):
            correct = _binary(value)
            if correct is None:
                self._bad_value(value)
                continue
            self._add(record, rep, correct, loc, **extra)


def _response(full: dict[str, Any], rep: int) -> str | None:
    """The text the task scored for replicate ``rep``: its filtered response, else the raw generation."""
    for key in ("filtered_resps", "resps"):
        value = full.get(key)
        if isinstance(value, list) and value:
            first = value[0]
            if isinstance(first, str) and rep == 0:
                return first
            if isinstance(first, list) and len(first) > rep and isinstance(first[rep], str):
                return first[rep]
    return None
