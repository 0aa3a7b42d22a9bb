"""``--chance-k paper``: the k of the paper's analysis code, every BBH value pinned and checked against the notes on
that code read point by point (the reference material beside the checkout)."""

from __future__ import annotations

import pytest

from postforget_lmeval.pairing import chance_k
from tests.helpers import paths

PAPER_BBH_K = {
    "boolean_expressions": 2, "causal_judgement": 2, "date_understanding": 6, "disambiguation_qa": 3,
    "formal_fallacies": 2, "geometric_shapes": 11, "hyperbaton": 2, "logical_deduction_three_objects": 3,
    "logical_deduction_five_objects": 5, "logical_deduction_seven_objects": 7, "movie_recommendation": 6,
    "navigate": 2, "object_counting": 19, "penguins_in_a_table": 5, "reasoning_about_colored_objects": 18,
    "ruin_names": 6, "salient_translation_error_detection": 6, "snarks": 2, "sports_understanding": 2,
    "temporal_sequences": 4, "tracking_shuffled_objects_three_objects": 3, "tracking_shuffled_objects_five_objects": 5,
    "tracking_shuffled_objects_seven_objects": 7, "web_of_lies": 2,
}  # fmt: skip
FINDINGS = paths.REFERENCE / "paper" / "FINDINGS.md"


def test_every_bbh_k_is_the_papers() -> None:
    assert chance_k.BBH_K == PAPER_BBH_K
    for name, k in PAPER_BBH_K.items():
        assert chance_k.official_k(f"bbh_{name}") == float(k)


@pytest.mark.skipif(not FINDINGS.is_file(), reason="the notes on the paper's code are not beside the checkout")
def test_the_table_is_the_papers_code() -> None:
    """The notes abbreviate the names (``bool 2``, ``LD 3/5/7``) in the same order: the values, in that order."""
    text = FINDINGS.read_text(encoding="utf-8")
    listed = text.split("`num_choices_map` for BBH only (")[1].split("; dyck")[0]
    values = [int(k) for entry in listed.split(", ") for k in entry.rsplit(" ", 1)[1].split("/")]
    assert values == list(PAPER_BBH_K.values())
