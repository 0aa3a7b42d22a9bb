"""Extraction on the shapes real generations take that the corpus of tests/data did not cover, and agreement with
careful labels on real generations (the development set beside the checkout).

Each kind below was met in held-out real generations; the replies here are written for this test, not copied.
"""

from __future__ import annotations

import json

import pytest

from postforget_lmeval.scoring import Extraction, extract_answer
from tests.helpers import paths

ANIMALS = ["a cat", "a dog", "a bird", "a fish"]
COLOURS = ["red", "blue", "green", "pink", "black", "white", "grey", "teal"]
METALS = ["copper", "iron", "gold", "silver", "zinc", "lead", "tin", "nickel", "cobalt", "mercury"]
TEN = [f"{n} m/s" for n in (1, 2, 3, 5, 8, 13, 21, 34, 55, 89)]


def read(reply: str, options: list[str]) -> str | None:
    """The answer read, or None when the reply gave none (hedged, rejected, or missing)."""
    found = extract_answer(reply, options)
    return found.answer if found.status == "answered" else None


@pytest.mark.parametrize(
    ("reply", "options", "answer"),
    [
        ("(B), (C) and (D) each describe pets only. The answer is (A).", ANIMALS, "A"),
        ("Choices A, B and C are all ruled out by the second clue.\nSo the answer is (D).", ANIMALS, "D"),
        ("(A), (B), (C), and (D) are all plausible at first, but the answer is (B).", ANIMALS, "B"),
    ],
)
def test_a_commitment_after_a_sentence_listing_several_letters(reply, options, answer):
    assert read(reply, options) == answer


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("Answer: (A), (B), (C) and (D) are all plausible at first.\nThe answer is (C).", "C"),
        ("**Answer:** (A), (B), (C), and (D) are all animals, yet only one lives in water. So the answer is (D).", "D"),
        ("Correct option: (A), (B), (C) and (D) all seem possible.\n\nTherefore, the answer is (B).", "B"),
        ("Final answer: A, B, C or D could each be kept as a pet. On reflection the best answer is (A).", "A"),
        ("answer: A, B, C, D all fit the first clue. The answer is (B).", "B"),
        ("Answer: A, B, C and D are all possible.\nB", "B"),
    ],
)
def test_every_option_named_in_a_statement_then_a_commitment(reply, answer):
    """A statement that names every option declines to choose; it ends the search for earlier answers, not for
    the commitment that follows it."""
    assert read(reply, ANIMALS) == answer


@pytest.mark.parametrize(
    "reply",
    [
        "Answer: (A), (B), (C) and (D) are all plausible. I cannot tell which one is meant.",
        "The answer is A, B or C. More context would be needed.",
        "So the answer is (A), (B), (C) or (D)? Hard to say.",
    ],
)
def test_a_statement_naming_every_option_with_nothing_after_it_is_no_answer(reply):
    assert extract_answer(reply, ANIMALS) == Extraction(None, "no_answer")


@pytest.mark.parametrize(
    ("reply", "options", "answer"),
    [
        ("The sound in the night was made by a dog.", ANIMALS, "B"),
        ("He took home a bird", ANIMALS, "C"),
        ("Only one of them lives in water, namely a fish.", ANIMALS, "D"),
        ("Bronze is an alloy made mostly of copper.", METALS, "A"),
        ("Rust forms on iron!", METALS, "B"),
        ("The chemical symbol Au stands for gold.", METALS, "C"),
        ("  Pennies in the United States were once minted from copper.\n", METALS, "A"),
        ("Most stop signs are painted red", COLOURS, "A"),
    ],
)
def test_a_one_sentence_reply_ending_with_one_options_text(reply, options, answer):
    assert read(reply, options) == answer


@pytest.mark.parametrize(
    "reply",
    [
        "Would you pick a dog?",  # a question
        "I am not sure whether it is a dog.",  # open
        "It might be a fish.",  # hedged
        "A cat chases a bird.",  # another option named first
        "Cats chase mice. Dogs chase a cat.",  # two sentences, and no "is" before the option
        "The animal could be a cat; it could also be a dog.",
    ],
)
def test_a_one_sentence_reply_that_is_no_commitment_is_no_answer(reply):
    assert extract_answer(reply, ANIMALS) == Extraction(None, "no_answer")


