"""Rescoring a logged response under a named policy (rescoring.rescore / scorer_name)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from postforget_lmeval.scoring import (
    EXTRACTOR_VERSION,
    MATCHER_NAME,
    MATCHER_VERSION,
    POLICIES,
    Rescored,
    extract_answer,
    rescore,
    scorer_name,
)
from postforget_lmeval.tasks.hooks import process_results_chat
from tests.helpers import paths

CAPITALS = ["Paris", "London", "Berlin", "Madrid"]
CORPUS = [
    json.loads(line)
    for line in (paths.DATA / "generations.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]


def test_policies_differ_where_the_paper_scorer_misreads() -> None:
    assert POLICIES == ("strict", "lighteval")
    response = "Answer: C) Berlin"
    assert rescore(response, CAPITALS, "C", "letter", "strict") == Rescored("C", "answered", 1)
    assert rescore(response, CAPITALS, "C", "letter", "lighteval") == Rescored("B", "answered", 0)
    # strict keeps its statuses; lighteval has only answered / no_answer
    assert rescore("Answer: E", CAPITALS, "A", "letter", "strict") == Rescored("E", "invalid", 0)
    assert rescore("Answer: E", CAPITALS, "A", "letter", "lighteval") == Rescored("A", "answered", 1)
    assert rescore("I cannot decide.", CAPITALS, "B", "letter", "strict") == Rescored(None, "no_answer", 0)
    assert rescore("<think>maybe B", CAPITALS, "B", "letter", "strict") == Rescored(None, "unfinished", 0)
    # strict needs the whole set on multi-answer items, lighteval any gold letter
    assert rescore("Answer: A", CAPITALS, "AC", "letters", "strict") == Rescored("A", "answered", 0)
    assert rescore("Answer: AC", CAPITALS, "AC", "letters", "strict") == Rescored("AC", "answered", 1)
    assert rescore("Answer: A", CAPITALS, "AC", "letters", "lighteval").correct == 1


def test_strict_rescoring_reads_the_labelled_answer_and_scores_it_against_gold() -> None:
    """Every corpus reply, rescored strictly, gives its hand label and is right exactly when the label is gold.

    One test over the corpus (not one per row: the labels are already checked row by row in
    test_extraction.py); what it adds is the score: right under the labelled gold, wrong under another.
    """
    wrong = []
    for row in CORPUS:
        options, fmt, label = row["options"], row["answer_format"], row["expected_answer"]
        gold = label or ("0" if fmt == "number" else "A")
        other = "1" if gold == "0" else ("0" if fmt == "number" else ("B" if gold != "B" else "C"))
        for g, expected in ((gold, int(label is not None and row["expected_status"] == "answered")), (other, 0)):
            got = rescore(row["response"], options, g, fmt, "strict")
            if (got.answer, got.status, got.correct) != (label, row["expected_status"], expected):
                wrong.append((row["id"], g, got))
    assert not wrong


@pytest.mark.parametrize(
    ("response", "gold", "logged"),
    [
        ("The seat of government is Paris.\n\nAnswer: C", "C", ("C", "answered", 1)),
        ("Answer: C) Paris", "B", ("C", "answered", 0)),
        ("Answer: E", "A", ("E", "invalid", 0)),
        ("<think>Paris, surely", "C", (None, "unfinished", 0)),
    ],
)
def test_the_task_logs_the_hand_labelled_record(response: str, gold: str, logged: tuple) -> None:
    doc = {
        "pf_options": CAPITALS,
        "pf_gold": gold,
        "pf_format": "letter",
        "pf_subtask": "mmlu_x",
        "pf_category": "Culture",
    }
    record = process_results_chat(doc, [response])["postforget"]
    assert (record["answer"], record["status"], record["correct"]) == logged
    assert record["extractor"] == f"postforget-strict/{EXTRACTOR_VERSION}" and record["gold"] == gold


@settings(max_examples=200, deadline=None)
@given(
    response=st.text(max_size=300),
    gold=st.sampled_from(["A", "B", "C", "D", "AC"]),
    policy=st.sampled_from(POLICIES),
)
def test_correct_only_when_an_answer_was_read(response: str, gold: str, policy: str) -> None:
    fmt = "letters" if len(gold) > 1 else "letter"
    got = rescore(response, CAPITALS, gold, fmt, policy)
    assert got.correct in (0, 1)
    if got.correct:
        assert got.status == "answered" and got.answer is not None
    if policy == "strict":
        assert (got.answer, got.status) == tuple(vars(extract_answer(response, CAPITALS, fmt)).values())


def test_scorer_names_and_unknown_policy() -> None:
    assert scorer_name("strict") == f"strict/{EXTRACTOR_VERSION}"
    assert scorer_name("lighteval") == f"{MATCHER_NAME}/{MATCHER_VERSION}" == "lighteval-0.10/1"
    with pytest.raises(ValueError, match="choose one of strict, lighteval"):
        scorer_name("lenient")
    with pytest.raises(ValueError, match="unknown rescoring policy 'lenient'"):
        rescore("Answer: A", CAPITALS, "A", "letter", "lenient")
