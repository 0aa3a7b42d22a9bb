"""What one logged lm-eval sample says: its rows of the item table, and the item in full for ``show``.

lm-eval 0.4.3+ writes one JSON object a line (``lm_eval.evaluator``'s keys: doc_id, doc, target,
arguments, resps, filtered_resps, filter, metrics, doc_hash, prompt_hash, target_hash, then the
per-sample metrics; a postforget task adds its ``postforget`` record). lm-eval 0.4.0-0.4.2 wrote the
same objects without doc_hash and filter. Each sample is parsed whole; :class:`SamplesRead` turns
the samples of one file into rows and counts what it could not use.
"""

from __future__ import annotations

import hashlib
import json
import math
import textwrap
from typing import Any, NamedTuple

import orjson

from postforget_lmeval.scoring import LETTERS
from postforget_lmeval.sources._base import LoadedItem, ReadRequest

AUTO_METRICS = ("acc", "exact_match")
"""Per-sample binary metrics used for ordinary lm-eval tasks when ``--metric`` is not given."""
EXCERPT = 200  # characters kept of a logged answer or gold
QUESTION_KEYS = ("pf_question", "question", "Question", "query", "problem", "input", "goal", "ctx", "sentence", "text")
OPTION_KEYS = ("pf_options", "choices", "options", "endings")


def option_letter(index: int) -> str:
    """The postforget tasks' letter of an option index; an index past Z (an lm-eval task may have more
    options) as its number."""
    return LETTERS[index] if 0 <= index < len(LETTERS) else str(index)


def doc_hash(doc: Any) -> str:
    """lm-eval's doc_hash (sha256 of the doc dumped with indent=2), for 0.4.0-0.4.2 logs that lack it."""
    return hashlib.sha256(json.dumps(doc, indent=2, ensure_ascii=False, default=str).encode()).hexdigest()


def excerpt(value: Any) -> str | None:
    """A logged answer or gold as short text."""
    if value is None:
        return None
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text[:EXCERPT]


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


def _record_lls(value: Any) -> list[float] | None:
    """A log-likelihood twin's record lists every option's log-likelihood (``option_ll``); else None."""
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return None
    return [float(v) for v in value]


BOM = b"\xef\xbb\xbf"


def parse_line(line: bytes) -> Any:
    """One JSON line; a UTF-8 byte order mark before it (an editor's save) is not part of the sample."""
    return orjson.loads(line[3:] if line.startswith(BOM) else line)


def _not_json(line: bytes) -> str:
    """Why a line is not JSON, named where a tool can be blamed: NUL bytes, invalid UTF-8."""
    if b"\x00" in line:
        return "NUL bytes (a file zero-filled after a crash?)"
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"not valid UTF-8 (byte {e.start} of the line)"
    return "not JSON"


def not_a_sample(value: Any) -> str | None:
    """Why ``value`` is not a logged sample (an object with an integer doc_id that fits 64 bits and its doc, or
    at least the doc's hash); None when it is one."""
    if not isinstance(value, dict):
        return "not a JSON object" if value is not None else "not JSON"
    doc_id = value.get("doc_id")
    if isinstance(doc_id, str):
        return "doc_id is text, not an integer"
    if isinstance(doc_id, float):
        return "doc_id is not a whole number that fits 64 bits"
    if not isinstance(doc_id, int) or isinstance(doc_id, bool):
        return "no integer doc_id"
    if not -(2**63) <= doc_id < 2**63:
        return "doc_id beyond 64 bits"
    if "doc" not in value and "doc_hash" not in value:
        return "neither doc nor doc_hash"
    return None


def is_sample(value: Any) -> bool:
    """A logged sample (see :func:`not_a_sample`)."""
    return not_a_sample(value) is None


def _nth_text(value: Any, rep: int) -> str | None:
    """Replicate ``rep``'s text in a logged ``resps``/``filtered_resps`` (``[text]`` or ``[[text, ...]]``)."""
    if not isinstance(value, list) or not value:
        return None
    first = value[0]
    if isinstance(first, str):
        return first if rep == 0 else None
    if isinstance(first, list) and rep < len(first) and isinstance(first[rep], str):
        return first[rep]
    return None


