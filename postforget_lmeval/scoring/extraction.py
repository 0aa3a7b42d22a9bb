"""Answer extraction from free-form generations (the paper's section 3 and Appendix B).

The paper stresses that measured forgetting depends heavily on extraction: a model that answered
but was misread looks as if it forgot. Extraction is therefore conservative (explicit answer
markers beat prose, prose beats bare-line guesses) and it says *why* no answer was read
(``no_answer`` or ``unfinished``) and when an answer was given that is not an option
(``invalid``), so that none of these passes silently for a wrong answer.

Rules, in priority order (the first rule that yields an answer wins):

0. Preparation. Chat special tokens (``<|im_end|>``, ``</s>`` ...) are dropped. Thinking is split
   from the visible reply: everything up to the last ``</think>`` is thinking (the chat template
   may have opened the block itself), and a ``<think>`` that is never closed starts thinking that
   runs to the end. If the reply goes on with a line starting ``Question:`` or ``Q:`` (a base
   model inventing the next few-shot exemplar), only the text before that line counts, provided
   it holds an answer or the continuation has a ``Reasoning:`` or ``A:`` line (the shape of an
   invented exemplar); otherwise (a chat model restating the question) the whole reply counts.
1. Explicit markers; the last one in the reply wins: ``Answer: X`` in any case and markdown
   (``**Answer:** X``, ``**Answer: X**``, ``Final answer: X``, ``答案：X``, ``【答案】X``, also
   inside code such as ``print("Answer: X")``), a header line (``### Final Answer``,
   ``**Answer:**``) whose answer is on the next non-blank line, ``\\boxed{X}`` (wrappers such as
   ``\\text{}`` removed), a chosen-option header (``**Correct Option:** [ B ]``, ``Final choice:
   (B)``, ``**Answer Choice:** (B)``) and ``answer (X)`` when the bracketed letter closes the line (``..., or answer (F).``).
   If the last explicit answer is not an option the result is ``invalid``; earlier answers are
   not consulted.
2. Prose; the last one wins: ``the (correct) answer is X``, also qualified (``is most likely
   (C)``, ``is closest to D``, ``seems to be (C)``) or after a short clause (``the answer that
   does not fit is (C)``); ``the correct / only remaining / closest option is X``; ``the answers
   are A and C``; the letter before a verdict (``D is the correct answer``, ``This makes (E) the
   correct answer``, ``This leaves (C) as the only possible answer``); a
   statement ending in ``is:`` whose next line is the answer alone (``C. <option C's text>``,
   unless more lettered lines follow: that is a restated options list);
   ``故选C``, ``应选C``, ``正确选项是C``; for numbers also ``there are 7``, ``a total of 7``,
   ``in total, 7``.
3. Bare lines: the last non-blank line, else the first, is nothing but the answer (``B``,
   ``(B)``, ``B.``, ``**B**``, ``#### B``, ``7``). The first line may also be a letter followed by
   exactly that option's text (``C) Paris``): a base model prompted up to ``Answer:`` replies that
   way; not when another lettered line follows it (a restated options list).
4. Closing statement (one-letter items): the last line ends by saying what something is: a
   bracketed letter (``Therefore the most likely reaction is (E).``), a capital that is an option
   letter, or exactly one option's text (``... the leader who was not transformational is
   Margaret Thatcher.``), or the last line names the correct letter (``Therefore, option C is
   correct.``).
5. The whole reply is exactly one option's text (one-letter items).

What counts as an answer in the text after a marker: a letter that is bracketed, or followed by
punctuation, the end, a connective (``because``, ``is`` ...) or that option's own text. A lone
lowercase letter followed by a word is an article (``a good approach``), not an answer. A hedge
such as ``B or C``, ``(A) or (D)``, ``7 or 8`` or, for one-letter items, ``B and C`` or ``A、C``
is not an answer, and it ends the search: the reply's last statement declined to choose, so an
earlier tentative answer is not taken instead. The text of exactly one option counts as that
option's letter; texts are compared ignoring case, punctuation, symbols and LaTeX commands but
keeping minus signs (``\\boxed{[2 \\leq y \\leq 8]}`` is the option ``2 ≤ y ≤ 8``). Several
letters (``letters`` format) are separated by commas, ``、``, ``and``/``和``, spaces or nothing,
and a run written together must be in alphabetical order (``AC``; so ``NONE`` or ``$LETTERS`` is
no answer). Numbers: an integer or a number word up to twenty; for an equation, the value after
its last ``=``.

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
* Cost: keywords are found with ``str.rfind`` backwards from the end of the reply, all keywords'
  occurrences are merged by position before any pattern is tried (so the work is proportional to
  what follows the answer) and only the last 64 occurrences of each keyword are tried; each
  payload is one line of at most 200 characters, the closing rule reads at most the last 300
  characters, and the thinking is only searched for its tags and its last line; nothing
  backtracks catastrophically. Replies without ``<`` skip the tag scans.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Literal

from postforget_lmeval.tasks.prompts import LETTERS, AnswerFormat

Status = Literal["answered", "invalid", "no_answer", "unfinished"]

EXTRACTOR_NAME = "postforget-strict"
EXTRACTOR_VERSION = 2
"""Logged in every postforget record; bumped whenever a rule change can change an extracted answer."""


@dataclass(frozen=True)
class Extraction:
    """What was read from one generation; ``answer`` is None for no_answer/unfinished."""

    answer: str | None
    status: Status


_NO_ANSWER = Extraction(None, "no_answer")
# What the parsers return for a hedge ("(A) or (D)", "7 or 8"): the statement was made and names
# no single answer, so the search stops there instead of falling back to earlier, tentative ones.
_HEDGE = "?"
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
# The start of a next exemplar ("Question:", or BBH's "Q:"), and the line that shows the text after it
# is an invented exemplar (its reasoning) rather than a chat model restating the question.
_NEXT_QUESTION = ("\nQuestion:", "\nQ:")
_EXEMPLAR_REASONING = re.compile(r"\n(?:Reasoning|A):")

# Markers are searched in lowercased text, backwards from the end with str.rfind on a literal
# that starts each pattern (see _backwards), so that only the last few are ever looked at.
# "：" is the full-width colon of Chinese text.
_BOXED = re.compile(r"\\boxed[ \t]*\{")
# A word that makes "option:" name the chosen option ("**Correct Option:** [ B ]"), not a list.
_CHOSEN = re.compile(r"(?:correct|right|best|final|chosen|selected|my|answer)[ \t*_]*$")
_OPTION_MARK = r"s?(?![a-z0-9_])[ \t]*[*_]*[ \t]*(?P<sep>[:：])"
_MARKS: tuple[tuple[str, re.Pattern[str], re.Pattern[str] | None], ...] = (
    # "answer" with a colon, ending its line (a header) or before a bracket ("answer (F)."): the
    # regex rejects "answer" in running text before any closer look.
    (
        "answer",
        re.compile(r"answers?(?![a-z0-9_])(?:[ \t]*[*_]*[ \t]*(?P<sep>[:：])|(?=[ \t*_#]*(?:\n|$))|(?=[ \t]*[(\[]))"),
        None,
    ),
    ("答案", re.compile(r"答案[ \t]*(?P<sep>[:：]|是|为|】)?"), None),  # 【答案】 is the GAOKAO header
    ("\\boxed", _BOXED, None),
    ("option", re.compile("option" + _OPTION_MARK), _CHOSEN),
    ("choice", re.compile("choice" + _OPTION_MARK), _CHOSEN),
)
# "or answer (F)." ends a reply without "is" or a colon; only a bracketed letter closing the line.
_BRACKETED_ONLY = re.compile(r"[ \t]*(?:\([ \t]*[A-Za-z][ \t]*\)|\[[ \t]*[A-Za-z][ \t]*\])[ \t*_]*[.!]?[ \t*_]*$")
_VERB = (
    r"(?:is|are|(?:would|should|must|will|could|might|has[ \t]+to)[ \t]+be|(?:seems?|appears?)[ \t]+to[ \t]+be)"
    r"(?![a-z])"
)
# Words that qualify a statement without withdrawing it: "the answer is most likely (C)",
# "the answer is closest to D". A hedge that follows ("(A) or (D)") is still a hedge.
_QUALIFIERS = (
    r"(?:[ \t]+(?:therefore|thus|clearly|definitely|indeed|likely|probably|most|closest|close|nearest"
    r"|to|be|then|still|simply|actually|certainly|obviously|either))*"
)
# An adjective that makes "option is" a choice: "the only remaining option is (G)".
_CHOICE_WORD = re.compile(
    r"(?:correct|right|best|only|remaining|final|likely|appropriate|plausible|suitable|accurate|reasonable"
    r"|closest|nearest|intended|possible|valid)[ \t]+$"
)
_PHRASES: tuple[tuple[str, re.Pattern[str], re.Pattern[str] | None], ...] = (
    (
        "answer",
        # "the answer that doesn't fit the description is (C)": a short relative clause may intervene.
        re.compile(
            rf"answers?(?:[ \t]+(?:that|which|to|for)[^.\n!?:;]{{0,60}}?)?[ \t]+{_VERB}{_QUALIFIERS}[ \t]*[:：]?"
        ),
        None,
    ),
    *(
        (word, re.compile(rf"{word}s?[ \t]+(?:is|are)(?![a-z]){_QUALIFIERS}[ \t]*[:：]?"), _CHOICE_WORD)
        for word in ("option", "choice", "letter")
    ),
    # Chinese: "故选C", "应选 B", "正确选项是C"
    *((word, re.compile(rf"{word}[ \t]*[:：]?"), None) for word in ("故选", "应选")),
    ("选项", re.compile(r"选项(?:是|为)[ \t]*[:：]?"), re.compile(r"(?:正确|最佳)的?$")),
)
_STATEMENTS = {pattern for _, pattern, _ in _PHRASES}
# "D is the correct answer.", "This makes (E) the correct answer.": the letter comes first.
# ("the only option" alone describes, "the only possible option" chooses)
_VERDICT = re.compile(
    r"(?:(?:correct|right|best)(?:[ \t]+(?:possible|remaining|valid|viable|plausible))?"
    r"|only[ \t]+(?:possible|remaining|valid|viable|plausible|correct|right))[ \t]+(?:answer|option|choice)(?![a-z])"
)
_SUBJECT_LETTER = r"(\([ \t]*[A-Z][ \t]*\)|\[[ \t]*[A-Z][ \t]*\]|(?<![A-Za-z0-9])[A-Z])[*_]*"
_VERDICT_SUBJECT = re.compile(
    rf"(?:{_SUBJECT_LETTER}[ \t]+(?:is|was|remains|(?:would|must|should)[ \t]+be|seems[ \t]+to[ \t]+be)"
    rf"|(?<![a-z])(?:makes|making|make|leaves|leaving)[ \t]+{_SUBJECT_LETTER}(?:[ \t]+as)?)[ \t]+the[ \t]+$"
)
# "The statement that is NOT true is:" with the answer alone on the next line ("C. <its text>").
_INTRO = re.compile(r"(?:is|are)[:：][ \t*_]*(?=\n|$)")
_INTROS = tuple((literal, _INTRO, None) for literal in ("is:", "are:", "is：", "are："))
# The reply's last sentence names its choice: "Therefore the most likely reaction is (E)."
_CLOSING_LETTER = re.compile(
    r"(?<![A-Za-z])(?:is|be|are)[ \t]+(?:option[ \t]+)?[*_]*"
    r"(?:\([ \t]*(?P<b>[A-Za-z])[ \t]*\)|\[[ \t]*(?P<s>[A-Za-z])[ \t]*\]|(?P<u>[A-Z]))"
    r"[*_]*[ \t]*[.!]?[ \t*_]*$"
)
# ... or names the letter that is correct: "Therefore, option C is correct."
_CLOSING_VERDICT = re.compile(
    r"(?<![A-Za-z])(?:(?:option|choice)[ \t]+)?[*_]*"
    r"(?:\([ \t]*(?P<b>[A-Za-z])[ \t]*\)|\[[ \t]*(?P<s>[A-Za-z])[ \t]*\]|(?P<u>[A-Z]))[*_]*"
    r"[ \t]+is[ \t]+(?:the[ \t]+)?(?:correct|right)(?:[ \t]+(?:one|answer|option|choice))?[*_]*[ \t]*[.!]?[ \t*_]*$"
)
# ... or the text of one option: "the leader who could not be termed transformational is Margaret Thatcher."
_CLOSING_VERB = re.compile(r"(?<![A-Za-z])(?:is|be|are|was)[ \t]+")
_MAX_CLOSING = 300  # characters of the last line that the closing rule reads
_MAX_VERDICT = 80  # characters of it that a closing letter or verdict can take
_COUNT_TAIL = r"(?:[ \t]+(?:there[ \t]+are|(?:i|you|we)[ \t]+have))?(?![a-z])"
_COUNT_PHRASES: tuple[tuple[str, re.Pattern[str], re.Pattern[str] | None], ...] = (
    (
        "there",
        re.compile(r"there[ \t]+(?:are|is|were)(?:[ \t]+(?:a[ \t]+total[ \t]+of|exactly|only))?(?![a-z])"),
        None,
    ),
    ("total", re.compile(rf"total(?:[ \t]+(?:of|is)|,)?{_COUNT_TAIL}"), None),
    ("altogether", re.compile(rf"altogether,?{_COUNT_TAIL}"), None),
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
# "、" and "和" join letters in Chinese ("A、C、D").
_LETTER_LIST = re.compile(rf"{_TOKEN}(?:[ \t]*(?:[,;/&+、][ \t]*)?(?:(?:\band\b|和)[ \t]*)?{_TOKEN})*")
_AND = re.compile(r"\band\b|和")
# A second letter offered as an alternative: "(A) or (D)", "B or C", "B/C".
_OR_LETTER = re.compile(
    r"[ \t]*,?[ \t]*(?:\bor\b|或|/)[ \t]*(?:either[ \t]+)?"
    r"(?:\([ \t]*[A-Za-z][ \t]*\)|\[[ \t]*[A-Za-z][ \t]*\]|[A-Z](?![A-Za-z0-9]))"
)
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
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_MINUS = re.compile(r"[-–−](?=[ \t]*\d)")  # hyphen, en dash and minus sign before a number
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _normalise(text: str) -> str:
    """Case-, punctuation- and LaTeX-insensitive form used to compare with option texts.

    Symbols other than a minus sign are dropped on both sides, so ``[2 \\leq y \\leq 8]`` reads as
    the option ``2 ≤ y ≤ 8`` and not as ``–2 ≤ y ≤ 8``.
    """
    if "\\" in text:
        text = _LATEX_COMMAND.sub(" ", text)
    if "-" in text or "–" in text or "−" in text:
        text = _MINUS.sub(" minus ", text)
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
    """The item's options in the forms the parsers compare against (built on first use)."""

    def __init__(self, options: Sequence[str], answer_format: AnswerFormat) -> None:
        self.format = answer_format
        self.options = options
        self.n_letters = min(len(options), len(LETTERS))

    @cached_property
    def text_of(self) -> dict[str, str]:
        return {LETTERS[i]: _normalise(str(option)) for i, option in enumerate(self.options[: self.n_letters])}

    @cached_property
    def longest(self) -> int:
        """Characters in the longest option text: a longer reply or tail cannot be one."""
        return max((len(str(option)) for option in self.options[: self.n_letters]), default=0)

    @cached_property
    def by_text(self) -> dict[str, str]:
        """Option text -> letter; only a text that no other option shares identifies a letter."""
        texts = list(self.text_of.values())
        return {t: LETTERS[i] for i, t in enumerate(texts) if t and texts.count(t) == 1}

    @cached_property
    def numbers(self) -> set[str]:
        return {_canonical_number(str(option).strip()) for option in self.options} if self.format == "number" else set()

    def verdict(self, answer: str) -> Extraction:
        """Answered when every part of the answer is one of the item's options."""
        if self.format == "number":
            valid = not self.numbers or answer in self.numbers
        else:
            valid = all(0 <= LETTERS.find(ch) < self.n_letters for ch in answer)
        return Extraction(answer, "answered" if valid else "invalid")


