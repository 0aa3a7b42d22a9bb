"""LightEval 0.10's extractive match for native letters, as the paper scored its runs.

The paper's released evaluation code (Harmon et al., 2026; ``lighteval==0.10.0``) scored every
generation with LightEval 0.10.0's ``multilingual_extractive_match_metric`` (English,
``IndicesExtractionConfig("NativeLetters")`` for gold and prediction, default
``fallback_mode="first_match"`` and ``extraction_mode="any_match"``, and 0.10's
``try_extract_without_anchor=True``). This module states those rules in our own code so
that logged runs can be rescored the paper's way and compared with the strict extractor.

With ``X`` one of the first k capital letters (k = number of options), written ``X`` or ``(X)``,
and *suffix* = optional ``**`` then ``.``, ``,``, ``:``, a space or the end of the text, the
patterns are tried by priority; within a priority every non-overlapping match is found left to
right and the one that ends right-most wins:

====  ==========================================================================================
  0   ``final answer is`` (any case), optional ``:``, whitespace, ``X``, optional ``.``, optional
      whitespace, ``I hope``
 50   ``final answer`` (any case), up to 100 characters, whitespace, ``is``, optional ``:``,
      whitespace, ``X`` (no suffix needed)
100   ``answer:`` (any case), up to 50 characters of the same line, then a space or the start of
      the text, optional ``**``, ``X``, suffix
150   the same without the colon
200   ``X`` at the start of the text (optional ``**`` before it), suffix
210   a newline, optional ``**``, ``X``, suffix
250   a space (or the start of the text), optional ``**``, ``X``, suffix
300   ``X`` anywhere, even inside a word ("Done" gives D)
====  ==========================================================================================

Nothing else: no ``<think>`` handling (0.10 scores the whole text), no option texts, no numbers,
no lowercase letters, no "invalid". A newline right after the letter fails the suffix unless it
is the last character. Correct iff the letter is any of the gold letters (so a SaladBench item
with gold ``AC`` is correct for ``A`` alone).

How a format's gold answer and an extracted letter compare is the format's ``lighteval`` rule
(``formats/``): letters as written, except ``number`` items (BBH object_counting), whose count n is
the paper's letter n-1.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from postforget_lmeval.scoring._options import LETTERS
from postforget_lmeval.scoring.formats import get_format

MATCHER_NAME = "lighteval-0.10"
MATCHER_VERSION = 1
"""Bumped whenever a change here can change a score."""


def _spaced(k: int, start: str = "(?:^| )") -> str:
    allowed = LETTERS[:k]
    return rf"{start}(?:\*\*)?(?P<letter>[{allowed}]|\([{allowed}]\))(?:\*\*)?(?:[.,: ]|$)"


@lru_cache(maxsize=32)
def _patterns(k: int) -> tuple[re.Pattern[str], ...]:
    """The priority groups 0-250, highest priority first, for items with k options."""
    allowed = LETTERS[:k]
    index = rf"(?P<letter>[{allowed}]|\([{allowed}]\))"
    suffix = r"(?:\*\*)?(?:[.,: ]|$)"
    spaced = _spaced(k)
    groups = (
        rf"(?i:final answer is):?\s*{index}\.?\s?I hope",
        rf"(?i:final answer.{{0,100}}?)\s+is:?\s*{index}",
        rf"(?i:answer):.{{0,50}}?{spaced}",
        rf"(?i:answer).{{0,50}}?{spaced}",
        rf"^(?:\*\*)?{index}{suffix}",
        rf"\n(?:\*\*)?{index}{suffix}",
        spaced,
    )  # priority 300, "X anywhere", is read without a regex (see extract_letter)
    return tuple(re.compile(pattern) for pattern in groups)


@lru_cache(maxsize=32)
def _after_start(k: int) -> re.Pattern[str]:
    """Priority 250 past the start of the text, where only its space branch can match: a pattern that
    begins with a literal, which the regex engine scans for much faster than for an alternation."""
    return re.compile(_spaced(k, " "))


# Where a match of each priority group can start: at an occurrence of this (lowercase) text, at the
# start of the text only (200), at the start or a space (250), or anywhere (None: finditer, whose
# scan for a pattern's leading literal is fast). Trying the pattern only there, left to right and
# after the previous match's end, finds exactly finditer's matches without a regex scan of the text.
_STARTS = ("final answer", "final answer", "answer", "answer", "", "\n", " ")


def _last_match(pattern: re.Pattern[str], response: str, low: str | None, start: str, k: int) -> re.Match[str] | None:
    """The last (right-most) of pattern's non-overlapping matches, as finditer would find them."""
    last = None
    if start == "":
        return pattern.match(response)
    if start == " ":
        last = pattern.match(response)
        for last in _after_start(k).finditer(response, last.end() if last else 0):
            pass
        return last
    if start == "\n" or low is None:
        for last in pattern.finditer(response):
            pass
        return last
    at = low.find(start)
    while at >= 0:
        match = pattern.match(response, at)
        if match:
            last = match
        at = low.find(start, max(match.end(), at + 1) if match else at + 1)
    return last


def extract_letter(response: str, k: int) -> str | None:
    """The letter LightEval 0.10 extracts from a response to an item with k options, or None."""
    if not isinstance(response, str) or k <= 0:
        return None
    low = response.lower()
    if len(low) != len(response):  # a few characters lengthen when lowercased: scan with the regexes
        low = None
    k = min(k, len(LETTERS))
    for start, pattern in zip(_STARTS, _patterns(k), strict=True):
        match = _last_match(pattern, response, low, start, k)
        if match is not None:
            return match.group("letter").strip("()")
    # Priority 300, X or (X) anywhere: the right-most match holds the text's last allowed capital.
    last = max(response.rfind(letter) for letter in LETTERS[:k])
    return response[last] if last >= 0 else None


def score(response: str, options: Sequence[str], gold: str, answer_format: str) -> tuple[str | None, str, int]:
    """(answer, status, correct) for one response; status is ``answered`` or ``no_answer``."""
    rule = get_format(answer_format).lighteval
    letter = extract_letter(response, len(options))
    if letter is None:
        return None, "no_answer", 0
    return rule.answer(letter), "answered", int(letter in rule.gold_letters(gold))
