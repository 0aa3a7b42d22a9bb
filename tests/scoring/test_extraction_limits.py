"""The extractor's stated limits, each at its boundary: how far it looks, not what a reader would say.

The cost limits (the last 64 occurrences of a keyword, a payload of 200 characters, four skipped
lines at an edge of the reply, the thinking's last 800 characters) and the 40 characters that may
precede a marker on its line decide some readings: a reply just inside a limit is read, the same
reply just beyond it is not. Each case is worked out by hand from the limit; the pair shows where
it lies. They were mutation survivors in the extraction.
"""

from __future__ import annotations

import pytest

from postforget_lmeval.scoring.extraction import extract_answer

OPTIONS = ["Lyon", "Marseille", "Paris", "Rome"]
RECHECK = "Let me double-check the answer.\n"  # "answer" in running text: tried, and no marker


@pytest.mark.parametrize(("rechecks", "expected"), [(63, ("B", "answered")), (64, (None, "no_answer"))])
def test_only_the_last_64_occurrences_of_a_keyword_are_tried(rechecks, expected):
    """ "Answer: B" then a loop of "answer" in running text: with 63 repeats "Answer: B" is the 64th
    occurrence of "answer" from the end and is read; with 64 it is the 65th and is never tried, and no
    other rule reads the reply (its edge lines are no answer)."""
    found = extract_answer("Answer: B\n" + RECHECK * rechecks, OPTIONS, "letter")
    assert (found.answer, found.status) == expected


CLOSING = "Let me reason about the ports.\nSo the most likely city is (D)."


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # the closing statement with three empty code-fence lines after it: read (rule 4)
        (CLOSING + "\n```\n```\n```", ("D", "answered")),
        # with four after it, the closing line is beyond the lines looked at
        (CLOSING + "\n```\n```\n\n```", (None, "no_answer")),
        # the same at the start: a first line "C) Paris" (rule 3) after three or four fence lines
        ("```\n```\n```\nC) Paris\nIt is the capital of France.", ("C", "answered")),
        ("```\n```\n\n```\nC) Paris\nIt is the capital of France.", (None, "no_answer")),
    ],
)
def test_an_edge_line_is_looked_for_a_few_lines_in(reply, expected):
    """The last (first) non-blank line is looked for among the four lines nearest that edge of the reply
    (a fifth only when the reply has no more lines): four blank or fence lines before it put it out of reach."""
    found = extract_answer(reply, OPTIONS, "letter")
    assert (found.answer, found.status) == expected


REASON = "Paris has been the capital of France since the tenth century"  # 60 characters


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (f"C, because {REASON}", ("C", "answered")),
        # 11 + 4 * 60 + 3 * 2 = 257 characters: the closing brace lies beyond the 200 characters a payload may have
        (f"C, because {REASON}; {REASON}; {REASON}; {REASON}", (None, "no_answer")),
    ],
)
def test_a_box_closes_within_the_payload(content, expected):
    """A box is read only when its closing brace is within 200 characters; the long box is then no box,
    and no other rule reads the line ("C," is no bare answer)."""
    found = extract_answer("\\boxed{" + content + "}", OPTIONS, "letter")
    assert (found.answer, found.status) == expected


PORT = "Marseille is the largest port on the Mediterranean coast of France. "  # 68 characters


@pytest.mark.parametrize(
    ("ports", "expected"),
    [
        (10, ("B", "answered")),  # 17 + 10 * 68 = 697 characters
        # 17 + 12 * 68 = 833 characters: the line's start is beyond the last 800 characters of the thinking
        (12, (None, "unfinished")),
    ],
)
def test_the_thinking_is_read_in_its_last_800_characters(ports, expected):
    """An unclosed thinking whose last line opens with "Answer: B" is read when that line starts within
    the thinking's last 800 characters; when the line is longer, its start is cut off and the rest
    opens with no marker: unfinished."""
    reply = "<think>Let me weigh the cities.\nAnswer: B, since " + PORT * ports
    found = extract_answer(reply, OPTIONS, "letter")
    assert (found.answer, found.status) == expected


@pytest.mark.parametrize(
    ("lead", "expected"),
    [
        ("#### **So, therefore, the final correct ", ("B", "answered")),  # 40 characters
        ("#### ***So, therefore, the final correct ", (None, "no_answer")),  # 41 characters
    ],
)
def test_at_most_40_characters_may_precede_a_header(lead, expected):
    """A header whose answer is on the next line opens its line: only markdown and words like "final",
    at most 40 characters, precede the marker. At 41 the marker is in running text and its line holds
    no answer after it; no other rule reads the reply."""
    reply = f"Let me think it over.\n{lead}Answer:**\n\nB\nMarseille is the second city of France, so it fits."
    found = extract_answer(reply, OPTIONS, "letter")
    assert (found.answer, found.status) == expected


@pytest.mark.parametrize("letter", ["C", "X"])
def test_a_letter_after_da_an_without_separator_is_running_text(letter):
    """ "答案" (answer) with a letter after it but no "：", "是", "为" or "】" is no marker (rule 1 lists
    "答案：X" and "【答案】X"), and no other rule reads the reply, whether the letter is an option or not."""
    found = extract_answer(f"分析：四个城市都不符合。\n答案 {letter}\n(不确定)", OPTIONS, "letter")
    assert (found.answer, found.status) == (None, "no_answer")