@lru_cache(maxsize=4096)
def _cached_item(options: tuple[str, ...], answer_format: AnswerFormat) -> _Item:
    return _Item(options, answer_format)


def _item(options: Sequence[str], answer_format: AnswerFormat) -> _Item:
    """The item's options, shared by the responses to one item (both sides, every seed and replicate)."""
    try:
        return _cached_item(tuple(options), answer_format)
    except TypeError:  # unhashable option values
        return _Item(options, answer_format)


def _clean(payload: str) -> str:
    """Strip markdown, quotes, LaTeX wrappers and an "option"/"choice" prefix around an answer."""
    text = payload[:_MAX_PAYLOAD]
    for _ in range(3 if "\\" in text else 0):  # nested wrappers such as \boxed{\text{C}}
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
    if _OR_LETTER.match(text, match.end()):
        return _HEDGE
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
    if (bracketed or letter.isupper()) and _OR_LETTER.match(text, match.end()):
        return _HEDGE
    if not bracketed and not _continuation_ok(text[match.end() :], letter, item):
        return None
    listed = _letter_list(text, item)
    return _HEDGE if listed == _HEDGE or (listed and len(listed) > 1) else letter.upper()


def _number(text: str) -> str | None:
    """An integer or number word at the start of text, or after the last "=" of an equation."""
    if "=" in text:
        text = text.rsplit("=", 1)[1].strip(_EDGE)
    match = _NUMBER.match(text)
    if not match:
        return None
    return _HEDGE if _NUMBER_HEDGE.match(text, match.end()) else _canonical_number(match.group())


