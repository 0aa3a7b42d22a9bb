"""Logged lm-eval items read back: one in full (``load_item``, for ``show``), or only the replies of many.

The failure modes read back every unanswered reply of the items that changed, thousands on a large
pair, a few per samples file. A line is ~13 KB (doc, prompt, the reply and its filtered copy), and
parsing it whole for one string was most of that step. So :func:`load_responses` opens each file once,
reads each line with one seek and one read, and, for a line in lm-eval 0.4.3+'s layout with one
generated reply (see :mod:`.lmeval_scan`)::

    {"doc_id": .., ..., "resps": [["<reply>"]], "filtered_resps": ["<text>"], "filter": "..", ...}

decodes only the reply. Inside a JSON string every ``"`` is escaped, so ``, "resps": [["`` is a key
and the reply's string ends at the first unescaped quote after it. The layout is then checked up to
the end of the line: the reply is followed by ``, "filtered_resps": ["``, one string (no unescaped
quote inside) and ``"], "filter": "``, and the rest of the line, from ``"filter"`` on, decodes as the
members that close one object. So ``resps`` is a key of the line's object, not of a nested one, and
the reply is what parsing the whole line gives. (The bytes before ``resps``, doc and prompt, are not
decoded: a line broken only there reads here but not in ``load_item``; the scanner's fast path reads
such a line too.) Any other line (log-likelihoods, repeats, other layouts, a cut or malformed line, a
locator that is not a line start) is parsed in full, as ``load_item`` does; a 0.4.0-0.4.2 JSON-array
log is parsed once per call.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, BinaryIO

import orjson

from postforget_lmeval.sources.base import UNREADABLE, LoadedItem
from postforget_lmeval.sources.lmeval_scan import option_letter, quote_escaped

QUESTION_KEYS = ("pf_question", "question", "Question", "query", "problem", "input", "goal", "ctx", "sentence", "text")
OPTION_KEYS = ("pf_options", "choices", "options", "endings")
_HEAD = b'{"doc_id": '
_REPLY = b', "resps": [["'  # up to the reply's opening quote
_FILTERED = b'"]], "filtered_resps": ["'  # from the reply's closing quote to the filtered text's opening one
_FILTER = b', "filter": "'
LINE_BYTES = 1 << 14  # first read of a line: most lines of generative tasks fit (a longer one is read again)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def response_texts(resps: Any) -> list[str]:
    """A sample's ``resps`` as text, one per replicate; a log-likelihood item's as one line of per-option
    log-likelihoods."""
    resps = resps or []
    if resps and isinstance(resps[0], list) and resps[0] and isinstance(resps[0][0], list):  # [[ll, greedy]] per option
        lls = [r[0][0] if r and isinstance(r[0], list) else r for r in resps]
        return ["log-likelihoods " + ", ".join(f"{option_letter(i)} {float(v):.2f}" for i, v in enumerate(lls))]
    return [_text(r) for r in (resps[0] if resps and isinstance(resps[0], list) else resps)]


def loaded_item(sample: dict[str, Any]) -> LoadedItem:
    """A logged sample (one parsed line or array element) as ``show`` and the analyses read it."""
    doc = sample.get("doc") or {}
    args = sample.get("arguments") or {}
    first = args.get("gen_args_0") if isinstance(args, dict) else (args[0] if args else None)
    prompt = first.get("arg_0") if isinstance(first, dict) else (first[0] if isinstance(first, list) else None)
    options = next((doc[k] for k in OPTION_KEYS if isinstance(doc.get(k), list)), None) or []
    question = next((doc[k] for k in QUESTION_KEYS if isinstance(doc.get(k), str)), None)
    responses = response_texts(sample.get("resps"))
    gold = doc.get("pf_gold", sample.get("target"))
    if options and isinstance(gold, (int, str)) and str(gold).isdigit() and int(gold) < len(options):
        gold = option_letter(int(gold))  # lm-eval logs a multiple-choice target as the option index
    return LoadedItem(
        question=question if question is not None else str(prompt or "")[-1500:],
        options=[_text(o) for o in options],
        gold=None if gold is None else _text(gold),
        responses=responses,
        prompt=None if prompt is None else str(prompt),
        doc=doc,
        doc_id=sample.get("doc_id"),
    )


def load_responses(path: str, locators: Sequence[int]) -> list[list[str] | None]:
    """``loaded_item(...).responses`` of the samples at ``locators`` of ``path`` (line byte offsets, or element
    indices of a JSON-array log), None where ``load_item`` would fail to read one (see the module docstring)."""
    try:
        f = open(path, "rb")
    except OSError:
        return [None] * len(locators)
    with f:
        if f.read(64).lstrip()[:1] == b"[":  # a 0.4.0-0.4.2 log: one JSON array
            f.seek(0)
            return _from_array(f.read(), locators)
        out: list[list[str] | None] = []
        for locator in locators:
            try:
                out.append(_from_line(f, int(locator)))
            except UNREADABLE:
                out.append(None)
        return out


def _from_array(data: bytes, locators: Sequence[int]) -> list[list[str] | None]:
    try:
        elements = orjson.loads(data)
    except orjson.JSONDecodeError:
        return [None] * len(locators)
    out: list[list[str] | None] = []
    for locator in locators:
        try:
            out.append(loaded_item(elements[int(locator)]).responses)
        except UNREADABLE:
            out.append(None)
    return out


def _from_line(f: BinaryIO, p: int) -> list[str]:
    """The responses of the line at byte ``p``: its reply alone when the line is laid out so, else the whole
    line parsed (raising what parsing it raises)."""
    first, line = _line_at(f, p)
    reply = _reply(line) if first else None
    if reply is not None:
        return response_texts([[reply]])
    return loaded_item(orjson.loads(line)).responses


def _line_at(f: BinaryIO, p: int) -> tuple[bool, bytes]:
    """Whether byte ``p`` of ``f`` begins a line, and the bytes from ``p`` through the next newline (or to the
    end of the file), which ``load_item`` reads (readline): read in one piece of LINE_BYTES when it fits."""
    before = 1 if p > 0 else 0  # the byte before p: a newline where a line begins
    size = LINE_BYTES
    while True:
        f.seek(p - before)
        chunk = f.read(size)
        nl = chunk.find(b"\n", before)
        if nl >= 0 or len(chunk) < size:
            break
        size *= 4
    return not before or chunk[:1] == b"\n", chunk[before : nl + 1 if nl >= 0 else len(chunk)]


def _reply(line: bytes) -> str | None:
    """The one reply of ``line`` when it is in the layout of the module docstring, else None."""
    end = len(line) - 1 if line.endswith(b"\n") else len(line)
    if not line.startswith(_HEAD):
        return None
    r = line.find(_REPLY, 0, end)
    opening = r + len(_REPLY) - 1
    closing = _unescaped_quote(line, opening + 1, end) if r >= 0 else -1
    if closing < 0 or line[closing : closing + len(_FILTERED)] != _FILTERED:
        return None
    filtered = closing + len(_FILTERED) - 1  # the filtered text's opening quote
    f = line.rfind(_FILTER, filtered, end)
    if f < 0 or line[f - 2 : f] != b'"]' or _unescaped_quote(line, filtered + 1, end) != f - 2:
        return None
    try:
        orjson.loads(b"{" + line[f + 2 : end])  # '"filter": .., "metrics": .., ..}': the members closing the line
        reply = orjson.loads(line[opening : closing + 1])
    except orjson.JSONDecodeError:
        return None
    return reply


def _unescaped_quote(line: bytes, start: int, end: int) -> int:
    """Where the first ``"`` of ``line[start:end]`` not escaped by a backslash is, -1 if none."""
    q = line.find(b'"', start, end)
    while q > start and quote_escaped(line, q, start):
        q = line.find(b'"', q + 1, end)
    return q