def _scored_text(sample: dict[str, Any], rep: int) -> str | None:
    """The text the task scored for replicate ``rep``: its filtered response, else the raw generation."""
    filtered = _nth_text(sample.get("filtered_resps"), rep)
    return filtered if filtered is not None else _nth_text(sample.get("resps"), rep)


def _logged_chars(sample: dict[str, Any], rep: int) -> float:
    """Length of replicate ``rep``'s generation in characters; NaN when the sample logs no generated text."""
    text = _nth_text(sample.get("resps"), rep)
    return math.nan if text is None else float(len(text))


def _binary(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and value in (0, 1):
        return int(value)
    return None


def _mc_gold(target: Any) -> str | None:
    """lm-eval logs a multiple-choice target as the option index (as text); anything else is kept as logged."""
    if isinstance(target, (int, str)) and str(target).isdigit():
        return option_letter(int(target))
    return excerpt(target)


class Row(NamedTuple):
    """One row of the item table as a sample gives it (see ITEM_COLUMNS); the run's values are added later."""

    doc_id: int
    doc_hash: str
    replicate: int
    correct: int
    locator: int
    k: float = math.nan
    answer: str | None = None
    gold: str | None = None
    status: str | None = None
    subtask: str | None = None
    category: str | None = None
    response_chars: float = math.nan
    option_ll: list[float] | None = None
    cluster: str | None = None  # the text the item shares with others (a postforget record's cluster)
    correct_logged: int | None = None  # the logged score, when rescoring


class SamplesRead:
    """The rows of one samples file (one per item and replicate) and what reading it met.

    Feed it every line (:meth:`line`) or every element of a JSON-array log (:meth:`sample`), in order.
    """

    def __init__(self, request: ReadRequest) -> None:
        self.request = request
        self.run = request.run
        self.want_filter = request.filter  # None: the first filter seen
        self.rescore = request.rescore if request.run.self_scored else None
        self.rows: list[Row] = []
        self.lines = 0
        self.filter_lines = 0  # samples of the chosen filter, scored or not
        self.malformed: list[int] = []  # locators
        self.unreadable: str | None = None  # why the file could not be read (it went, or was locked)
        self.unit = "byte"  # what a locator counts: bytes of a JSON-lines file, elements of a JSON array
        self.malformed_why: dict[str, int] = {}  # why a line is not a sample -> how many
        self.truncated: int | None = None  # byte offset of an unterminated, unparsable last line
        self.non_binary: list[str] = []  # a few example values
        self.n_non_binary = 0
        self.no_metric = 0
        self.not_rescorable = 0  # postforget records whose doc lacks pf_options/pf_gold/pf_format
        self.bad_k = 0  # postforget records whose k is missing, not a number or <= 1
        self.bad_k_items: list[str] = []  # a few of them
        self.metrics_seen: list[str] = []
        self.metric_used: str | None = None
        self.filter_seen: str | None = None
        self.extractors: list[str] = []  # the `extractor` fields of postforget records

    def columns(self) -> dict[str, list[Any]]:
        """The rows as per-row columns (``correct_logged`` only when rescoring)."""
        names = Row._fields if self.rescore else Row._fields[:-1]
        values = list(zip(*self.rows)) or [() for _ in names]
        return {name: list(column) for name, column in zip(names, values)}

    def line(self, line: bytes, offset: int) -> None:
        """One line of a samples file, starting at byte ``offset``; only the last one may lack its newline."""
        try:
            sample = parse_line(line)
        except orjson.JSONDecodeError:
            sample = None
        if not line.endswith(b"\n") and not is_sample(sample):
            self.truncated = offset  # the last line, cut mid-way: an interrupted run
            return
        self.sample(sample, offset, None if sample is not None else _not_json(line))

    def sample(self, sample: Any, locator: int, why: str | None = None) -> None:
        """One logged sample (a parsed line, or an element of a JSON-array log) found at ``locator``; ``why``:
        why a line did not parse."""
        self.lines += 1
        why = why or not_a_sample(sample)
        if why is not None:
            self.malformed.append(locator)
            self.malformed_why[why] = self.malformed_why.get(why, 0) + 1
            return
        if "doc_hash" not in sample:  # 0.4.0-0.4.2: lm-eval's own hash, and the one filter 'none'
            sample["doc_hash"] = doc_hash(sample.get("doc"))
        filt = sample.setdefault("filter", "none")
        if self.want_filter is None:
            self.want_filter = filt
        if filt != self.want_filter:
            return
        self.filter_seen = filt
        self.filter_lines += 1
        if not self.metrics_seen and isinstance(sample.get("metrics"), list):
            self.metrics_seen = [str(m) for m in sample["metrics"]]
        record = sample.get("postforget")
        if record is not None:
            self._ours(sample, record, locator)
        else:
            self._ordinary(sample, locator)

    def _ours(self, sample: dict[str, Any], record: Any, locator: int) -> None:
        """A postforget record (a list of them when lm-eval ``repeats`` > 1)."""
        self.metric_used = "postforget"
        doc_id, hashed = sample["doc_id"], str(sample["doc_hash"])
        for rep, rec in enumerate(record if isinstance(record, list) else [record]):
            value = rec.get("correct", sample.get("acc")) if isinstance(rec, dict) else None
            correct = _binary(value)
            if correct is None:
                self._bad_value(value)
                continue
            extractor = rec.get("extractor")
            if extractor and extractor not in self.extractors:
                self.extractors.append(extractor)
            lls = _record_lls(rec.get("option_ll"))
            row = Row(
                doc_id, hashed, rep, correct, locator, self._chance_k(rec.get("k"), doc_id),
                excerpt(rec.get("answer")), excerpt(rec.get("gold")), rec.get("status"), rec.get("subtask"),
                rec.get("category"), _logged_chars(sample, rep), lls, rec.get("cluster"), correct,
            )  # fmt: skip
            # a log-likelihood twin's answer was not extracted from text: there is nothing to rescore
            self.rows.append(self._rescored(sample, row) if self.rescore and lls is None else row)

    def _rescored(self, sample: dict[str, Any], row: Row) -> Row:
        """``row`` with its answer re-extracted from the logged response and doc (kept where that cannot be done)."""
        from postforget_lmeval.scoring.rescoring import rescore  # only rescoring pays for the extractor's import

        doc = sample.get("doc") if isinstance(sample.get("doc"), dict) else {}
        response = _scored_text(sample, row.replicate)
        options, gold, fmt = doc.get("pf_options"), doc.get("pf_gold"), doc.get("pf_format")
        if response is None or not isinstance(options, list) or not isinstance(gold, str) or not fmt:
            self.not_rescorable += 1
            return row
        # base_direct prompts end at "Answer:"; our extractor reads the answer after it, while LightEval
        # scored only what the model generated (its "A" must not become an answer)
        text = response if self.rescore == "lighteval" else self.run.response_prefix + response
        found = rescore(text, options, gold, fmt, self.rescore)
        return row._replace(correct=found.correct, answer=excerpt(found.answer), status=found.status)

    def _ordinary(self, sample: dict[str, Any], locator: int) -> None:
        metric = self.request.metric or next((m for m in AUTO_METRICS if m in sample), None)
        if metric is None or metric not in sample:
            self.no_metric += 1
            return
        self.metric_used = metric
        doc_id, hashed = sample["doc_id"], str(sample["doc_hash"])
        values = sample[metric] if isinstance(sample[metric], list) else [sample[metric]]
        filtered, gold = sample.get("filtered_resps"), sample.get("target")
        lls = option_lls(filtered) if self.run.output_type in ("multiple_choice", None) else None
        if lls:
            best = max(range(len(lls)), key=lls.__getitem__)
            logged = {"answer": option_letter(best), "k": float(len(lls)), "gold": _mc_gold(gold), "option_ll": lls}
        else:
            logged = {"answer": excerpt(filtered), "gold": excerpt(gold)}
        for rep, value in enumerate(values):
            correct = _binary(value)
            if correct is None:
                self._bad_value(value)
                continue
            chars = math.nan if lls else _logged_chars(sample, rep)
            self.rows.append(
                Row(doc_id, hashed, rep, correct, locator, response_chars=chars, correct_logged=correct, **logged)
            )

    def _chance_k(self, k: Any, doc_id: int) -> float:
        """A record's k, a number above 1; else NaN, counted with the item: one such item leaves its
        sub-benchmark without a chance baseline, which must not go unsaid."""
        if isinstance(k, (int, float)) and not isinstance(k, bool) and math.isfinite(k) and k > 1:
            return float(k)
        self.bad_k += 1
        if len(self.bad_k_items) < 3:
            self.bad_k_items.append(f"doc {doc_id}: k={textwrap.shorten(repr(k), 20, placeholder=' ...')}")
        return math.nan

    def _bad_value(self, value: Any) -> None:
        self.n_non_binary += 1
        if len(self.non_binary) < 5:
            self.non_binary.append(textwrap.shorten(repr(value), 40, placeholder=" ..."))


def response_texts(resps: Any) -> list[str]:
    """A sample's ``resps`` as text, one per replicate; a log-likelihood item's as one line of per-option
    log-likelihoods."""
    resps = resps or []
    if resps and isinstance(resps[0], list) and resps[0] and isinstance(resps[0][0], list):  # [[ll, greedy]] per option
        lls = [r[0][0] if r and isinstance(r[0], list) else r for r in resps]
        return ["log-likelihoods " + ", ".join(f"{option_letter(i)} {float(v):.2f}" for i, v in enumerate(lls))]
    return [_as_text(r) for r in (resps[0] if resps and isinstance(resps[0], list) else resps)]


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def loaded_item(sample: dict[str, Any]) -> LoadedItem:
    """A logged sample (one parsed line or array element) as ``show`` and the analyses read it."""
    doc = sample.get("doc") if isinstance(sample.get("doc"), dict) else {}
    args = sample.get("arguments") or {}
    first = args.get("gen_args_0") if isinstance(args, dict) else (args[0] if args else None)
    prompt = first.get("arg_0") if isinstance(first, dict) else (first[0] if isinstance(first, list) else None)
    options = next((doc[k] for k in OPTION_KEYS if isinstance(doc.get(k), list)), None) or []
    question = next((doc[k] for k in QUESTION_KEYS if isinstance(doc.get(k), str)), None)
    if "pf_question" not in doc and prompt is not None:  # an ordinary task: the prompt lm-eval logged, not a field
        question = None  # (COPA's doc 'question' is "cause" or "effect")
        requests = args.values() if isinstance(args, dict) else args
        scored = [
            r.get("arg_1") if isinstance(r, dict) else (r[1] if isinstance(r, list) and len(r) > 1 else None)
            for r in requests
        ]
        if not options and len(scored) > 1 and all(isinstance(c, str) for c in scored):
            options = [c.strip() for c in scored]  # log-likelihood multiple choice: the continuations it scored
    gold = doc.get("pf_gold", sample.get("target"))
    if options and isinstance(gold, (int, str)) and str(gold).isdigit() and int(gold) < len(options):
        gold = option_letter(int(gold))  # lm-eval logs a multiple-choice target as the option index
    return LoadedItem(
        question=question if question is not None else str(prompt or "")[-1500:],
        options=[_as_text(o) for o in options],
        gold=None if gold is None else _as_text(gold),
        responses=response_texts(sample.get("resps")),
        prompt=None if prompt is None else str(prompt),
        doc=doc,
        doc_id=sample.get("doc_id"),
    )