def _parse(payload: str, item: _Item) -> Extraction | None:
    """The answer in the text that follows a marker, or None when it holds none."""
    payload = payload[:_MAX_PAYLOAD]
    text = _clean(payload)
    if not text:
        return None
    if len(text) == 1 and text.isascii() and text.isalpha() and item.format != "number":
        return item.verdict(text.upper())  # the common case, "Answer: B"
    if item.format == "number":
        answer = _number(text)
    else:
        answer = _letter_list(text, item) if item.format == "letters" else _letter(text, item)
        # An option's text, also in LaTeX ("$\\frac{1}{2}$", which cleaning has stripped of "\\").
        answer = answer or item.by_text.get(_normalise(text)) or item.by_text.get(_normalise(payload))
    if answer == _HEDGE:
        return _NO_ANSWER
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


_Pattern = tuple[str, re.Pattern[str], "re.Pattern[str] | None"]
_LOOKBACK = 40  # characters before a marker that its required preceding word is looked for in


def _backwards(low: str, patterns: tuple[_Pattern, ...]) -> Iterator[re.Match[str]]:
    """Matches of the patterns in lowercased text that begin a word, last first.

    Each pattern starts with its literal, found with str.rfind from the end, and only the last
    _MAX_CANDIDATES occurrences of each literal are tried: the answer sits near the end, so a long
    reasoning is not scanned in full and a repetition loop costs no more than a short reply. The
    occurrences of all literals are merged by position before any pattern is tried, so the work
    is proportional to what follows the answer. A pattern with a lookback counts only where the
    lookback matches the text just before it.
    """
    left = [_MAX_CANDIDATES] * len(patterns)

    def before(index: int, end: int) -> int:
        """The literal's last occurrence that begins a word and starts before end, or -1."""
        literal = patterns[index][0]
        # Word boundary for English keywords; Chinese is written without spaces.
        word = literal[0].isascii() and literal[0].isalnum()
        while left[index]:
            left[index] -= 1
            start = low.rfind(literal, 0, end + len(literal) - 1)
            if start < 0 or not (word and start and (low[start - 1].isalnum() or low[start - 1] == "_")):
                return start
            end = start
        return -1

    heads = [(start, index) for index in range(len(patterns)) if (start := before(index, len(low))) >= 0]
    while heads:
        head = max(heads)
        heads.remove(head)
        start, index = head
        _, pattern, lookback = patterns[index]
        match = pattern.match(low, start)
        if match and (lookback is None or lookback.search(low, max(0, start - _LOOKBACK), start)):
            yield match
        following = before(index, start)
        if following >= 0:
            heads.append((following, index))


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
                if not _BRACKETED_ONLY.match(text, end, _line_end(text, end)):
                    continue  # "answer" in running text, not a header
            payload = _payload(text, end, at_line_start)
        # "Answer: the correct option is B" states its answer in prose.
        found = _parse(payload, item) or _prose(payload, _lower(payload), item)
        if found:
            return found
    return None


