"""``--chance-k paper``: the k of the paper's analysis code, every BBH value pinned and checked against the notes on
that code and the method's specification beside the checkout."""

from __future__ import annotations

import re

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
SPEC = paths.ROOT.parent / "shared" / "SPEC.md"
FINDINGS = paths.REFERENCE / "paper" / "FINDINGS.md"


def test_every_bbh_k_is_the_papers() -> None:
    assert chance_k.BBH_K == PAPER_BBH_K
    for name, k in PAPER_BBH_K.items():
        assert chance_k.official_k(f"bbh_{name}") == float(k)


def _expand(text: str) -> list[tuple[str, int]]:
    """``name 2`` and ``name_three/five/seven_objects 3/5/7`` entries of a comma-separated list."""
    out = []
    for name, ks in re.findall(r"([A-Za-z_/]+) (\d+(?:/\d+)*)", text):
        values = [int(k) for k in ks.split("/")]
        if len(values) == 1:
            out.append((name, values[0]))
            continue
        head, _, tail = name.partition("three/five/seven")
        out += [(f"{head}{n}{tail}", k) for n, k in zip(("three", "five", "seven"), values)]
    return out


@pytest.mark.skipif(not SPEC.is_file(), reason="the method's specification is not beside the checkout")
def test_the_table_is_the_specifications() -> None:
    text = " ".join(SPEC.read_text(encoding="utf-8").split())
    listed = text.split("BBH k (options per task, from the reference analysis code): ")[1].split(". Where")[0]
    listed = re.sub(r"\([^)]*\)", "", listed)  # object_counting's note on its answers
    assert dict(_expand(listed)) == PAPER_BBH_K


@pytest.mark.skipif(not FINDINGS.is_file(), reason="the notes on the paper's code are not beside the checkout")
def test_the_table_is_the_papers_code() -> None:
    """The notes abbreviate the names (``bool 2``, ``LD 3/5/7``) in the same order: the values, in that order."""
    text = FINDINGS.read_text(encoding="utf-8")
    listed = text.split("`num_choices_map` for BBH only (")[1].split("; dyck")[0]
    values = [int(k) for entry in listed.split(", ") for k in entry.rsplit(" ", 1)[1].split("/")]
    assert values == list(PAPER_BBH_K.values())
