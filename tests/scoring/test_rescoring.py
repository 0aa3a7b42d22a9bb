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


@pytest.mark.parametrize("row", CORPUS, ids=[row["id"] for row in CORPUS])
def test_strict_rescoring_is_what_the_task_logs(row: dict) -> None:
    """Rescoring a log written by the current extractor changes nothing."""
    options, fmt = row["options"], row["answer_format"]
    gold = row["expected_answer"] or ("0" if fmt == "number" else "A")
    doc = {"pf_options": options, "pf_gold": gold, "pf_format": fmt, "pf_subtask": "mmlu_x", "pf_category": "Culture"}
    logged = process_results_chat(doc, [row["response"]])["postforget"]
    got = rescore(row["response"], options, gold, fmt, "strict")
    assert (got.answer, got.status, got.correct) == (logged["answer"], logged["status"], logged["correct"])
    assert logged["extractor"].endswith(f"/{EXTRACTOR_VERSION}")


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