_PROSE_LETTER = _PHRASES + (
    ("correct", _VERDICT, None), ("right", _VERDICT, None), ("best", _VERDICT, None), ("only", _VERDICT, None),
    *_INTROS,
)
_PROSE_NUMBER = _PHRASES + _COUNT_PHRASES + _INTROS


def _verdict(text: str, start: int, item: _Item) -> Extraction | None:
    """The letter that "is the correct answer" (or that something "makes the correct answer")."""
    subject = _VERDICT_SUBJECT.search(text, max(0, start - _LOOKBACK), start)
    if not subject:
        return None
    return item.verdict((subject.group(1) or subject.group(2)).strip("()[] \t"))


def _prose(text: str, low: str, item: _Item) -> Extraction | None:
    """Rule 2: the last prose statement of the answer."""
    for match in _backwards(low, _PROSE_NUMBER if item.format == "number" else _PROSE_LETTER):
        if match.re is _VERDICT:
            found = _verdict(text, match.start(), item) if item.format == "letter" else None
        elif match.re is _INTRO:
            # Only an answer that stands alone on the next line: "C. <option C's text>", "(C)".
            line = _payload(text, match.end(), True)
            found = None if _lists_options(text, line, match.end()) else _bare(line, item, first=True)
        else:
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
    text = _clean(line.lstrip(" \t#")).rstrip(".!")
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


