"""Where a base model's invented next question begins when no heading announces it (rule 0 of extraction).

A base model prompted with exemplars often goes on, after its own answer, to write the next exemplar: a new
question with options and an answer of its own (``The odd one out is (G).`` then ``Which of these is a fruit?
(A) apple (B) carrot ... The odd one out is (B).``). Headed by ``Question:`` or ``Q:`` it is found by its heading
(``extraction.py``); without one, by its options: a lettered list, inline (``(A) apple (B) carrot``) or one
option a line (``A) apple``), none of whose entries names one of this item's options. A reply that goes over the
item's own options again names them (``(A) red: no``), so it is read whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from postforget_lmeval.scoring._options import LETTERS, Options, normalise

_LEAD = r"[ \t>*_-]*"  # markdown before a label at the start of a line
_LABEL = r"(?:\((?P<b>[A-Z])\)|(?P<p>[A-Z])[).:])[ \t]+(?=\S)"  # "(B) ", "B) ", "B. ", "B: "
# A list's first entry: "(A) ..." opening a line, or after a question or colon on its line ("... belong: (A) oak").
_FIRST_LABEL = re.compile(rf"^{_LEAD}(?:[^\n]*?[?:][ \t]+)?(?=\(A\)|A[).:]){_LABEL}", re.M)
_LINE_LABEL = re.compile(rf"{_LEAD}{_LABEL}")
_INLINE_LABEL = re.compile(r"[ \t]\((?P<b>[A-Z])\)[ \t]+(?=\S)")  # inline only bracketed: "Plan A. Then" is prose
_MAX_LISTS = 16  # lists looked at, from the start: the first invented question is the one that matters
_QUESTION_LINES = 3  # lines above its options that an invented question's wording may take


def _entries(text: str, first: re.Match[str]) -> list[str]:
    """The texts of the list whose label A is ``first``: the labels that follow in order, on its line or
    opening the next lines."""
    entries, start = [], first.end()
    while len(entries) + 1 < len(LETTERS):
        letter, line_end = LETTERS[len(entries) + 1], text.find("\n", start)
        line_end = len(text) if line_end < 0 else line_end
        inline = _INLINE_LABEL.search(text, start, line_end)
        if inline and inline.group("b") == letter:
            entries.append(text[start : inline.start()])
            start = inline.end()
            continue
        entries.append(text[start:line_end])
        below = _LINE_LABEL.match(text, line_end + 1)
        if not below or (below.group("b") or below.group("p")) != letter:
            break
        start = below.end()
    return entries


def _names_an_option(entry: str, texts: list[str]) -> bool:
    """Whether the entry holds one of the option texts, or is part of one ("fish" of "a fish")."""
    entry = f" {normalise(entry)} "
    return any(f" {text} " in entry or entry in f" {text} " for text in texts)


def _foreign_list(text: str, options: Options) -> int | None:
    """Where the line of the first lettered list that names none of the item's options starts, or None."""
    texts = [text for text in options.text_of.values() if text]
    if not texts:
        return None  # nothing to tell an invented list from the item's own
    for _, first in zip(range(_MAX_LISTS), _FIRST_LABEL.finditer(text), strict=False):
        entries = _entries(text, first)
        if len(entries) >= 2 and not any(_names_an_option(entry, texts) for entry in entries):
            return first.start()
    return None


def invented_question(text: str, options: Options) -> Iterator[int]:
    """Where an invented question listing other options may begin, latest first: at its options' line or at
    one of the few lines above; never just after a line that asks or introduces (``Which is a fruit?``,
    ``Options:``), which belongs to the question. Nothing when the reply lists no such options."""
    at = _foreign_list(text, options)
    for _ in range(_QUESTION_LINES + 1 if at is not None else 0):
        before = text[:at].rstrip()
        if not before:
            return
        if not before.endswith(("?", ":", "：")):
            yield at
        at = before.rfind("\n") + 1
