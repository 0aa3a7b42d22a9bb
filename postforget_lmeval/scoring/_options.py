"""An item's options: their letters, and their texts in the form an answer is compared with."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property, lru_cache

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
"""Option letters in order: the option at index i is ``LETTERS[i]``."""


def option_letter(index: int) -> str:
    """The letter of the option at ``index`` (0 -> ``A``)."""
    if not 0 <= index < len(LETTERS):
        raise IndexError(f"option index {index} has no letter: options are lettered A-Z (indexes 0-25)")
    return LETTERS[index]


_NON_ALNUM = re.compile(r"[^0-9a-z]+")
# Words that make a sentence ending with an option's text no commitment to it ("is not a fish", "could be
# anything from a cat to a fish"); "n't" is normalised to "n t".
_OPEN = frozenset(
    {"not", "t", "no", "never", "nor", "neither", "unclear", "could", "might", "may", "whether", "if", "either", "or",
     "depends", "anything", "unless", "except", "rather", "instead", "than"}
)  # fmt: skip
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_MINUS = re.compile(r"[-–−](?=[ \t]*\d)")  # hyphen, en dash and minus sign before a number


def normalise(text: str) -> str:
    """Case-, punctuation- and LaTeX-insensitive form used to compare with option texts.

    Symbols other than a minus sign are dropped on both sides, so ``[2 \\leq y \\leq 8]`` reads as
    the option ``2 ≤ y ≤ 8`` and not as ``–2 ≤ y ≤ 8``.
    """
    if "\\" in text:
        text = _LATEX_COMMAND.sub(" ", text)
    if "-" in text or "–" in text or "−" in text:
        text = _MINUS.sub(" minus ", text)
    return _NON_ALNUM.sub(" ", text.lower()).strip()


class Options:
    """The item's options in the forms the readers compare against (built on first use)."""

    def __init__(self, options: Sequence[str]) -> None:
        self.options = options
        self.n_letters = min(len(options), len(LETTERS))

    @cached_property
    def text_of(self) -> dict[str, str]:
        return {LETTERS[i]: normalise(str(option)) for i, option in enumerate(self.options[: self.n_letters])}

    @cached_property
    def longest(self) -> int:
        """Characters in the longest option text: a longer reply or tail cannot be one."""
        return max((len(str(option)) for option in self.options[: self.n_letters]), default=0)

    @cached_property
    def by_text(self) -> dict[str, str]:
        """Option text -> letter; only a text that no other option shares identifies a letter."""
        texts = list(self.text_of.values())
        return {t: LETTERS[i] for i, t in enumerate(texts) if t and texts.count(t) == 1}

    def letter_of(self, text: str) -> str | None:
        """The letter of the one option whose text ``text`` is, or None."""
        return self.by_text.get(normalise(text))

    def letter_ending(self, text: str) -> str | None:
        """The letter of the option whose text ``text`` ends with ("... is the one with a fish."), the longest
        where one option's text ends another's; None when the text before it negates or hedges, or names
        another option ("are I (Leucine) and J (Valine)")."""
        norm = normalise(text)
        ends = [t for t in self.by_text if norm == t or norm.endswith(" " + t)]
        if not ends:
            return None
        chosen = max(ends, key=len)
        before = norm[: len(norm) - len(chosen)]
        if opens(before) or any(f" {t} " in f" {before} " for t in self.text_of.values() if t):
            return None
        return self.by_text[chosen]


def opens(text: str) -> bool:
    """Whether the words negate or hedge what follows them ("not", "might", "whether" ...)."""
    return not _OPEN.isdisjoint(normalise(text).split())


@lru_cache(maxsize=4096)
def _cached(options: tuple[str, ...]) -> Options:
    return Options(options)


def options_of(options: Sequence[str]) -> Options:
    """The item's options, shared by the responses to one item (both sides, every seed and replicate).
    Anything but a list or tuple (None, a string) is an item without option texts: the extractor never raises."""
    if not isinstance(options, (list, tuple)):
        options = ()
    try:
        return _cached(tuple(options))
    except TypeError:  # unhashable option values
        return Options(options)
