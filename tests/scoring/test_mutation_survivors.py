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
