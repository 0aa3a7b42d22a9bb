"""Telling a refusal from other replies without an answer, by a fixed and documented rule.

Rule: a reply is a refusal when (1) no answer was extracted from it (the caller only asks about
``no_answer`` replies: an answered item is never a refusal, however it is worded) and (2) the first or
the last sentence of its visible text contains one of :data:`PHRASES`. Visible text is what follows the
last ``</think>``; a reasoning trace is not read, since models argue with themselves there ("I can't
be sure ...") without refusing. Only the first and last sentences are read because a refusal opens or
closes a reply, while the same words in the middle of a worked solution ("we cannot assume ...") are
reasoning. Sentences end at ``.``, ``!``, ``?`` followed by a space, or at a line break.

What the rule misses: refusals worded without any listed phrase, refusals in other languages, and a
refusal sentence placed in the middle of a long reply; it also calls a reply a refusal when its first or
last sentence says e.g. "I cannot determine the answer" (a declined answer, which is what the category
is for). The phrases are matched case-insensitively, with straight or curly apostrophes.
"""

from __future__ import annotations

import re

PHRASES: tuple[str, ...] = (
    r"i can(?:no|')t (?:help|assist|answer|provide|comply|fulfil|fulfill|respond|do that|engage|support"
    r"|determine|choose|select|give)",
    r"i can not (?:help|assist|answer|provide|comply)",
    r"i(?: am|'m) (?:not able|unable) to (?:help|assist|answer|provide|comply|fulfil|fulfill|respond|engage|support)",
    r"i (?:won't|will not|must decline|have to decline|decline|refuse) to",
    r"i must (?:decline|refuse)",
    r"i(?: am|'m) sorry,? but i (?:can(?:no|')t|won't|will not|am unable|'m unable|am not able|'m not able)",
    r"(?:sorry|apologi[sz]e),? (?:but )?i (?:can(?:no|')t|won't|will not|am not able|'m not able|am unable|'m unable)",
    r"as an ai(?: language model| assistant)?,? i (?:can(?:no|')t|won't|will not|do not|don't|am not able|'m not able)",
    r"(?:it )?(?:is|would be) (?:not appropriate|inappropriate) (?:for me )?to",
    r"i(?: am|'m) not (?:comfortable|going to) (?:answering|answer|provid|help|assist)",
    r"against my (?:guidelines|policy|policies|principles)",
)
"""Refusal phrases (regular expressions, matched after lower-casing and straightening apostrophes)."""

CUES: tuple[str, ...] = (
    "i can", "i am ", "i'm ", "i won't", "i will not", "i must", "i have to", "i decline", "i refuse", "sorry",
    "apologi", "as an ai", "appropriate", "against my",
)  # fmt: skip
"""Words every match of :data:`PHRASES` contains (a test checks it): a sentence with none of them is not
searched with the phrases, which is slow on the long unpunctuated traces of replies without an answer."""

_PATTERN = re.compile("|".join(f"(?:{p})" for p in PHRASES))
_SENTENCE_END = re.compile(r"[.!?]\s+|\n+")
"""Where a sentence ends: its closing punctuation (kept with the sentence) and the space after, or new lines."""
_THINK_END = "</think>"
_TAIL = 400  # characters of a reply's end searched first for its last sentence


def visible_text(reply: str) -> str:
    """The part of a reply a user would read: after the last ``</think>``, stripped."""
    return reply.rsplit(_THINK_END, 1)[-1].strip()


def edge_sentences(text: str) -> list[str]:
    """The first and the last non-empty sentence of ``text`` (one sentence if there is only one).

    The last sentence starts after the last sentence end; that end is looked for in the text's tail
    first, a longer tail only where a shorter one holds none, since a long reasoning trace is not read.
    """
    text = text.strip()
    first = _SENTENCE_END.search(text)
    if first is None:
        return [text] if text else []
    last, tail = first.end(), _TAIL
    while True:
        start = max(first.end(), len(text) - tail)
        for match in _SENTENCE_END.finditer(text, start):
            last = match.end()
        if last > first.end() or start == first.end():
            closing = text[first.start()] in ".!?"  # the first sentence keeps its full stop
            return [text[: first.start() + closing].strip(), text[last:].strip()]
        tail *= 4


def is_refusal(reply: str) -> bool:
    """Whether a reply *without an extracted answer* refuses, by the module's rule."""
    for sentence in edge_sentences(visible_text(reply)):
        text = sentence.lower().replace("\u2019", "'").replace("\u2018", "'")
        if any(cue in text for cue in CUES) and _PATTERN.search(text):
            return True
    return False
