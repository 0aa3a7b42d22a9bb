"""Answer extraction from free-form generations (SPEC §5).

The paper stresses that measured forgetting depends heavily on extraction: a model that answered
but was misread looks as if it forgot. Extraction is therefore conservative (explicit answer
markers beat prose, prose beats bare-line guesses) and it says *why* no answer was read
(``no_answer`` or ``unfinished``) and when an answer was given that is not an option
(``invalid``), so that none of these passes silently for a wrong answer.

Rules, in priority order (the first rule that yields an answer wins):

0. Preparation. Chat special tokens (``<|im_end|>``, ``</s>`` ...) are dropped. Thinking is split
   from the visible reply: everything up to the last ``</think>`` is thinking (the chat template
   may have opened the block itself), and a ``<think>`` that is never closed starts thinking that
   runs to the end. If the reply goes on with a line starting ``Question:`` (a base model
   inventing the next few-shot exemplar), only the text before that line counts, provided it
   holds an answer or the continuation has a ``Reasoning:`` line (the shape of an invented
   exemplar); otherwise (a chat model restating the question) the whole reply counts.
1. Explicit markers; the last one in the reply wins: ``Answer: X`` in any case and markdown
   (``**Answer:** X``, ``**Answer: X**``, ``Final answer: X``, ``答案：X``, also inside code such
   as ``print("Answer: X")``), a header line (``### Final Answer``, ``**Answer:**``) whose answer
   is on the next non-blank line, and ``\\boxed{X}`` (wrappers such as ``\\text{}`` removed). If
   the last explicit answer is not an option the result is ``invalid``; earlier answers are not
   consulted.
2. Prose; the last one wins: ``the (correct) answer is X``, ``the correct option is X``, ``the
   answers are A and C``; for numbers also ``there are 7``, ``a total of 7``, ``in total, 7``.
3. Bare lines: the last non-blank line, else the first, is nothing but the answer (``B``,
   ``(B)``, ``B.``, ``**B**``, ``7``). The first line may also be a letter followed by exactly that
   option's text (``C) Paris``): a base model prompted up to ``Answer:`` replies that way.

What counts as an answer in the text after a marker: a letter that is bracketed, or followed by
punctuation, the end, a connective (``because``, ``is`` ...) or that option's own text. A lone
lowercase letter followed by a word is an article (``a good approach``), not an answer. A hedge
such as ``B or C``, ``7 or 8`` or, for one-letter items, ``B and C`` is not an answer. The text
of exactly one option (ignoring case and punctuation) counts as that option's letter. Several letters
(``letters`` format) are separated by commas, ``and``, spaces or nothing, and a run written
together must be in alphabetical order (``AC``; so ``NONE`` or ``$LETTERS`` is no answer).
Numbers: an integer or a number word up to twenty; for an equation, the value after its last
``=``.

Documented choices:

* Thinking is ignored whenever the visible reply yields an answer. If it yields none, the
  thinking's last non-blank line is used only when it is itself an explicit answer (a marker that
  opens the line, or a box): the model evidently finished and only failed to answer outside the
  block or to close it. Otherwise an unclosed ``<think>`` gives ``unfinished`` and a closed one
  ``no_answer``. Tentative answers earlier in the thinking are never used.
* A generation cut off mid-reasoning without think tags cannot be told apart from one that never
  answered; it is ``no_answer``.
* With ``answer_format="number"`` and no options, every integer is valid.
* A number or word that is no option's text, given for a letter item, is ``no_answer``: only a
  letter can be ``invalid`` there.
* Cost: markers are searched backwards from the end of the reply and only the last 64
  occurrences of each keyword are tried, each payload is one line of at most 200 characters,
  and the thinking is only searched for its tags and its last line; nothing backtracks
  catastrophically.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from postforget_lmeval.prompts import LETTERS, AnswerFormat

Status = Literal["answered", "invalid", "no_answer", "unfinished"]

EXTRACTOR_NAME = "postforget-strict"
EXTRACTOR_VERSION = 1
"""Logged in every postforget record; bumped whenever a rule change can change an extracted answer."""


@dataclass(frozen=True)
class Extraction:
    """What was read from one generation; ``answer`` is None for no_answer/unfinished."""

    answer: str | None
    status: Status


_NO_ANSWER = Extraction(None, "no_answer")
_UNFINISHED = Extraction(None, "unfinished")

# A payload is one line, capped: the work per marker is bounded whatever the response length.
_MAX_PAYLOAD = 200
# Degenerate repetition can produce thousands of markers; the last ones decide anyway.
_MAX_CANDIDATES = 64
# How many blank or code-fence lines may separate a header from its answer, or an edge line
# from the edge of the text.
_MAX_SKIPPED_LINES = 4

_SPECIAL_TOKENS = re.compile(r"<\|[A-Za-z0-9_]{1,40}\|>|</s>|<eos>|<end_of_turn>")
_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.I)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.I)
_NEXT_QUESTION = re.compile(r"\nQuestion:")
_EXEMPLAR_REASONING = re.compile(r"\nReasoning:")

# Markers are searched in lowercased text, backwards from the end with str.rfind on a literal
# that starts each pattern (see _backwards), so that only the last few are ever looked at.
# "：" is the full-width colon of Chinese text.
_BOXED = re.compile(r"\\boxed[ \t]*\{")
_MARKS = (
    ("answer", re.compile(r"answers?(?![a-z0-9_])(?:[ \t]*[*_]*[ \t]*(?P<sep>[:：]))?")),
    ("答案", re.compile(r"答案[ \t]*(?P<sep>[:：]|是|为)?")),
    ("\\boxed", _BOXED),
)
_PHRASES = (
    (
        "answer",
        re.compile(
            r"answers?[ \t]+(?:is|are|would[ \t]+be|should[ \t]+be|must[ \t]+be|will[ \t]+be)(?![a-z])"
            r"(?:[ \t]+(?:therefore|thus|clearly|definitely|indeed|likely|probably))?[ \t]*[:：]?"
        ),
    ),
    (
        "correct",
        re.compile(r"correct[ \t]+(?:option|choice|letter)s?[ \t]+(?:is|are)(?![a-z])[ \t]*[:：]?"),
    ),
)
_STATEMENTS = {pattern for _, pattern in _PHRASES}
_COUNT_TAIL = r"(?:[ \t]+(?:there[ \t]+are|(?:i|you|we)[ \t]+have))?(?![a-z])"
_COUNT_PHRASES = (
    (
        "there",
        re.compile(r"there[ \t]+(?:are|is|were)(?:[ \t]+(?:a[ \t]+total[ \t]+of|exactly|only))?(?![a-z])"),
    ),
    ("total", re.compile(rf"total(?:[ \t]+(?:of|is)|,)?{_COUNT_TAIL}")),
    ("altogether", re.compile(rf"altogether,?{_COUNT_TAIL}")),
)
# What may precede a marker on its line for the answer to sit on the next line.
_LINE_LEAD = re.compile(r"[ \t>#*_\-]*(?:(?:the|my|final|correct|so|thus|therefore)[ \t,*_]+)*", re.I)

_BRACED = re.compile(r"((?:[^{}\n]|\{[^{}\n]*\})*)\}")
_LATEX_WRAP = re.compile(r"\\(?:boxed|text|textbf|textrm|mathrm|mathbf|fbox)[ \t]*\{([^{}]*)\}")
_EDGE = " \t\r*_`$\"'“”‘’:：\\"  # markdown, LaTeX math, straight and curly quotes, colons
_OPTION_WORD = re.compile(r"(?:the[ \t]+)?(?:option|choice|letter)\b[ \t]*[:#]?[ \t]*", re.I)
# A letter: bracketed (group 1 or 2) or alone (group 3).
_LETTER = re.compile(r"\([ \t]*([A-Za-z])[ \t]*\)|\[[ \t]*([A-Za-z])[ \t]*\]|([A-Za-z])(?![A-Za-z0-9])")
# One element of a letter list: bracketed, a capital run ("AC"), or a lone lowercase letter.
_TOKEN = (
    r"(?:\([ \t]*[A-Za-z][ \t]*\)|\[[ \t]*[A-Za-z][ \t]*\]"
    r"|[A-Z]{1,26}(?![A-Za-z0-9])|[a-z](?![A-Za-z0-9]))"
)
_TOKEN_RE = re.compile(_TOKEN)
_LETTER_LIST = re.compile(rf"{_TOKEN}(?:[ \t]*(?:[,;/&+][ \t]*)?(?:\band\b[ \t]*)?{_TOKEN})*")
_AND = re.compile(r"\band\b")
_ABBREVIATION = re.compile(r"\.[a-z]\.")  # "e.g.", "i.e." after a lone letter
_CONNECTIVES = frozenset({"because", "since", "as", "is", "are", "was", "were", "seems", "would", "should"})
_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
).split()
# "−" is U+2212 MINUS SIGN, which LaTeX-minded models write.
_NUMBER = re.compile(rf"[-−]?\d+(?:\.\d+)?(?!\d)|(?:{'|'.join(_NUMBER_WORDS)})\b", re.I)
_NUMBER_HEDGE = re.compile(r"[ \t]*(?:or\b|/)", re.I)  # "7 or 8", "7/8"
_BARE_NUMBER = re.compile(rf"[-−]?\d+|{'|'.join(_NUMBER_WORDS)}", re.I)
_NON_ALNUM = re.compile(r"[^0-9a-z]+")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _normalise(text: str) -> str:
    """Case- and punctuation-insensitive form used to compare with option texts."""
    return _NON_ALNUM.sub(" ", text.lower()).strip()


def _lower(text: str) -> str:
    """Lowercase with positions preserved (str.lower lengthens a few characters such as "İ")."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


