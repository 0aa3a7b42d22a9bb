"""Rescoring a logged response under a named extraction policy.

Pairing normally trusts the 0/1 each run logged. Rescoring re-reads every logged response with the
current code instead, so that a better extractor applies to old runs without a GPU, and so that the
same runs can be scored the way the paper scored them, to see how much of a forgetting figure is
extraction policy rather than the model:

* ``strict``: this package's extractor (:func:`postforget_lmeval.scoring.extract_answer`);
  correct iff the answer is ``answered`` and equals the gold (the whole letter set for
  ``letters`` items), as the tasks score when they run.
* ``lighteval``: the rules of LightEval 0.10's extractive match with native letters, which
  produced the paper's figures (``_lighteval.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from postforget_lmeval.scoring import _lighteval as lighteval_match
from postforget_lmeval.scoring.extraction import EXTRACTOR_VERSION, extract_answer

POLICIES = ("strict", "lighteval")


@dataclass(frozen=True)
class Rescored:
    """One response read under one policy; ``correct`` is 0 whenever no answer was read."""

    answer: str | None
    status: str
    correct: int


def scorer_name(policy: str) -> str:
    """What the figures say scored them, e.g. ``strict/2`` or ``lighteval-0.10/1``."""
    if policy == "strict":
        return f"strict/{EXTRACTOR_VERSION}"
    if policy == "lighteval":
        return f"{lighteval_match.MATCHER_NAME}/{lighteval_match.MATCHER_VERSION}"
    raise ValueError(f"unknown rescoring policy {policy!r}; choose one of {', '.join(POLICIES)}")


def rescore(response: str, options: Sequence[str], gold: str, answer_format: str, policy: str) -> Rescored:
    """Score one logged response against the logged doc's options, gold and answer format."""
    if policy == "strict":
        found = extract_answer(response, options, answer_format)
        return Rescored(found.answer, found.status, found.correct(gold))
    if policy == "lighteval":
        return Rescored(*lighteval_match.score(response, options, gold, answer_format))
    raise ValueError(f"unknown rescoring policy {policy!r}; choose one of {', '.join(POLICIES)}")


__all__ = ["POLICIES", "Rescored", "rescore", "scorer_name"]
