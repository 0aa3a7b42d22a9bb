"""Answer extraction from free-form generations (the paper's section 3 and Appendix B).

The paper stresses that measured forgetting depends heavily on extraction: a model that answered
but was misread looks as if it forgot. Extraction is therefore conservative (explicit answer
markers beat prose, prose beats bare-line guesses) and it says *why* no answer was read
(``no_answer`` or ``unfinished``) and when an answer was given that is not an option
(``invalid``), so that none of these passes silently for a wrong answer.

Rules, in priority order (the first rule that yields an answer wins). What an answer of each format
looks like, which prose statements and which rules after rule 3 apply to it, is that format's parser
(``formats/``); this module holds the order of the rules and where each looks.

0. Preparation. Chat special tokens (``<|im_end|>``, ``</s>`` ...) are dropped. Thinking is split
   from the visible reply: everything up to the last ``</think>`` is thinking (the chat template
   may have opened the block itself), and a ``<think>`` that is never closed starts thinking that
   runs to the end. If the reply goes on with a line starting ``Question:`` or ``Q:`` (a base
   model inventing the next few-shot exemplar), only the text before that line counts, provided
   it holds an answer or the continuation has a ``Reasoning:`` or ``A:`` line (the shape of an
   invented exemplar); otherwise (a chat model restating the question) the whole reply counts. A
   numbered heading (``Question 2:``, ``Example 2:``) starts a next exemplar too, and so does, when
   the text before it holds an answer, a blank line followed by a question (a line ending in ``?``)
   with options and an answer of its own (``The odd one out is (G).`` then an invented question), and
   so does a lettered list of options none of which is this item's (``(A) apple (B) carrot``, inline or
   one a line): the text before the question that introduces it counts when it holds an answer
   (``_invented.py``).
1. Explicit markers; the last one in the reply wins: ``Answer: X`` in any case and markdown
   (``**Answer:** X``, ``**Answer: X**``, ``Final answer: X``, ``答案：X``, ``【答案】X``, also
   inside code such as ``print("Answer: X")``), a header line (``### Final Answer``,
   ``**Answer:**``) whose answer is on the next non-blank line, ``\\boxed{X}`` (wrappers such as
   ``\\text{}`` removed), a chosen-option header (``**Correct Option:** [ B ]``, ``Final choice:
   (B)``, ``**Answer Choice:** (B)``) and ``answer (X)`` when the bracketed letter closes the line
   (``..., or answer (F).``). If the last explicit answer is not an option the result is
   ``invalid``; earlier answers are not consulted. A marker that opens a quote after an
   instruction phrase (``write exactly "Answer: 20"``, ``(e.g. "Answer: 7")``, ``in the format``,
   ``for example``, ``such as``, ``like``) is the prompt's format instruction echoed, not an answer: it
   is skipped, and the answer is read from the reply's other markers and rules.
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
   Margaret Thatcher.``; not when a hedge or negation just before the verb opens it: ``It might be
   a fish.``), or the last line names the correct letter (``Therefore, option C is correct.``).
5. The whole reply is exactly one option's text, or one sentence that ends with exactly one option's
   text (``The sound was made by a dog.``) unless a hedge, a negation or another option's text comes
   before it (one-letter items).

What counts as an answer in the text after a marker: a letter that is bracketed, or followed by
punctuation, the end, a connective (``because``, ``is`` ...) or that option's own text. A lone
lowercase letter followed by a word is an article (``a good approach``), not an answer. A hedge
such as ``B or C``, ``(A) or (D)``, ``7 or 8`` or, for one-letter items, ``B and C`` or ``A、C``
is not an answer, and it ends the search for earlier answers: the statement declined to choose, so an
earlier tentative answer is not taken instead. A commitment after the hedge's sentence, read by these
rules from the text that follows it, counts (``(A), (B), (C) and (D) are all plausible. The answer is
(B).``); without one the reply is ``no_answer``. Three letters or more in a row are a list whatever
follows them (``A, B, C, D all fit``). So is ``B) a dog or C) a bird`` (each letter with its
option's text), and so is a statement whose sentence goes on to reject the answer it names (``the
closest option is (J), but this is not the correct answer``): ``no_answer``. A sentence after a
marker that ends with exactly one option's text (``the answer is the one with a fish.``) names that
option, unless a negation or hedge (``not``, ``could``, ``either`` ...) or another option's text
comes before it. The text of exactly one option counts as that
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
  characters, the thinking is only searched for its tags and its last line, the text after a hedge
  is read again, and only the first 16 lettered lists are looked at for an invented question; nothing
  backtracks catastrophically. Replies without ``<`` skip the tag scans.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from postforget_lmeval.scoring._invented import invented_question
from postforget_lmeval.scoring._markers import (
    BOXED,
    BRACKETED_ONLY,
    ECHOED,
    INTRO,
    MARKS,
    STATEMENT_PATTERNS,
    VERDICT,
    VERDICT_SUBJECT,
    Marker,
)
from postforget_lmeval.scoring._options import Options, options_of
from postforget_lmeval.scoring._reading import EDGE, HEDGE, MAX_PAYLOAD, clean
from postforget_lmeval.scoring.formats import AnswerFormat, get_format

Status = Literal["answered", "invalid", "no_answer", "unfinished"]

EXTRACTOR_NAME = "postforget-strict"
EXTRACTOR_VERSION = 4
"""Logged in every postforget record; bumped whenever a rule change can change an extracted answer."""


@dataclass(frozen=True)
class Extraction:
    """What was read from one generation; ``answer`` is None for no_answer/unfinished."""

    answer: str | None
    status: Status

    def correct(self, gold: str) -> int:
        """1 when an answer was read and it is the gold answer (for ``letters``, the whole set), else 0."""
        return int(self.status == "answered" and self.answer == gold)


_NO_ANSWER = Extraction(None, "no_answer")
_UNFINISHED = Extraction(None, "unfinished")

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
_NEXT_QUESTION = re.compile(r"\n(?:Question|Q)(?:[ \t]*\d+)?[ \t]*:|\n(?:Example|Problem)[ \t]*\d+[ \t]*[:.]")
_EXEMPLAR_REASONING = re.compile(r"\n(?:Reasoning|A):")
# After a blank line, a question (its line ends with "?") followed by options and an answer of its own: a base
# model's invented next question without a "Question:" heading. Cut there only when the text before it holds
# an answer.
_INVENTED_BLOCK = re.compile(
    r"\n[ \t]*\n(?=[^\n]{1,300}\?[ \t]*\n(?:[^\n]*\n){0,6}?[ \t]*(?:Options:|\([A-Z]\)[ \t])[^\0]{0,600}?answer\b)",
    re.I,
)
# What may precede a marker on its line for the answer to sit on the next line.
_LINE_LEAD = re.compile(r"[ \t>#*_\-]*(?:(?:the|my|final|correct|so|thus|therefore)[ \t,*_]+)*", re.I)
_BRACED = re.compile(r"((?:[^{}\n]|\{[^{}\n]*\})*)\}")
# Where a sentence ends (and, for an option's text ending a statement, a clause): what follows is not read.
_STOP = re.compile(r"[.!?](?=\s|$)|\n")
_SPACE = re.compile(r"\s*")
_SENTENCE_END = re.compile(r"[.!?;](?=\s|$)|\n")
# The statement's own answer rejected later in its sentence: "..., but this is not the correct answer".
_REJECTION = re.compile(
    r"\b(?:but|however|though|although|yet)\b[ \t,]*(?:this|that|it)[ \t]+(?:(?:option|choice|answer)[ \t]+)?"
    r"(?:is|was|would[ \t]+be)[ \t]+(?:not|n't)[ \t]+(?:the[ \t]+)?(?:correct|right|exact|true|accurate|valid)"
    r"|\b(?:but|however|though|although|yet)\b[ \t,]*(?:this|that|it)[ \t]+(?:is|was)[ \t]+(?:wrong|incorrect)",
    re.I,
)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _lower(text: str) -> str:
    """Lowercase with positions preserved (str.lower lengthens a few characters such as "İ")."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


