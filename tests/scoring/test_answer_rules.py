"""Extraction's order rules on hand-labelled replies where a plausible reordering reads another letter.

The property tests only meet these shapes when their random draw happens to build them; here each
shape is fixed, and the label is what a reader of the reply takes as the model's final answer.
"""

from __future__ import annotations

import pytest

from postforget_lmeval.scoring import Extraction, extract_answer

CITIES = ["Lyon", "Marseille", "Paris", "Nice"]


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        # several think blocks: only the text after the last </think> is the reply (splitting at the first
        # one leaves "Answer: C" of the second block, or "The answer is B." before it, in the reply)
        ("<think>x</think>The answer is B.<think>Wait, reconsider. Answer: C</think>\nThe answer is D.", "D"),
        ("<think>Answer: A</think>Answer: B\n<think>Hmm. Answer: C</think>\nSo the answer is D.", "D"),
        ("<think>Answer: A</think><think>Answer: B</think>Answer: D", "D"),
        # nothing after the last block: the second block's closing answer line, not the first block's
        ("<think>Answer: A</think>\n<think>Let me redo it.\nAnswer: C</think>", "C"),
    ],
)
def test_the_reply_after_the_last_think_block_counts(response: str, expected: str) -> None:
    assert extract_answer(response, CITIES) == Extraction(expected, "answered")


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        # markers of different kinds: the last one in the reply wins, whichever kind it is
        ("\\boxed{A}\nOn reflection, the final answer: C", "C"),
        ("The final answer: C\nDouble-checking gives \\boxed{A}", "A"),
        ("Answer: B\nHmm, actually \\boxed{D}, since Nice is on the coast.", "D"),
        ("So \\boxed{B}. Re-reading the question, **Final Answer:** D, Nice.", "D"),
        # an explicit marker beats a later prose statement (rule 1 before rule 2)
        ("The answer is B.\n\\boxed{C}\nSo the correct answer is D, I think.", "C"),
        # a later explicit answer that is no option makes the reply invalid; the earlier box is not consulted
        ("\\boxed{B}\nFinal answer: F\nThat is my choice.", None),
    ],
)
def test_competing_markers_the_last_explicit_one_wins(response: str, expected: str | None) -> None:
    got = extract_answer(response, CITIES)
    assert got == (Extraction(expected, "answered") if expected else Extraction("F", "invalid"))


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        # "İ" lowercases to two characters: positions found in the lowercased text must still fit the reply
        ("İİİİ İstanbul is no option here. Answer: C", "C"),
        # "answer" in running text after the marker is passed over, not the end of the search
        ("The answer is A.\nAnswer: B\nThe answer (as argued above) holds.", "B"),
        # a header line whose answer is on the next non-blank line, after other lines of reasoning
        ("Reasoning.\nMore.\n**Answer:**\nC\n\nI am confident.", "C"),
        ("Reasoning first.\nThen more reasoning.\n### Final Answer\n\nC\n\nI am confident.", "C"),
        # the answer on the next line, past a code fence
        ("Some reasoning.\nSo, my answer:\n\n```\nB\n```\nI am confident.", "B"),
    ],
)
def test_where_a_marker_and_its_answer_sit(response: str, expected: str) -> None:
    assert extract_answer(response, CITIES) == Extraction(expected, "answered")


def test_a_marker_after_words_is_no_header() -> None:
    """Only markdown and words like "Final" may precede a header; here B is the subject of the next clause."""
    assert extract_answer("Which city fits the answer:\n\nB\n\nis not clear to me.", CITIES) == Extraction(
        None, "no_answer"
    )


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        # an unclosed think block counts only if its last line opens with the answer marker
        ("<think>Hmm, maybe the answer: B", Extraction(None, "unfinished")),
        ("<think>Long thought.\nAnswer: B", Extraction("B", "answered")),
        # a base model inventing further exemplars: only the text before the first invented question counts
        (
            "Answer: B\nQuestion: What is next?\nAnswer: C\nQuestion: And then?\nReasoning: more.",
            Extraction("B", "answered"),
        ),
        # the first line of a long reply is a bare answer
        (
            "B\nBecause Paris is big.\nIt is old.\nIt is in France.\nIt has a river.\nIt is famous.\nThat is all",
            Extraction("B", "answered"),
        ),
        # an indented closing code fence is passed over when looking for the last line
        ("The reasoning is long.\nB\n  ```", Extraction("B", "answered")),
    ],
)
def test_thinking_invented_exemplars_and_edge_lines(response: str, expected: Extraction) -> None:
    assert extract_answer(response, CITIES) == expected


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        # a keyword inside a longer word is no marker ("check_answer:", "subanswer:")
        ("Answer: B\nThen I ran check_answer: A", "B"),
        ("Answer: B\nThe question's subanswer: A", "B"),
        # an open think block's last line: a marker further along that line does not open it
        ("<think>Answer: B, surely not the answer: C", "B"),
        # the answer on the next line, past an indented code fence
        ("Some reasoning.\nSo, my answer:\n\n  ```\nB\n  ```\nI am confident.", "B"),
    ],
)
def test_word_boundaries_and_fences(response: str, expected: str) -> None:
    assert extract_answer(response, CITIES) == Extraction(expected, "answered")


@pytest.mark.parametrize("response", [None, 123, b"Answer: B"])
def test_a_response_that_is_not_text_is_no_answer(response: object) -> None:
    assert extract_answer(response, CITIES) == Extraction(None, "no_answer")  # type: ignore[arg-type]
