"""Tests for answer extraction: a corpus of realistic generations plus property tests."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from postforget_lmeval.scoring import FORMATS, LETTERS, Extraction, extract_answer, extraction
from tests.helpers import paths

CORPUS_PATH = paths.DATA / "generations.jsonl"
CORPUS = [json.loads(line) for line in CORPUS_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
PROPERTY_SETTINGS = settings(max_examples=250, deadline=None)
CITIES = ["Lyon", "Marseille", "Paris", "Nice"]


@pytest.mark.parametrize("row", CORPUS, ids=[row["id"] for row in CORPUS])
def test_corpus(row: dict) -> None:
    got = extract_answer(row["response"], row["options"], row["answer_format"])
    assert (got.answer, got.status) == (row["expected_answer"], row["expected_status"]), row["note"]


def test_corpus_covers_every_status_and_format() -> None:
    assert len(CORPUS) >= 70
    assert len({row["id"] for row in CORPUS}) == len(CORPUS)
    assert {row["expected_status"] for row in CORPUS} == {"answered", "invalid", "no_answer", "unfinished"}
    assert {row["answer_format"] for row in CORPUS} == set(FORMATS)


def test_result_is_a_frozen_value() -> None:
    result = extract_answer("Answer: B", ["x", "y"])
    assert result == Extraction("B", "answered")
    with pytest.raises(AttributeError):
        result.answer = "A"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("Answer: C", "C"),
        ("**Answer:** C", "C"),
        ("**Answer: C**", "C"),
        ("answer: (c)", "C"),
        ("Answer: (C)", "C"),
        ("The answer is C.", "C"),
        ("the correct answer is option B", "B"),
        ("\\boxed{C}", "C"),
        ("\\boxed{\\text{C}}", "C"),
        ("Answer: C) Paris", "C"),
        ("Answer: C. Paris", "C"),
        ("Answer: PARIS", "C"),
        ("answer: b", "B"),
        ("### Final Answer\nB", "B"),
        ("Final answer: B", "B"),
        ("答案：B", "B"),
        ("B", "B"),
        (" B\n", "B"),
        ("Answer: A\n\nAnswer: D", "D"),
    ],
)
def test_brief_examples(response: str, expected: str) -> None:
    assert extract_answer(response, CITIES) == Extraction(expected, "answered")


@pytest.mark.parametrize(
    "response",
    [
        "A good approach is to compare the cities.",
        "I think B or C.",
        "Answer: A good question.",
        "the answer is a tricky one",
        "Is the answer A or B? Let me check both.",
    ],
)
def test_no_false_positives(response: str) -> None:
    assert extract_answer(response, CITIES) == Extraction(None, "no_answer")


def test_number_without_options_accepts_any_integer() -> None:
    assert extract_answer("Answer: 42", [], "number") == Extraction("42", "answered")


def test_option_text_shared_by_two_options_is_not_an_answer() -> None:
    assert extract_answer("Answer: Yes", ["Yes", "yes!", "No"]) == Extraction(None, "no_answer")


@pytest.mark.parametrize(
    "response",
    [
        "Let me think about each option carefully. " * 750,
        "Answer:\n" * 4000,
        "the answer is " * 2500,
        "\\boxed{" * 4000,
        "(" * 30000,
        "A, " * 10000,
        "\n" * 30000,
        "```\n" * 7500,
        "<think>" + "x" * 30000,
        "there are total " * 2000,
    ],
    ids=["prose", "markers", "statements", "boxes", "parens", "letters", "lines", "fences", "think", "count"],
)
def test_long_pathological_responses_are_read(response: str) -> None:
    """Replies built to make a regex backtrack are read like any other (their speed is make bench's concern)."""
    for answer_format in FORMATS:
        options = [str(i) for i in range(19)] if answer_format == "number" else ["w", "x", "y", "z"]
        found = extract_answer(response, options, answer_format)
        assert found.status in ("answered", "invalid", "no_answer", "unfinished")


# ------------------------------------------------------------------------------ properties

FRAGMENTS = [
    "Answer:",
    "answer: ",
    "**Answer:** ",
    "Final Answer",
    "### ",
    "The answer is ",
    "the correct option is ",
    "<think>",
    "</think>",
    "<thinking>",
    "\\boxed{",
    "\\text{",
    "}",
    "{",
    "(",
    ")",
    "[",
    "]",
    "$",
    "*",
    "**",
    "```",
    "```python\n",
    'print("Answer: ',
    '")',
    "\n",
    "\n\n",
    " ",
    ", ",
    " and ",
    " or ",
    ".",
    ":",
    "A",
    "B",
    "C",
    "D",
    "E",
    "Z",
    "a",
    "b",
    "AC",
    "I",
    "7",
    "19",
    "-3",
    "seven",
    "=",
    "Question:",
    "\nQuestion:",
    "\nReasoning:",
    "Paris",
    "there are ",
    "a total of ",
    "答案：",
    "e.g.",
    "<|im_end|>",
]
fragment_text = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)
# Reasoning that neither opens a think block nor invents a next question.
PLAIN_FRAGMENTS = [f for f in FRAGMENTS if "<" not in f and "Question" not in f]
plain_reasoning = st.one_of(
    st.text(max_size=300).filter(lambda t: "<" not in t and "Question:" not in t),
    st.lists(st.sampled_from(PLAIN_FRAGMENTS), max_size=40).map("".join),
)
any_text = st.one_of(st.text(max_size=400), fragment_text)
letter_options = st.lists(st.text(max_size=12), min_size=0, max_size=8)


