"""Scoring: reading the answer a generation gives, in the item's answer format; scoring logged
responses again under a named policy; telling refusals apart. Imports nothing from ``tasks``.

- ``formats/``: one :class:`AnswerFormat` per answer format (``letter``, ``letters``, ``number``).
- ``extraction``: the strict extractor's rules, in priority order (:func:`extract_answer`).
- ``rescoring``: the policies ``strict`` and ``lighteval`` (LightEval 0.10's letter matcher, as the
  paper scored; ``_lighteval.py``).
- ``refusal``: the rule that calls a reply without an answer a refusal.
"""

from postforget_lmeval.scoring._lighteval import MATCHER_NAME, MATCHER_VERSION, extract_letter
from postforget_lmeval.scoring._options import LETTERS, option_letter
from postforget_lmeval.scoring.extraction import EXTRACTOR_NAME, EXTRACTOR_VERSION, Extraction, extract_answer
from postforget_lmeval.scoring.formats import FORMATS, AnswerFormat, get_format
from postforget_lmeval.scoring.refusal import CUES, PHRASES, edge_sentences, is_refusal
from postforget_lmeval.scoring.rescoring import POLICIES, Rescored, rescore, scorer_name

__all__ = [
    "CUES",
    "EXTRACTOR_NAME",
    "EXTRACTOR_VERSION",
    "FORMATS",
    "LETTERS",
    "MATCHER_NAME",
    "MATCHER_VERSION",
    "PHRASES",
    "POLICIES",
    "AnswerFormat",
    "Extraction",
    "Rescored",
    "edge_sentences",
    "extract_answer",
    "extract_letter",
    "get_format",
    "is_refusal",
    "option_letter",
    "rescore",
    "scorer_name",
]
