"""``letter``: one option letter (``Answer: B``), the format of most multiple-choice items.

Besides the rules every format shares, a one-letter answer is also read from a closing statement
(rule 4) and from a reply that is exactly one option's text or one sentence ending with it (rule 5).
"""

from __future__ import annotations

import re
from functools import partial

from postforget_lmeval.scoring._markers import INTROS, STATEMENTS, VERDICTS
from postforget_lmeval.scoring._options import LETTERS, Options, opens
from postforget_lmeval.scoring._reading import bare_letters, letters_valid, one_letter
from postforget_lmeval.scoring.formats._format import AnswerFormat, LightEvalRule, Parser, as_written, one_of

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
# Where a reply goes on past its first sentence (or asks): a one-sentence reply has none before its end.
_SENTENCE_BREAK = re.compile(r"[.!;](?=\s|$)|[\n?]")
_HEDGE_WORDS = 2  # words before the verb that can hedge it ("might be", "whether it is")
_MAX_CLOSING = 300  # characters of the last line that the closing rule reads
_MAX_VERDICT = 80  # characters of it that a closing letter or verdict can take


def closing_statement(text: str, last_line: str, options: Options) -> str | None:
    """Rule 4: the last line ends by saying what something "is": a bracketed letter or an option's text."""
    line = last_line[-_MAX_CLOSING:].rstrip()
    # Both patterns end the line and are short: only its last characters can hold a match.
    tail = max(0, len(line) - _MAX_VERDICT)
    match = _CLOSING_LETTER.search(line, tail) or _CLOSING_VERDICT.search(line, tail)
    if match:
        if match.group("u"):  # a bare capital is a letter only when it is an option ("is K." is not)
            return match.group("u") if LETTERS.find(match.group("u")) < options.n_letters else None
        return (match.group("b") or match.group("s")).upper()
    sentence = line[max(line.rfind(". "), line.rfind("? "), line.rfind("! ")) + 1 :]
    reach = 2 * options.longest + 20  # a longer tail is no option's text
    for verb in reversed(list(_CLOSING_VERB.finditer(sentence, max(0, len(sentence) - reach - 5)))):
        tail = sentence[verb.end() :]
        if len(tail) > reach:
            break
        letter = options.letter_of(tail)
        if letter:
            # "It might be a fish.", "not sure whether it is a dog": the words just before the verb hedge it
            return None if opens(" ".join(sentence[: verb.start()].split()[-_HEDGE_WORDS:])) else letter
    return None


def whole_option(text: str, last_line: str, options: Options) -> str | None:
    """Rule 5: the whole reply is the text of exactly one option, or one sentence that ends with it ("The sound
    was made by a dog."), unless it negates or hedges or names another option first (``Options.letter_ending``)."""
    if len(text) <= 2 * options.longest + 20 and (letter := options.letter_of(text)):
        return letter
    sentence = text.strip().rstrip(".!")
    if len(sentence) > _MAX_CLOSING or _SENTENCE_BREAK.search(sentence):
        return None
    return options.letter_ending(sentence)


LETTER_FORMAT = AnswerFormat(
    name="letter",
    instruction=(
        'On the very last line, write exactly "Answer: $LETTER" (e.g. "Answer: B"), with no extra '
        "punctuation, no lowercase, no *, and no trailing spaces."
    ),
    lettered=True,
    chance_k=one_of,
    parser=Parser(
        read=one_letter,
        bare=partial(bare_letters, several=False),
        valid=letters_valid,
        prose=(*STATEMENTS, *VERDICTS, *INTROS),
        fallbacks=(closing_statement, whole_option),
    ),
    lighteval=LightEvalRule(gold_letters=as_written, answer=as_written),
)