def _closing(line: str, item: _Item) -> Extraction | None:
    """Rule 4: the last line ends by saying what something "is": a bracketed letter or an option's text."""
    if item.format != "letter":
        return None
    line = line[-_MAX_CLOSING:].rstrip()
    # Both patterns end the line and are short: only its last characters can hold a match.
    tail = max(0, len(line) - _MAX_VERDICT)
    match = _CLOSING_LETTER.search(line, tail) or _CLOSING_VERDICT.search(line, tail)
    if match:
        if match.group("u"):  # a bare capital is a letter only when it is an option ("is K." is not)
            return item.verdict(match.group("u")) if LETTERS.find(match.group("u")) < item.n_letters else None
        return item.verdict((match.group("b") or match.group("s")).upper())
    sentence = line[max(line.rfind(". "), line.rfind("? "), line.rfind("! ")) + 1 :]
    reach = 2 * item.longest + 20  # a longer tail is no option's text
    for verb in reversed(list(_CLOSING_VERB.finditer(sentence, max(0, len(sentence) - reach - 5)))):
        tail = sentence[verb.end() :]
        if len(tail) > reach:
            break
        letter = item.by_text.get(_normalise(tail))
        if letter:
            return item.verdict(letter)
    return None


def _whole_option(text: str, item: _Item) -> Extraction | None:
    """Rule 5: the whole reply is the text of exactly one option."""
    if item.format != "letter" or len(text) > 2 * item.longest + 20:
        return None
    letter = item.by_text.get(_normalise(text))
    return item.verdict(letter) if letter else None


