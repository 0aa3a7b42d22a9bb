"""Extraction's rules on hand-labelled replies: where a plausible reordering reads another letter, and where
only the intended reading of each rule gets the reply right.

The property tests only meet these shapes when their random draw happens to build them; here each
shape is fixed, and the label is what a reader of the reply takes as the model's final answer.

The second half puts the answer where one rule alone can read it (a header whose line ends in markdown,
"answer (D)" closing a later line, an "is:" line whose answer line appears earlier as part of a
restated list, a statement whose answer is on the next line, a verdict or a chosen-option marker at
the very start, ``\\boxed`` glued to the word before it), with no bare answer line at either edge of
the reply for a later rule to fall back on. They were mutation survivors in the extraction.
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


WITH_ROME = ["Lyon", "Marseille", "Paris", "Rome"]

ONE_RULE_REPLIES = [
    # a header line "**Final Answer**": the markdown after "Answer" still makes it a header
    ("Let me weigh the options.\n**Final Answer**\nB\nThat is my pick, I am confident.", "B"),
    # "Answer (B)" opening a line of running text is no header; the prose statement after it counts
    ("Let me check each option.\nAnswer (B) looks tempting, but it is wrong.\nThe correct answer is D.", "D"),
    # "answer (D)." closing a line that is not the first one
    ("Each option fails except one.\nSo the only fit is answer (D).\nI am fairly sure of it.", "D"),
    # "is:" then "C. Paris": the same line opened a restated list earlier, but here nothing lettered follows it
    ("C. Paris\nD. Rome\nHmm, let me decide.\nThe answer is:\nC. Paris\nThis is the capital of France.", "C"),
    # the same with "is:" alone (no "the answer is" statement to read it instead)
    ("C. Paris\nD. Rome\nHmm, let me decide.\nWhat remains is:\nC. Paris\nThis is the capital of France.", "C"),
    # the line after "is:" is read where it follows the intro, not where it occurs last
    ("What remains is:\nC. Paris\nRecap of the options:\nC. Paris\nD. Rome\nDone.", "C"),
    ("The answer is:\nC. Paris\nRecap of the options:\nC. Paris\nD. Rome\nDone.", "C"),
    # a statement without colon whose answer is on the next line
    ("Let me think about the options.\nThe correct answer is\nB\nIt is the only one consistent with the data.", "B"),
    # the verdict's letter at the very start of the reply
    ("B is the correct answer, since the others contradict the passage.", "B"),
    # "Correct option:" at the very start: its required "correct" is at position 0
    ("Correct option: B\nThe others contradict the passage.", "B"),
    # \boxed right after a word (valid LaTeX): still a box
    ("Working through it, the result is\\boxed{C} as shown above.", "C"),
    # a no-break space before "D)" does not make the next line an option label
    ("The answer is:\nC. Paris\n\u00a0D) Rome is the other.", "C"),
    ("What remains is:\nC. Paris\n\u00a0D) Rome is the other.", "C"),
    # no visible reply: the thinking's last line counts when a marker opens it; the later "my answer" closing
    # the line does not open it, and the earlier marker on the same line is still tried
    ("<think>Let me see.\nAnswer: C, which is my answer\n</think>", "C"),
    # the last line is the prompted "Answer: X" layout: it wins over an earlier statement, also in "__" bold
    # (the "_" before "Answer" does not stop it), with a trailing newline, after an earlier line, or when the
    # reply opens with a newline (after the thinking) or is cut off before the bracket closes
    ("First guess: the answer is C.\nChecking again, Marseille fits the clue.\n__Answer:__ B", "B"),
    ("First guess: the answer is C.\nChecking again, Marseille fits the clue.\n__Answer:__ B\n", "B"),
    ("<think>Marseille fits the clue.</think>\n__Answer:__ B", "B"),
    ("First guess: the answer is C.\nChecking again, Marseille fits the clue.\nAnswer: (B", "B"),
    # "Answer:" followed by a prose statement of the answer
    ("Answer: the correct option is B", "B"),
    # a header at the start of the reply that opens with a newline (after the thinking)
    ("<think>Marseille fits.</think>\n**Answer:**\nB\nMarseille is the second city of France, so it fits.", "B"),
    # a "Reasoning:" line before a restated "Question:" is no invented exemplar after it: the whole reply counts
    (
        "Let me restate the task.\nReasoning: we need the capital of France.\n"
        "Question: Which city is the capital of France?\nParis is the capital, so the answer is (C).",
        "C",
    ),
    # the Kelvin sign (U+212A) lowercases to "k": "li\u212aely" is "likely", a qualifier of the statement
    ("Weighing everything, the answer is li\u212aely (C).", "C"),
]


@pytest.mark.parametrize(("reply", "answer"), ONE_RULE_REPLIES)
def test_each_reply_is_read_as_labelled(reply, answer):
    found = extract_answer(reply, WITH_ROME, "letter")
    assert (found.answer, found.status) == (answer, "answered")


LONG_OPTION = "Paris, which is the capital city of France and has been for a very long time, " * 2


def test_a_restated_list_with_a_long_option_line_is_no_answer():
    """ "The options are:" then the options again: no answer, even when the first restated line is long
    (158 characters; the next lettered line must still be seen after it)."""
    options = ["Lyon", "Marseille", LONG_OPTION.strip(), "Rome"]
    reply = f"Let me list them again. The options are:\nC. {LONG_OPTION.strip()}\nD. Rome\nI am not sure which one."
    found = extract_answer(reply, options, "letter")
    assert (found.answer, found.status) == (None, "no_answer")


# Sex-chromosome complements: an option's text may be made of letters only ("XXXX").
KARYOTYPES = ["XO", "XXY", "XXXX", "XYY"]
KLINEFELTER = "Klinefelter syndrome has one extra X, so the answer is (B)."


@pytest.mark.parametrize(
    ("options", "reply", "expected"),
    [
        # a "\\boxed{" never closed is no box; the statement before it counts
        (KARYOTYPES, f"{KLINEFELTER}\nFinal: \\boxed{{\\text{{B}}", ("B", "answered")),
        # a header with nothing after it (the reply was cut off): the statement before it counts
        (KARYOTYPES, f"{KLINEFELTER}\n\n**Final Answer:**\n\n", ("B", "answered")),
        # a log row without a response (None) has no answer, whatever the option texts
        (KARYOTYPES, None, (None, "no_answer")),
        # an option's text after an "option" prefix; the text has a full stop inside it
        (
            ["Chicago", "St. Louis", "Kansas City", "Denver"],
            "Answer: the option St. Louis\nThe Gateway Arch stands on its riverfront.",
            ("B", "answered"),
        ),
        # "is:" then "D. Xe": the next line "Xe: xenon" is no option label, so this is no restated list
        (
            ["Ne", "Ar", "Kr", "Xe"],
            "Of these, the heaviest noble gas is:\nD. Xe\nXe: xenon, atomic number 54.",
            ("D", "answered"),
        ),
        # a statement withdrawn in its own sentence, after a box
        (
            WITH_ROME,
            "The closest match is \\boxed{D}, but this is not the correct answer: Rome is a capital, not a port.",
            (None, "no_answer"),
        ),
        # a letter that is no option (X), as a bare line, after a header, before a verdict: invalid
        (WITH_ROME, "None of the four cities fits, so I mark it as X.\nX", ("X", "invalid")),
        (WITH_ROME, "None of the four cities fits.\nAnswer: X\n(I could not decide.)", ("X", "invalid")),
        (WITH_ROME, "None of the four cities fits, so (X) is the correct answer here, I made it up.", ("X", "invalid")),
    ],
)
def test_each_reply_is_read_with_its_status(options, reply, expected):
    """Replies whose label is not an answered letter of WITH_ROME: other option texts, invalid letters,
    withdrawn statements and missing responses (mutation survivors in the extraction)."""
    found = extract_answer(reply, options, "letter")
    assert (found.answer, found.status) == expected