def _canonical_number(text: str) -> str:
    """"07" and "7.0" -> "7"; other values are kept as written (they can only be invalid)."""
    text = text.replace("−", "-")
    if text.lower() in _NUMBER_WORDS:
        return str(_NUMBER_WORDS.index(text.lower()))
    try:
        value = float(text)
    except ValueError:
        return text
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else text


class _Item:
    """The item's options in the forms the parsers compare against."""

    def __init__(self, options: Sequence[str], answer_format: AnswerFormat) -> None:
        self.format = answer_format
        self.n_letters = min(len(options), len(LETTERS))
        texts = [_normalise(str(option)) for option in options[: self.n_letters]]
        self.text_of = {LETTERS[i]: text for i, text in enumerate(texts)}
        # Only a text that no other option shares identifies a letter.
        self.by_text = {t: LETTERS[i] for i, t in enumerate(texts) if t and texts.count(t) == 1}
        self.numbers = (
            {_canonical_number(str(option).strip()) for option in options}
            if answer_format == "number"
            else set()
        )

    def verdict(self, answer: str) -> Extraction:
        """Answered when every part of the answer is one of the item's options."""
        if self.format == "number":
            valid = not self.numbers or answer in self.numbers
        else:
            valid = all(0 <= LETTERS.find(ch) < self.n_letters for ch in answer)
        return Extraction(answer, "answered" if valid else "invalid")


