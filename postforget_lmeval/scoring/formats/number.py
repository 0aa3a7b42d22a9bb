"""``number``: a count (``Answer: 7``), for BBH object_counting; the prompt lists no options.

An answer is an integer or a number word up to twenty; for an equation, the value after its last
``=``. Besides the shared statements, a count is read from ``there are 7``, ``a total of 7``,
``in total, 7`` (on the statement's own line). The options are the valid answers as number strings;
with no options every integer is valid.
"""

from __future__ import annotations

import re

from postforget_lmeval.scoring._markers import INTROS, STATEMENTS, Marker
from postforget_lmeval.scoring._options import LETTERS, Options, option_letter
from postforget_lmeval.scoring._reading import EDGE, HEDGE
from postforget_lmeval.scoring.formats._format import AnswerFormat, LightEvalRule, Parser, one_of

_COUNT_TAIL = r"(?:[ \t]+(?:there[ \t]+are|(?:i|you|we)[ \t]+have))?(?![a-z])"
COUNTS: tuple[Marker, ...] = (
    (
        "there",
        re.compile(r"there[ \t]+(?:are|is|were)(?:[ \t]+(?:a[ \t]+total[ \t]+of|exactly|only))?(?![a-z])"),
        None,
    ),
    ("total", re.compile(rf"total(?:[ \t]+(?:of|is)|,)?{_COUNT_TAIL}"), None),
    ("altogether", re.compile(rf"altogether,?{_COUNT_TAIL}"), None),
)
"""Statements of a count, read on their own line."""

_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
).split()
# "−" is U+2212 MINUS SIGN, which LaTeX-minded models write.
_NUMBER = re.compile(rf"[-−]?\d+(?:\.\d+)?(?!\d)|(?:{'|'.join(_NUMBER_WORDS)})\b", re.I)
_NUMBER_HEDGE = re.compile(r"[ \t]*(?:or\b|/)", re.I)  # "7 or 8", "7/8"
_BARE_NUMBER = re.compile(rf"[-−]?\d+|{'|'.join(_NUMBER_WORDS)}", re.I)


def canonical_number(text: str) -> str:
    """ "07" and "7.0" -> "7"; other values are kept as written (they can only be invalid)."""
    text = text.replace("−", "-")
    if text.lower() in _NUMBER_WORDS:
        return str(_NUMBER_WORDS.index(text.lower()))
    try:
        value = float(text)
    except ValueError:
        return text
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else text


def read_number(text: str, options: Options) -> str | None:
    """An integer or number word at the start of text, or after the last "=" of an equation."""
    if "=" in text:
        text = text.rsplit("=", 1)[1].strip(EDGE)
    match = _NUMBER.match(text)
    if not match:
        return None
    return HEDGE if _NUMBER_HEDGE.match(text, match.end()) else canonical_number(match.group())


def bare_number(text: str, options: Options, first: bool) -> str | None:
    """A line that is nothing but a number."""
    return canonical_number(text) if _BARE_NUMBER.fullmatch(text) else None


def number_valid(answer: str, options: Options) -> bool:
    """The answer is one of the option numbers, or any integer when the item lists none."""
    numbers = {canonical_number(str(option).strip()) for option in options.options}
    return not numbers or answer in numbers


def count_letter(gold: str) -> str:
    """LightEval: the paper's tasks give the 19 choices A-S for the counts 1-19, so count n is letter
    n-1 (our options are "0".."18", 19 of them, so letters A-S are allowed). A gold of 0 has no
    letter and can never be matched."""
    count = int(gold) if str(gold).strip().isdigit() else 0
    return option_letter(count - 1) if 1 <= count <= len(LETTERS) else ""


def letter_count(letter: str) -> str:
    """LightEval: the count an extracted letter stands for (``G`` -> ``"7"``), to compare with the gold."""
    return str(LETTERS.index(letter) + 1)


NUMBER_FORMAT = AnswerFormat(
    name="number",
    instruction=(
        'On the very last line, write exactly "Answer: $NUMBER" (e.g. "Answer: 7"), with no extra '
        "punctuation, no words, no *, and no trailing spaces."
    ),
    lettered=False,
    chance_k=one_of,
    parser=Parser(
        read=read_number,
        bare=bare_number,
        valid=number_valid,
        prose=(*STATEMENTS, *COUNTS, *INTROS),
    ),
    lighteval=LightEvalRule(gold_letters=count_letter, answer=letter_count),
)