def _valid(answer: str, options: list[str], answer_format: str) -> bool:
    if answer_format == "number":
        return not options or answer in options
    return all(ch in LETTERS[: len(options)] for ch in answer)


def _check_consistent(result: Extraction, options: list[str], answer_format: str) -> None:
    assert result.status in ("answered", "invalid", "no_answer", "unfinished")
    if result.status in ("no_answer", "unfinished"):
        assert result.answer is None
        return
    assert result.answer
    assert _valid(result.answer, options, answer_format) == (result.status == "answered")
    if answer_format == "letter":
        assert len(result.answer) == 1 and result.answer in LETTERS
    elif answer_format == "letters":
        assert set(result.answer) <= set(LETTERS) and result.answer == "".join(sorted(set(result.answer)))
    elif result.status == "answered":
        assert result.answer == str(int(result.answer))


@PROPERTY_SETTINGS
@given(response=any_text, options=letter_options, answer_format=st.sampled_from(("letter", "letters")))
def test_letter_formats_never_raise_and_are_consistent(response: str, options: list[str], answer_format: str) -> None:
    _check_consistent(extract_answer(response, options, answer_format), options, answer_format)


@PROPERTY_SETTINGS
@given(response=any_text, top=st.integers(min_value=0, max_value=20))
def test_number_format_never_raises_and_is_consistent(response: str, top: int) -> None:
    options = [str(i) for i in range(top)]
    _check_consistent(extract_answer(response, options, "number"), options, "number")


@PROPERTY_SETTINGS
@given(prefix=plain_reasoning, index=st.integers(min_value=0, max_value=3), in_think=st.booleans())
def test_final_answer_line_wins(prefix: str, index: int, in_think: bool) -> None:
    """Whatever reasoning comes first, a closing "Answer: X" line decides."""
    reasoning = f"<think>{prefix}</think>" if in_think else prefix
    result = extract_answer(f"{reasoning}\nAnswer: {LETTERS[index]}", CITIES)
    assert result == Extraction(LETTERS[index], "answered")


@PROPERTY_SETTINGS
@given(thought=st.text(alphabet="abcdefghijklmnopqrstuvwxyz ABCD0123456789.,?()*\n", max_size=300))
def test_unclosed_think_without_answer_line_is_unfinished(thought: str) -> None:
    """Without a colon, box or closing tag, an open think block can hold no final answer line."""
    for answer_format in FORMATS:
        options = [str(i) for i in range(19)] if answer_format == "number" else ["w", "x", "y", "z"]
        assert extract_answer("<think>" + thought, options, answer_format) == Extraction(None, "unfinished")


@PROPERTY_SETTINGS
@given(
    prefix=any_text,
    line=st.sampled_from(["Answer: {}", "**Answer:** {}", "answer: ({})", "Final Answer: {}.", "## Answer: **{}**"]),
    letter=st.sampled_from("ABCDEFGabc"),
    answer_format=st.sampled_from(("letter", "letters")),
)
def test_final_answer_line_shortcut_agrees_with_rule_1(prefix: str, line: str, letter: str, answer_format: str) -> None:
    """The prompted last line is read without a search; the search (rule 1) must read it the same way."""
    text = f"{prefix}\n{line.format(letter)}"
    item = extraction._item(CITIES, answer_format)
    assert extraction._from_text(text, item) == extraction._first(
        extraction._explicit(text, extraction._lower(text), item)
    )


@PROPERTY_SETTINGS
@given(prefix=plain_reasoning, first=st.sampled_from("ABCD"), second=st.sampled_from("ABCD"))
def test_a_closing_hedge_is_never_an_answer(prefix: str, first: str, second: str) -> None:
    """However the reasoning went, a last answer line "Answer: (X) or (Y)" chooses nothing."""
    response = f"{prefix}\nAnswer: ({first}) or ({second})."
    assert extract_answer(response, CITIES) == Extraction(None, "no_answer")