def _clean(payload: str) -> str:
    """Strip markdown, quotes, LaTeX wrappers and an "option"/"choice" prefix around an answer."""
    text = payload[:_MAX_PAYLOAD]
    for _ in range(3):  # nested wrappers such as \boxed{\text{C}}
        text, replaced = _LATEX_WRAP.subn(r"\1", text)
        if not replaced:
            break
    text = text.strip(_EDGE)
    prefix = _OPTION_WORD.match(text)
    return text[prefix.end() :].strip(_EDGE) if prefix else text


def _continuation_ok(rest: str, letter: str, item: _Item) -> bool:
    """Whether what follows an unbracketed letter shows that the letter is the answer.

    This tells "A good approach" (article) and "e.g." from "A) Paris", "B because" and "C Paris".
    """
    if not rest:
        return True
    if _ABBREVIATION.match(rest):
        return False
    if not rest[0].isspace():
        return letter.isupper() or rest[0] in ".):"
    rest = rest.lstrip()
    if not rest:
        return True
    if letter.islower():
        return False
    if not rest[0].isalnum():
        return True
    option = item.text_of.get(letter, "")
    if option and (_normalise(rest[: 2 * len(option) + 10]) + " ").startswith(option + " "):
        return True
    return rest.split(None, 1)[0].lower().strip(".,;:") in _CONNECTIVES


def _letter_list(text: str, item: _Item) -> str | None:
    """Sorted unique letters at the start of text ("A, C", "A and C", "AC", "(a) (c)")."""
    match = _LETTER_LIST.match(text)
    if not match:
        return None
    tokens = _TOKEN_RE.findall(_AND.sub(" ", match.group()))
    plain = [token for token in tokens if token.isalpha()]
    if any(len(token) > 1 and list(token) != sorted(set(token)) for token in plain):
        return None  # a capitalised word ("NONE", "LETTERS"), not letters written together
    if len({token.isupper() for token in plain}) > 1:
        return None  # "B w": a letter followed by the start of some word
    last = tokens[-1]
    if last[0] not in "([" and not _continuation_ok(text[match.end() :], last[-1], item):
        return None
    return "".join(sorted({ch.upper() for token in tokens for ch in token if ch.isalpha()}))


