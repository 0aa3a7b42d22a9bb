"""A reply that echoes the prompt's format instruction has not answered by doing so.

Small chat models (SmolLM2-135M-Instruct) often repeat the instruction line, filling in a value
(``write exactly "Answer: 20" (e.g. "Answer: 7")``). The marker inside that quoted instruction or its
example is not the model's commitment; a real answer line before or after the echo still is.
"""

from __future__ import annotations

import pytest

from postforget_lmeval.scoring import FORMATS, Extraction, extract_answer

CITIES = ["Lyon", "Marseille", "Paris", "Nice"]
COUNTS = [str(i) for i in range(25)]
OPTIONS = {"letter": CITIES, "letters": CITIES, "number": COUNTS}
# The placeholder of each format's instruction, as a model fills it in when it echoes the line.
FILLED = {"letter": ("$LETTER", "D"), "letters": ("$LETTERS", "BD"), "number": ("$NUMBER", "20")}
# An answer of each format that differs from both the filled-in placeholder and the instruction's example.
REAL = {"letter": "C", "letters": "ABD", "number": "12"}
NO_ANSWER = Extraction(None, "no_answer")


def echo(answer_format: str) -> str:
    """The format's own prompt line with its placeholder filled in, as the model repeats it."""
    placeholder, value = FILLED[answer_format]
    return FORMATS[answer_format].instruction.replace(placeholder, value)


@pytest.mark.parametrize("answer_format", sorted(FORMATS))
def test_an_echoed_instruction_alone_is_no_answer(answer_format: str) -> None:
    reply = f"Let me think about the question.\n{echo(answer_format)}"
    assert extract_answer(reply, OPTIONS[answer_format], answer_format) == NO_ANSWER


@pytest.mark.parametrize("answer_format", sorted(FORMATS))
def test_the_answer_line_after_an_echo_is_read(answer_format: str) -> None:
    reply = f"{echo(answer_format)}\nI count carefully.\nAnswer: {REAL[answer_format]}"
    assert extract_answer(reply, OPTIONS[answer_format], answer_format) == Extraction(REAL[answer_format], "answered")


@pytest.mark.parametrize("answer_format", sorted(FORMATS))
def test_the_answer_line_before_an_echo_is_read(answer_format: str) -> None:
    reply = f"Answer: {REAL[answer_format]}\n{echo(answer_format)}"
    assert extract_answer(reply, OPTIONS[answer_format], answer_format) == Extraction(REAL[answer_format], "answered")


@pytest.mark.parametrize(
    ("reply", "answer_format", "expected"),
    [
        # The number example from SmolLM2-135M-Instruct's echo, word for word.
        (
            'There are many fruits.\nOn the very last line, write exactly "Answer: 20" (e.g. "Answer: 7"), '
            "with no extra punctuation.",
            "number",
            NO_ANSWER,
        ),
        ('I must write exactly "Answer: B".', "letter", NO_ANSWER),
        ("The format is in the form 'Answer: AC' for several letters.", "letters", NO_ANSWER),
        ("Write the answer like “Answer: 7” on the last line.", "number", NO_ANSWER),
        ("For example, `Answer: B` would be the right layout.", "letter", NO_ANSWER),
    ],
    ids=["smollm-number", "write-exactly", "in-the-form", "like-curly-quotes", "for-example-backticks"],
)
def test_paraphrased_echoes_are_no_answer(reply: str, answer_format: str, expected: Extraction) -> None:
    assert extract_answer(reply, OPTIONS[answer_format], answer_format) == expected


@pytest.mark.parametrize(
    ("reply", "answer_format", "expected"),
    [
        # A quoted question, then the answer: the quote introduces no marker.
        ('The question asks "how many fruits are there?"\nAnswer: 5', "number", Extraction("5", "answered")),
        # A quoted marker that no instruction phrase introduces is the model's own answer.
        ('So I print the result: print("Answer: C")', "letter", Extraction("C", "answered")),
        ('My reply is "Answer: AC".', "letters", Extraction("AC", "answered")),
    ],
    ids=["quoted-question", "quoted-code", "quoted-own-answer"],
)
def test_a_legitimate_quote_is_still_read(reply: str, answer_format: str, expected: Extraction) -> None:
    assert extract_answer(reply, OPTIONS[answer_format], answer_format) == expected
