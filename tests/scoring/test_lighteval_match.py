"""LightEval 0.10's native-letter extractive match, as the paper scored (lighteval_match).

The expected letters are LightEval 0.10.0's own outputs on these inputs (observed by running its
``multilingual_extractive_match_metric``); they are facts about that scorer, not our preferences.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from postforget_lmeval.scoring import LETTERS, extract_letter
from postforget_lmeval.scoring._lighteval import score

CAPITALS = ["Paris", "London", "Berlin", "Madrid"]
COUNTS = [str(n) for n in range(19)]  # the object_counting options of our task


@pytest.mark.parametrize(
    ("response", "k", "letter"),
    [
        # clean answers
        ("Answer: B", 4, "B"),
        ("**Answer:** C", 4, "C"),
        ("The answer is (D).", 4, "D"),
        ("Answer:\nB", 4, "B"),
        ("\\boxed{C}", 4, "C"),
        ("ANSWER: D", 4, "D"),
        ("print('Answer: C')", 4, "C"),
        # a newline after the letter fails every anchored pattern: a later capital wins
        ("Answer: B\nDone.", 4, "D"),
        ("Answer: B\n\nExplanation: Darwin showed this.", 4, "D"),
        ("Answer: (C)\n\nDone", 4, "D"),
        ("Answer: B\nConfidence: high", 4, "C"),
        ("Answer: B\nNote: option A is wrong.", 4, "A"),
        ("Answer: C\nExplanation: Because ...", 4, "B"),
        ("Answer: B\n\n", 4, "B"),
        # ")" is not an allowed suffix; the B of the option text is the last capital
        ("Answer: C) Berlin", 4, "B"),
        # letters beyond the options are not extracted; the A of "Answer" is
        ("Answer: E", 4, "A"),
        ("Answer: D", 3, "A"),
        ("Answer: B\nAnswer: E", 4, "A"),
        ("Answer: D\nAnswer: A", 4, "A"),
        # option text, numbers and lowercase letters are not read
        ("Answer: Paris", 4, "A"),
        ("Answer: 2", 4, "A"),
        ("Answer: 3", 4, "A"),
        ("Answer: (b)", 4, "A"),
        ("(b)", 4, None),
        ("answer: b", 4, None),
        ("2", 4, None),
        ("Final answer: the correct option is (b)", 4, None),
        # no answer at all: any capital letter among the options
        ("Let's consider option B. Because", 4, "B"),
        ("We compare the Data carefully and", 4, "D"),
        ("Based on ..., I cannot decide.", 4, "B"),
        ("Cannot determine", 4, "C"),
        ("I don't know.", 4, None),
        ("I don't know.", 10, "I"),
        ("A farmer would say London.", 4, "A"),
        # hedges: the first letter after the anchor, or the right-most spaced letter
        ("The answer is A and C.", 4, "A"),
        ("(A) or (D)", 4, "A"),
        ("It is either (A) or (D).", 4, "D"),
        ("The answer is (A) or (D).", 4, "A"),
        ("Answer: A, B", 4, "A"),
        # 0.10 does not strip thinking
        ("<think>so the answer is B. Wait, let me", 4, "B"),
        ("<think>\nOption B looks plausible. But wait", 4, "B"),
    ],
)
def test_observed_lighteval_outputs(response: str, k: int, letter: str | None) -> None:
    assert extract_letter(response, k) == letter


@pytest.mark.parametrize(
    ("response", "letter"),
    [
        # priority 0 beats a later "Answer:" line
        ("The final answer is C. I hope it is correct.\nAnswer: B", "C"),
        # priority 50: "final answer ... is X" needs no suffix after the letter
        ("My final answer to this is Dover\nAnswer: B", "D"),
        # 100 beats 150: the colon form wins even when it is further left
        ("Answer: C. Then the answer could be B ok", "C"),
        # within a priority the right-most match wins
        ("The answer is B. Hmm, the answer is C.", "C"),
        # start of the text (200) beats the start of a line (210)
        ("B. yes\nC. no", "B"),
        ("well\nC. no\nD. yes", "D"),
        # "**" around the letter is allowed
        ("The answer is **C**.", "C"),
        # no space before the letter: not anchored, only the any-capital fallback reads it
        ("Answer:B is my pick", "B"),
    ],
)
def test_priorities(response: str, letter: str) -> None:
    assert extract_letter(response, 4) == letter


def test_degenerate_input_is_safe() -> None:
    assert extract_letter("", 4) is None
    assert extract_letter("Answer: B", 0) is None
    assert extract_letter(None, 4) is None  # type: ignore[arg-type]


def test_score_single_and_multi_gold() -> None:
    assert score("Answer: B", CAPITALS, "B", "letter") == ("B", "answered", 1)
    assert score("Answer: B\nDone.", CAPITALS, "B", "letter") == ("D", "answered", 0)
    assert score("I don't know.", CAPITALS, "B", "letter") == (None, "no_answer", 0)
    # SaladBench: correct when the one letter is any of the gold letters
    assert score("Answer: A", CAPITALS, "AC", "letters") == ("A", "answered", 1)
    assert score("Answer: B", CAPITALS, "AC", "letters") == ("B", "answered", 0)


def test_object_counting_maps_counts_to_letters() -> None:
    # the paper's tasks: letter n-1 for count n (A-S for 1-19), so "7" is read as the A of "Answer"
    assert score("Answer: 7", COUNTS, "7", "number") == ("1", "answered", 0)
    assert score("So there are seven. Answer: G", COUNTS, "7", "number") == ("7", "answered", 1)
    assert score("Answer: A", COUNTS, "1", "number") == ("1", "answered", 1)
    assert score("Answer: S", COUNTS, "18", "number") == ("19", "answered", 0)
    # a gold count of 0 has no letter: never correct
    assert score("Answer: A", COUNTS, "0", "number")[2] == 0


FRAGMENTS = [
    "Answer:",
    "answer",
    "ANSWER: ",
    "Final answer",
    "final answer is ",
    " is ",
    "I hope",
    " I hope",
    "The answer is ",
    "A",
    "B",
    "C",
    "D",
    "E",
    "(A)",
    "(B)",
    "(c)",
    "**",
    " ",
    "\n",
    "\n\n",
    ".",
    ",",
    ":",
    ")",
    "x",
    "Done",
    "Berlin",
    "or ",
    "\t",
    "7",
    "<think>",
    "é",
    "İ",
]


@settings(max_examples=600, deadline=None)
@given(
    response=st.one_of(st.lists(st.sampled_from(FRAGMENTS), max_size=16).map("".join), st.text(max_size=200)),
    k=st.sampled_from([1, 2, 3, 4, 5, 10, 19]),
)
def test_the_letter_is_one_of_the_first_k_and_written_in_the_response(response: str, k: int) -> None:
    letter = extract_letter(response, k)
    if letter is None:
        assert not any(c in response for c in LETTERS[:k])
    else:
        assert letter in LETTERS[:k] and letter in response