@dataclass(frozen=True)
class _Item:
    """One item's options and the format its answer is read in."""

    options: Options
    format: AnswerFormat

    def verdict(self, answer: str) -> Extraction:
        """Answered when the answer is one of the item's options, else invalid."""
        return Extraction(answer, "answered" if self.format.parser.valid(answer, self.options) else "invalid")


def _item(options: Sequence[str], answer_format: str) -> _Item:
    return _Item(options_of(options), get_format(answer_format))


def _parse(payload: str, item: _Item) -> Extraction | None:
    """The answer in the text that follows a marker, or None when it holds none."""
    payload = payload[:MAX_PAYLOAD]
    text = clean(payload)
    if not text:
        return None
    answer = item.format.parser.read(text, item.options)
    if item.format.lettered:
        # An option's text, also in LaTeX ("$\\frac{1}{2}$", which cleaning has stripped of "\\"), or a
        # sentence that ends with one ("the one with a fish.").
        answer = answer or item.options.letter_of(text) or item.options.letter_of(payload)
        answer = answer or item.options.letter_ending(_SENTENCE_END.split(text, 1)[0])
    if answer == HEDGE:
        return _NO_ANSWER
    return item.verdict(answer) if answer else None


_Stated = tuple[Extraction, int]
"""What a statement of rules 1 and 2 gave, and where its answer starts."""