# The layout the prompts ask for, "Answer: B" alone on the last line (markdown allowed). When the
# last line is exactly that, it holds the last explicit marker and rule 1 reads its letter, so it
# is read at once without searching the rest of the reply.
_FINAL_LINE = re.compile(r"[ \t*_#>]*(?:final[ \t]+)?answer[ \t*_]*:[ \t*_]*\(?([A-Za-z])\)?[ \t*_.]*", re.I)


_OPTION_LABEL = re.compile(r"[ \t>*_-]*[(\[]?[A-Za-z][)\].:][ \t]")  # "B) ", "(B) ", "B. ", "- B: "


def _lists_options(text: str, line: str, after: int) -> bool:
    """Whether the line found at or after ``after`` is followed by another lettered line: the start
    of a restated options list ("The options are:\nA) Lyon\nB) Marseille"), not an answer."""
    at = text.find(line, after) if line else -1
    if at < 0:
        return False
    rest = text[at + len(line) : at + len(line) + _MAX_PAYLOAD].lstrip(" \t\r\n")
    return _OPTION_LABEL.match(rest) is not None


def _from_text(text: str, item: _Item) -> Extraction | None:
    """Rules 1-5 on visible text."""
    if item.format != "number":
        end = len(text.rstrip())
        final = _FINAL_LINE.fullmatch(text, text.rfind("\n", 0, end) + 1, end)
        if final:
            return item.verdict(final.group(1).upper())
    low = _lower(text)
    found = _explicit(text, low, item) or _prose(text, low, item)
    if found:
        return found
    last_line, first_line = _edge_line(text, last=True), _edge_line(text, last=False)
    return (
        _bare(last_line, item, first=False)
        or (None if _lists_options(text, first_line, 0) else _bare(first_line, item, first=True))
        or _closing(last_line, item)
        or _whole_option(text, item)
    )


def _from_reply(reply: str, item: _Item) -> Extraction | None:
    """Rules 1-5 on the visible reply, without an invented next question (rule 0)."""
    cuts = [at for at in (reply.find(marker) for marker in _NEXT_QUESTION) if at >= 0]
    cut = min(cuts, default=-1)
    if cut >= 0 and reply[:cut].strip():
        found = _from_text(reply[:cut], item)
        if found or _EXEMPLAR_REASONING.search(reply, cut + 2):
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
    item = _item(options, answer_format)
    text = response if isinstance(response, str) else ""
    thinking, reply, open_thinking = "", text, None
    if "<" in text:  # tags and special tokens; most replies have none, so skip the scans
        text = reply = _SPECIAL_TOKENS.sub("", text)
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