def _letter(text: str, item: _Item) -> str | None:
    """One letter at the start of text; several letters are a hedge, not an answer."""
    match = _LETTER.match(text)
    if not match:
        return None
    bracketed = match.group(1) or match.group(2)
    letter = bracketed or match.group(3)
    if not bracketed and not _continuation_ok(text[match.end() :], letter, item):
        return None
    listed = _letter_list(text, item)
    return None if listed and len(listed) > 1 else letter.upper()


def _number(text: str) -> str | None:
    """An integer or number word at the start of text, or after the last "=" of an equation."""
    if "=" in text:
        text = text.rsplit("=", 1)[1].strip(_EDGE)
    match = _NUMBER.match(text)
    if not match or _NUMBER_HEDGE.match(text, match.end()):
        return None
    return _canonical_number(match.group())


def _parse(payload: str, item: _Item) -> Extraction | None:
    """The answer in the text that follows a marker, or None when it holds none."""
    text = _clean(payload)
    if not text:
        return None
    if item.format == "number":
        answer = _number(text)
    else:
        answer = _letter_list(text, item) if item.format == "letters" else _letter(text, item)
        answer = answer or item.by_text.get(_normalise(text))
    return item.verdict(answer) if answer else None


def _line_end(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end < 0 else end


def _payload(text: str, start: int, next_line: bool) -> str:
    """The rest of the line from start; with next_line, the next non-blank line if that is empty."""
    end = _line_end(text, start)
    line = text[start : min(end, start + _MAX_PAYLOAD)]
    if not next_line or line.strip(_EDGE + "#"):
        return line
    for _ in range(_MAX_SKIPPED_LINES):
        if end >= len(text):
            break
        start, end = end + 1, _line_end(text, end + 1)
        line = text[start : min(end, start + _MAX_PAYLOAD)]
        if line.strip() and not line.lstrip().startswith("```"):
            return line
    return ""


def _starts_line(text: str, start: int) -> bool:
    """Whether only markdown and words like "Final" precede start on its line."""
    line_start = text.rfind("\n", 0, start) + 1
    return start - line_start <= 40 and _LINE_LEAD.fullmatch(text, line_start, start) is not None


def _braced(text: str, start: int) -> str:
    """Content of the brace group opened just before start (one level of nesting, one line)."""
    match = _BRACED.match(text, start, start + _MAX_PAYLOAD)
    return match.group(1) if match else ""


def _backwards(
    low: str, patterns: tuple[tuple[str, re.Pattern[str]], ...]
) -> Iterator[re.Match[str]]:
    """Matches of the patterns in lowercased text that begin a word, last first.

    Each pattern starts with its literal, found with str.rfind from the end, and only the last
    _MAX_CANDIDATES occurrences of each literal are tried: the answer sits near the end, so a long
    reasoning is not scanned in full and a repetition loop costs no more than a short reply.
    """

    def matches(literal: str, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        end = len(low)
        for _ in range(_MAX_CANDIDATES):
            start = low.rfind(literal, 0, end)
            if start < 0:
                return
            end = start + len(literal) - 1
            # Word boundary for English keywords; Chinese is written without spaces.
            before = low[start - 1] if start else " "
            if literal[0].isascii() and literal[0].isalnum() and (before.isalnum() or before == "_"):
                continue
            match = pattern.match(low, start)
            if match:
                yield match

    return heapq.merge(
        *(matches(literal, pattern) for literal, pattern in patterns), key=lambda m: m.start(), reverse=True
    )


def _explicit(text: str, low: str, item: _Item, line_start_only: bool = False) -> Extraction | None:
    """Rule 1: the last explicit marker that holds an answer."""
    for match in _backwards(low, _MARKS):
        start, end = match.span()
        if match.re is _BOXED:
            payload = _braced(text, end)
        else:
            at_line_start = _starts_line(text, start)
            if line_start_only and not at_line_start:
                continue
            if not match.group("sep") and not (
                at_line_start and not text[end : _line_end(text, end)].strip(_EDGE + "#")
            ):
                continue  # "answer" in running text, not a header
            payload = _payload(text, end, at_line_start)
        # "Answer: the correct option is B" states its answer in prose.
        found = _parse(payload, item) or _prose(payload, _lower(payload), item)
        if found:
            return found
    return None


def _prose(text: str, low: str, item: _Item) -> Extraction | None:
    """Rule 2: the last prose statement of the answer."""
    patterns = _PHRASES + _COUNT_PHRASES if item.format == "number" else _PHRASES
    for match in _backwards(low, patterns):
        # A count ("there are 7") is read on its own line only; a statement may introduce the
        # answer on the next line ("The correct answer is:").
        found = _parse(_payload(text, match.end(), match.re in _STATEMENTS), item)
        if found:
            return found
    return None


def _edge_line(text: str, last: bool) -> str:
    """The last (or first) non-blank line that is not a code fence, looking a few lines in."""
    stripped = text.strip()
    if last:
        lines = stripped.rsplit("\n", _MAX_SKIPPED_LINES)[::-1]
    else:
        lines = stripped.split("\n", _MAX_SKIPPED_LINES)
    for line in lines:
        if "\n" in line:
            break
        if line.strip() and not line.lstrip().startswith("```"):
            return line
    return ""


def _bare(line: str, item: _Item, first: bool) -> Extraction | None:
    """Rule 3: a line that is nothing but the answer (see the module docstring)."""
    text = _clean(line).rstrip(".!")
    if not text:
        return None
    if item.format == "number":
        return item.verdict(_canonical_number(text)) if _BARE_NUMBER.fullmatch(text) else None
    if _LETTER_LIST.fullmatch(text):
        letters = _letter_list(text, item)
        if letters and (item.format == "letters" or len(letters) == 1):
            return item.verdict(letters)
        return None
    match = _LETTER.match(text) if first else None
    if not match or (match.group(3) and text[match.end() : match.end() + 1] not in (")", ".", ":")):
        return None
    letter = (match.group(1) or match.group(2) or match.group(3)).upper()
    rest = _normalise(text[match.end() :])
    return item.verdict(letter) if rest and rest == item.text_of.get(letter) else None


def _from_text(text: str, item: _Item) -> Extraction | None:
    """Rules 1-3 on visible text."""
    low = _lower(text)
    return (
        _explicit(text, low, item)
        or _prose(text, low, item)
        or _bare(_edge_line(text, last=True), item, first=False)
        or _bare(_edge_line(text, last=False), item, first=True)
    )


def _from_reply(reply: str, item: _Item) -> Extraction | None:
    """Rules 1-3 on the visible reply, without an invented next question (rule 0)."""
    cut = _NEXT_QUESTION.search(reply)
    if cut and reply[: cut.start()].strip():
        found = _from_text(reply[: cut.start()], item)
        if found or _EXEMPLAR_REASONING.search(reply, cut.end()):
            return found
    return _from_text(reply, item)


def _final_line(thinking: str, item: _Item) -> Extraction | None:
    """The thinking's last line, when it is an explicit answer opening the line (or a box).

    A thought cut off mid-sentence ("... so the answer is B? Wait") is not taken for an answer.
    """
    line = _edge_line(thinking[-4 * _MAX_PAYLOAD :], last=True)
    return _explicit(line, _lower(line), item, line_start_only=True)


def extract_answer(
    response: str, options: Sequence[str], answer_format: AnswerFormat = "letter"
) -> Extraction:
    """Read the answer a generation gives to a multiple-choice or counting item; never raises.

    ``options`` are the option texts in order (letter i is ``LETTERS[i]``); for
    ``answer_format="number"`` they are the valid answers as number strings.
    """
    item = _Item(options, answer_format)
    text = _SPECIAL_TOKENS.sub("", response) if isinstance(response, str) else ""
    thinking, reply, open_thinking = "", text, None
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        thinking, reply = text[: closes[-1].start()], text[closes[-1].end() :]
    opened = _THINK_OPEN.search(reply)
    if opened:
        reply, open_thinking = reply[: opened.start()], reply[opened.end() :]
    found = _from_reply(reply, item)
    if found:
        return found
    if open_thinking is not None:
        return _final_line(open_thinking, item) or _UNFINISHED
    return (thinking and _final_line(thinking, item)) or _NO_ANSWER
