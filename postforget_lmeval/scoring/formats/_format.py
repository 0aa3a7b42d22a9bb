"""What an answer format is: the prompt's wording, chance level, how its answers are read, and how
LightEval's letter scorer applies to it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from postforget_lmeval.scoring._markers import Marker
from postforget_lmeval.scoring._options import Options


@dataclass(frozen=True)
class Parser:
    """How extraction reads this format's answer (the rules are in ``extraction.py``).

    The readers return the answer as it is logged, :data:`~postforget_lmeval.scoring._reading.HEDGE`
    for an answer that declines to choose, or None where the text holds no answer.
    """

    read: Callable[[str, Options], str | None]
    """The answer at the start of the text after a marker or statement (rules 1 and 2)."""
    bare: Callable[[str, Options, bool], str | None]
    """A line that is nothing but the answer (rule 3); the flag says whether it is the first line."""
    valid: Callable[[str, Options], bool]
    """Whether an answer is one of the item's options (``answered``) or not (``invalid``)."""
    prose: tuple[Marker, ...]
    """The prose statements that introduce an answer (rule 2), each a marker of ``_markers.py``."""
    fallbacks: tuple[Callable[[str, str, Options], str | None], ...] = ()
    """Rules tried, in order, when rules 1-3 read nothing: each gets the text and its last line."""


@dataclass(frozen=True)
class LightEvalRule:
    """How an item of this format is scored by LightEval's letter matcher (``_lighteval.py``)."""

    gold_letters: Callable[[str], str]
    """The letters that count as correct for a logged gold answer."""
    answer: Callable[[str], str]
    """The answer an extracted letter stands for, in the terms of the gold answer."""


@dataclass(frozen=True)
class AnswerFormat:
    """One answer format, named in the catalog and logged in every doc as ``pf_format``."""

    name: str
    instruction: str
    """The chat prompt's line that says how to write the answer."""
    lettered: bool
    """Options are shown as ``A) ...`` and an answer names them by letter (or by their text)."""
    chance_k: Callable[[int], float]
    """Equally likely guesses for an item with this many options."""
    parser: Parser
    lighteval: LightEvalRule


def as_written(text: str) -> str:
    """A LightEval rule's mapping where gold answers and extracted letters are letters already."""
    return str(text)


def one_of(n_options: int) -> float:
    """Chance level of an item whose answer is one of its options."""
    return float(n_options)
