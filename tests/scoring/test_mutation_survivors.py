"""Replies that only the intended reading of each rule gets right, labelled by hand.

Each reply puts the answer where one rule alone can read it (a header whose line ends in markdown,
"answer (D)" closing a later line, an "is:" line whose answer line appears earlier as part of a
restated list, a statement whose answer is on the next line, a verdict or a chosen-option marker at
the very start, ``\\boxed`` glued to the word before it), with no bare answer line at either edge of
the reply for a later rule to fall back on. They were mutation survivors in the extraction.
"""

from __future__ import annotations

import pytest

from postforget_lmeval.scoring.extraction import extract_answer

OPTIONS = ["Lyon", "Marseille", "Paris", "Rome"]

REPLIES = [
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


@pytest.mark.parametrize(("reply", "answer"), REPLIES)
def test_each_reply_is_read_as_labelled(reply, answer):
    found = extract_answer(reply, OPTIONS, "letter")
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
            OPTIONS,
            "The closest match is \\boxed{D}, but this is not the correct answer: Rome is a capital, not a port.",
            (None, "no_answer"),
        ),
        # a letter that is no option (X), as a bare line, after a header, before a verdict: invalid
        (OPTIONS, "None of the four cities fits, so I mark it as X.\nX", ("X", "invalid")),
        (OPTIONS, "None of the four cities fits.\nAnswer: X\n(I could not decide.)", ("X", "invalid")),
        (OPTIONS, "None of the four cities fits, so (X) is the correct answer here, I made it up.", ("X", "invalid")),
    ],
)
def test_each_reply_is_read_with_its_status(options, reply, expected):
    """Replies whose label is not an answered letter of OPTIONS: other option texts, invalid letters,
    withdrawn statements and missing responses (mutation survivors in the extraction)."""
    found = extract_answer(reply, options, "letter")
    assert (found.answer, found.status) == expected