@pytest.mark.parametrize(
    "reply",
    [
        "The odd one out is (G).\n\nWhich of these is a fruit?\n(A) apple (B) carrot (C) potato\nThe odd one is (B).",
        "The odd one out is (G).\nWhich of these is a fruit?\n(A) apple\n(B) carrot\n(C) potato\nThe answer is (A).",
        "The odd one out is (G).\n\nFind the odd one out.\nA) apple\nB) carrot\nC) banana\nThe odd one out is (B).",
        "The odd one out is (G).\n\nWhich word does not belong: (A) oak (B) pine (C) rose (D) elm\nIt is (C).",
        "So the colour that does not fit is (G).\n\nWhich of the following is a mammal?\nA. shark\nB. whale\n"
        "C. trout\nSo the answer is (B).",
        "The odd one out is (G).\n\n2. Which is not a planet?\n(A) Mars (B) Venus (C) Moon\nThe odd one out is (C)."
        "\n\n3. Which is not a prime?\n(A) 2 (B) 3 (C) 4\nThe odd one out is (C).",
        "The odd one out is (G).\nWhich animal cannot fly?\nOptions:\nA) eagle\nB) penguin\nC) sparrow\nAnswer: B",
        "(G)\n\nWhich one is a vegetable?\n(A) apple\n(B) carrot\n(C) pear\n(B)",
    ],
)
def test_a_commitment_before_invented_questions_that_list_other_options(reply):
    assert read(reply, COLOURS) == "G"


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        # the clues listed before any answer: no answer before them to keep, so the reply is read whole
        ("Consider the clues:\n(A) it barks\n(B) it fetches sticks\nSo the answer is a dog.", "B"),
        # the item's own options gone over again, each named by its text
        ("At first the answer seems to be (A).\n(A) A cat purrs: no\n(B) A dog barks: yes\nSo the answer is (B).", "B"),
    ],
)
def test_a_list_that_is_no_invented_question_leaves_the_reply_whole(reply, answer):
    assert read(reply, ANIMALS) == answer


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("So the animal we want is D.", Extraction("D", "answered")),
        # one letter past the four options: a capital that is no option's letter is no answer...
        ("So the animal we want is E.", Extraction(None, "no_answer")),
        # ... while a bracketed letter is an answer outside the options
        ("So the animal we want is (E).", Extraction("E", "invalid")),
    ],
)
def test_a_closing_letter_just_past_the_options(reply, expected):
    assert extract_answer(reply, ANIMALS) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "The speed works out to 4.2 m/s. The closest option is (J), but this is not the correct answer; "
        "the correct answer is not among the options.",
        "The nearest choice is (C), but it is not correct. None of the options match.",
        "The answer would be (B), but that is wrong: the true value is not listed.",
        "The closest option is (D); however, this is not the right answer, and the true value is not given.",
    ],
)
def test_an_option_named_and_then_rejected_is_no_answer(reply):
    assert read(reply, TEN) is None


def test_a_rejection_of_something_else_keeps_the_answer():
    assert read("The answer is (C), but the reasoning above is not the only route to it.", ANIMALS) == "C"
    assert read("The closest option is (J). This is not a trick question.", TEN) == "J"


@pytest.mark.parametrize(
    "reply",
    [
        "The answer is B) a dog or C) a bird.",
        "Answer: (A) a cat or (D) a fish",
        "Final answer: C) a bird or D) a fish",
    ],
)
def test_a_hedge_between_two_options_written_with_their_texts(reply):
    assert read(reply, ANIMALS) is None


def test_an_option_text_that_holds_or_is_not_a_hedge():
    assert read("Answer: B) black or white", ["red", "black or white", "grey"]) == "B"


@pytest.mark.parametrize(
    ("reply", "options", "answer"),
    [
        ("Putting the clues together, the correct answer is the one with a fish.", ANIMALS, "D"),
        ("So the answer is the option that says a dog.", ANIMALS, "B"),
        ("Hence the answer must be the colour of the sea at noon, teal.", COLOURS, "H"),
    ],
)
def test_an_answer_sentence_ending_with_an_options_text(reply, options, answer):
    assert read(reply, options) == answer


@pytest.mark.parametrize(
    "reply",
    ["So the answer is not a fish.", "The answer is unclear; it could be anything from a cat to a fish."],
)
def test_a_negated_or_open_sentence_ending_with_an_options_text_is_no_answer(reply):
    assert read(reply, ANIMALS) is None


@pytest.mark.parametrize(
    "reply",
    [
        "The odd one out is (G).\n\nWhich colour is warm?\nOptions:\n(A) red\n(B) blue\nAnswer: (A)",
        "The odd one out is (G).\n\nQuestion 2: Which colour is cold?\n(A) red (B) blue\nThe answer is (B).",
        "The one that does not belong is (G).\n\nExample 2:\nWhich is a primary colour?\n(A) red\n(B) pink\nAnswer: A",
    ],
)
def test_a_base_models_commitment_before_invented_questions_with_their_own_answers(reply):
    assert read(reply, COLOURS) == "G"


@pytest.mark.parametrize(
    "reply",
    [
        "Let me look at the options again.\n\nOptions:\n(A) red\n(B) blue\n\nAnswer: B",
        "At first the answer seems to be (A).\n\nLet me check each option:\n(A) red: no\n(B) blue: yes\n"
        "So the answer is (B).",
    ],
)
def test_a_chat_reply_that_goes_over_the_options_again_is_read_whole(reply):
    assert read(reply, COLOURS) == "B"


def test_real_generations_agree_with_careful_labels():
    """Every firm label of the development set (real generations of several models; the labels say why)."""
    path = paths.REFERENCE / "extraction" / "real_dev.jsonl"
    if not path.is_file():
        pytest.skip("the real generations are not beside the checkout")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    firm = [row for row in rows if not row["debatable"]]
    misses = []
    for row in firm:
        found = extract_answer(row["generation"], row["options"], row["answer_format"])
        answer = found.answer if found.status == "answered" else row["expected"]  # only an answered item has one
        if (answer, found.status) != (row["expected"], row["expected_status"]):
            misses.append((row["note"], found))
    assert len(firm) >= 60 and misses == []
