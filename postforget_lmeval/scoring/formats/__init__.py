"""Answer formats, one object each (one module each): what the prompt asks for, the chance level,
how extraction reads the answer and how LightEval's letter scorer applies.

Adding a format: a module here that builds one :class:`AnswerFormat`, its entry in :data:`FORMATS`,
its test in ``tests/scoring/formats/``, and rows of real-looking replies in the extraction corpus
(``tests/data/generations.jsonl``); bump ``EXTRACTOR_VERSION`` when an extracted answer can change.
"""

from __future__ import annotations

from postforget_lmeval.scoring.formats._format import AnswerFormat, LightEvalRule, Parser
from postforget_lmeval.scoring.formats.letter import LETTER_FORMAT
from postforget_lmeval.scoring.formats.letters import LETTERS_FORMAT
from postforget_lmeval.scoring.formats.number import NUMBER_FORMAT

FORMATS: dict[str, AnswerFormat] = {f.name: f for f in (LETTER_FORMAT, LETTERS_FORMAT, NUMBER_FORMAT)}
"""Every answer format by name (the name a doc logs as ``pf_format``)."""


def get_format(name: str) -> AnswerFormat:
    """The answer format called ``name``; a ValueError names an unknown one and lists the known."""
    try:
        return FORMATS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown answer format {name!r}: the known formats are {', '.join(FORMATS)}") from None


__all__ = ["FORMATS", "AnswerFormat", "LightEvalRule", "Parser", "get_format"]
