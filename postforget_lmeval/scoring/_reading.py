"""Reading one answer where extraction expects it: option letters, one or several.

Shared by the letter formats (``formats/letter.py`` and ``formats/letters.py``); the rules that
decide where an answer is expected are in ``extraction.py``.
"""

from __future__ import annotations

import re

from postforget_lmeval.scoring._options import LETTERS, Options, normalise

HEDGE = "?"
"""What a reader returns for a hedge ("(A) or (D)", "7 or 8"): the statement was made and names no
single answer, so the search stops there instead of falling back to earlier, tentative ones."""

MAX_PAYLOAD = 200
"""A payload is one line, capped: the work per marker is bounded whatever the response length."""

EDGE = " \t\r*_`$\"'“”‘’:：\\"
"""Markdown, LaTeX math, straight and curly quotes, colons: stripped around an answer."""

_LATEX_WRAP = re.compile(r"\\(?:boxed|text|textbf|textrm|mathrm|mathbf|fbox)[ \t]*\{([^{}]*)\}")
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
# A second option offered with its label after the first one's text: "B) a dog or C) a bird", "(A) x or (D) y".
_OR_LABELLED = re.compile(
    r"(?P<between>[^\n]{0,200}?)[ \t,]+(?:\bor\b|或)[ \t]+(?:either[ \t]+)?"
    r"(?:\([ \t]*[A-Z][ \t]*\)|\[[ \t]*[A-Z][ \t]*\]|[A-Z][).:](?=[ \t]))"
)
_CONNECTIVES = frozenset({"because", "since", "as", "is", "are", "was", "were", "seems", "would", "should"})


def clean(payload: str) -> str:
    """Strip markdown, quotes, LaTeX wrappers and an "option"/"choice" prefix around an answer."""
    text = payload[:MAX_PAYLOAD]
    for _ in range(3 if "\\" in text else 0):  # nested wrappers such as \boxed{\text{C}}
        text, replaced = _LATEX_WRAP.subn(r"\1", text)
        if not replaced:
            break
    text = text.strip(EDGE)
    prefix = _OPTION_WORD.match(text)
    return text[prefix.end() :].strip(EDGE) if prefix else text


def _continuation_ok(rest: str, letter: str, options: Options) -> bool:
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
    option = options.text_of.get(letter, "")
    if option and (normalise(rest[: 2 * len(option) + 10]) + " ").startswith(option + " "):
        return True
    return rest.split(None, 1)[0].lower().strip(".,;:") in _CONNECTIVES


def letter_list(text: str, options: Options) -> str | None:
    """Sorted unique letters at the start of text ("A, C", "A and C", "AC", "(a) (c)")."""
    match = _LETTER_LIST.match(text)
    if not match:
        return None
    if _OR_LETTER.match(text, match.end()):
        return HEDGE
    tokens = _TOKEN_RE.findall(_AND.sub(" ", match.group()))
    plain = [token for token in tokens if token.isalpha()]
    if any(len(token) > 1 and list(token) != sorted(set(token)) for token in plain):
        return None  # a capitalised word ("NONE", "LETTERS"), not letters written together
    if len({token.isupper() for token in plain}) > 1:
        return None  # "B w": a letter followed by the start of some word
    last = tokens[-1]
    # Three letters or more are a list whatever follows ("A, B, C, D all fit"); after one or two, the words that
    # follow tell a letter from a pronoun or an article ("A, I think").
    if len(tokens) < 3 and last[0] not in "([" and not _continuation_ok(text[match.end() :], last[-1], options):
        return None
    return "".join(sorted({ch.upper() for token in tokens for ch in token if ch.isalpha()}))


def one_letter(text: str, options: Options) -> str | None:
    """One letter at the start of text; several letters are a hedge, not an answer."""
    match = _LETTER.match(text)
    if not match:
        return None
    bracketed = match.group(1) or match.group(2)
    letter = bracketed or match.group(3)
    if (bracketed or letter.isupper()) and _OR_LETTER.match(text, match.end()):
        return HEDGE
    labelled = _OR_LABELLED.match(text, match.end()) if bracketed or letter.isupper() else None
    if labelled and normalise(labelled.group("between")) in ("", options.text_of.get(letter.upper())):
        return HEDGE
    if not bracketed and not _continuation_ok(text[match.end() :], letter, options):
        return None
    listed = letter_list(text, options)
    return HEDGE if listed == HEDGE or (listed and len(listed) > 1) else letter.upper()


def bare_letters(text: str, options: Options, first: bool, several: bool) -> str | None:
    """A line that is nothing but letters (one, unless ``several``); on the first line also a letter
    followed by exactly that option's text (``C) Paris``)."""
    if _LETTER_LIST.fullmatch(text):
        letters = letter_list(text, options)
        return letters if letters and (several or len(letters) == 1) else None
    match = _LETTER.match(text) if first else None
    if not match or (match.group(3) and text[match.end() : match.end() + 1] not in (")", ".", ":")):
        return None
    letter = (match.group(1) or match.group(2) or match.group(3)).upper()
    rest = normalise(text[match.end() :])
    return letter if rest and rest == options.text_of.get(letter) else None


def letters_valid(answer: str, options: Options) -> bool:
    """Every letter of the answer names one of the item's options."""
    return all(0 <= LETTERS.find(ch) < options.n_letters for ch in answer)