def _first(stated: _Stated | None) -> Extraction | None:
    return stated[0] if stated else None


def _sentence_end(text: str, start: int) -> int:
    """Where the sentence that begins at ``start`` (after any blank space) ends."""
    stop = _STOP.search(text, _SPACE.match(text, start).end())
    return stop.end() if stop else len(text)


def _line_end(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end < 0 else end


def _payload(text: str, start: int, next_line: bool) -> str:
    """The rest of the line from start; with next_line, the next non-blank line if that is empty."""
    end = _line_end(text, start)
    line = text[start : min(end, start + MAX_PAYLOAD)]
    if not next_line or line.strip(EDGE + "#"):
        return line
    for _ in range(_MAX_SKIPPED_LINES):
        if end >= len(text):
            break
        start, end = end + 1, _line_end(text, end + 1)
        line = text[start : min(end, start + MAX_PAYLOAD)]
        if line.strip() and not line.lstrip().startswith("```"):
            return line
    return ""


def _starts_line(text: str, start: int) -> bool:
    """Whether only markdown and words like "Final" precede start on its line."""
    line_start = text.rfind("\n", 0, start) + 1
    return start - line_start <= 40 and _LINE_LEAD.fullmatch(text, line_start, start) is not None


def _braced(text: str, start: int) -> str:
    """Content of the brace group opened just before start (one level of nesting, one line)."""
    match = _BRACED.match(text, start, start + MAX_PAYLOAD)
    return match.group(1) if match else ""


_LOOKBACK = 40  # characters before a marker that its required preceding word is looked for in


def _backwards(low: str, patterns: tuple[Marker, ...]) -> Iterator[re.Match[str]]:
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


def _explicit(text: str, low: str, item: _Item, line_start_only: bool = False) -> _Stated | None:
    """Rule 1: the last explicit marker that holds an answer, and where its answer starts."""
    for match in _backwards(low, MARKS):
        start, end = match.span()
        if match.re is BOXED:
            payload = _braced(text, end)
        elif ECHOED.search(low, max(0, start - _LOOKBACK), start):
            continue  # the prompt's format instruction echoed, not an answer
        else:
            at_line_start = _starts_line(text, start)
            if line_start_only and not at_line_start:
                continue
            if not match.group("sep") and not (
                at_line_start and not text[end : _line_end(text, end)].strip(EDGE + "#")
            ):
                if not BRACKETED_ONLY.match(text, end, _line_end(text, end)):
                    continue  # "answer" in running text, not a header
            payload = _payload(text, end, at_line_start)
        # "Answer: the correct option is B" states its answer in prose.
        found = _parse(payload, item) or _first(_prose(payload, _lower(payload), item))
        if found:
            return (_NO_ANSWER if _withdrawn(text, end) else found), end
    return None


def _withdrawn(text: str, start: int) -> bool:
    """Whether the sentence that states an answer at ``start`` goes on to reject it ("the closest option is
    (J), but this is not the correct answer")."""
    sentence = _STOP.split(text[start : start + MAX_PAYLOAD], 1)[0]
    return _REJECTION.search(sentence) is not None


def _verdict(text: str, start: int, item: _Item) -> Extraction | None:
    """The letter that "is the correct answer" (or that something "makes the correct answer")."""
    subject = VERDICT_SUBJECT.search(text, max(0, start - _LOOKBACK), start)
    if not subject:
        return None
    return item.verdict((subject.group(1) or subject.group(2)).strip("()[] \t"))


def _prose(text: str, low: str, item: _Item) -> _Stated | None:
    """Rule 2: the last prose statement of the answer, among the statements the format reads, and where its
    answer starts."""
    for match in _backwards(low, item.format.parser.prose):
        if match.re is VERDICT:
            found = _verdict(text, match.start(), item)
        elif match.re is INTRO:
            # Only an answer that stands alone on the next line: "C. <option C's text>", "(C)".
            line = _payload(text, match.end(), True)
            found = None if _lists_options(text, line, match.end()) else _bare(line, item, first=True)
        else:
            # A count ("there are 7") is read on its own line only; a statement may introduce the
            # answer on the next line ("The correct answer is:").
            found = _parse(_payload(text, match.end(), match.re in STATEMENT_PATTERNS), item)
        if found:
            return (_NO_ANSWER if _withdrawn(text, match.end()) else found), match.end()
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
    text = clean(line.lstrip(" \t#")).rstrip(".!")
    if not text:
        return None
    answer = item.format.parser.bare(text, item.options, first)
    return item.verdict(answer) if answer else None


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
    rest = text[at + len(line) : at + len(line) + MAX_PAYLOAD].lstrip(" \t\r\n")
    return _OPTION_LABEL.match(rest) is not None


def _from_text(text: str, item: _Item) -> Extraction | None:
    """Rules 1-3 on visible text, then the format's own rules (4 and 5 for one-letter items)."""
    if item.format.lettered:
        end = len(text.rstrip())
        final = _FINAL_LINE.fullmatch(text, text.rfind("\n", 0, end) + 1, end)
        if final:
            return item.verdict(final.group(1).upper())
    low = _lower(text)
    stated = _explicit(text, low, item) or _prose(text, low, item)
    if stated:
        found, at = stated
        if found is _NO_ANSWER and (later := _from_text(text[_sentence_end(text, at) :], item)):
            return later if later.answer else found
        return found
    last_line, first_line = _edge_line(text, last=True), _edge_line(text, last=False)
    found = _bare(last_line, item, first=False) or (
        None if _lists_options(text, first_line, 0) else _bare(first_line, item, first=True)
    )
    if found:
        return found
    for rule in item.format.parser.fallbacks:
        answer = rule(text, last_line, item.options)
        if answer:
            return item.verdict(answer)
    return None


def _from_reply(reply: str, item: _Item) -> Extraction | None:
    """Rules 1-5 on the visible reply, without an invented next question (rule 0)."""
    question = _NEXT_QUESTION.search(reply)
    if question and reply[: question.start()].strip():
        found = _from_text(reply[: question.start()], item)
        if found or _EXEMPLAR_REASONING.search(reply, question.start() + 2):
            return found
    block = _INVENTED_BLOCK.search(reply)
    cuts = [block.start()] if block and reply[: block.start()].strip() else []
    for cut in [*cuts, *invented_question(reply, item.options)]:
        found = _from_text(reply[:cut], item)
        if found:
            return found
    return _from_text(reply, item)


def _final_line(thinking: str, item: _Item) -> Extraction | None:
    """The thinking's last line, when it is an explicit answer opening the line (or a box).

    A thought cut off mid-sentence ("... so the answer is B? Wait") is not taken for an answer.
    """
    line = _edge_line(thinking[-4 * MAX_PAYLOAD :], last=True)
    return _first(_explicit(line, _lower(line), item, line_start_only=True))


def extract_answer(response: str, options: Sequence[str], answer_format: str = "letter") -> Extraction:
    """Read the answer a generation gives to a multiple-choice or counting item.

    ``options`` are the option texts in order (letter i is ``LETTERS[i]``); for
    ``answer_format="number"`` they are the valid answers as number strings. Whatever the response,
    this never raises; an ``answer_format`` that names no format of ``formats.FORMATS`` is a ValueError.
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
