"""The words that introduce an answer: explicit markers (rule 1) and prose statements (rule 2).

Each marker is ``(literal, pattern, lookback)``: extraction finds the literal with ``str.rfind`` in
the lowercased reply, backwards from the end, matches the pattern there, and counts the match only
where ``lookback`` (if any) matches the text just before it. An answer format lists the prose
statements it reads (its parser's ``prose``); the explicit markers are read for every format.
"""

from __future__ import annotations

import re

Marker = tuple[str, re.Pattern[str], "re.Pattern[str] | None"]

# "：" is the full-width colon of Chinese text.
BOXED = re.compile(r"\\boxed[ \t]*\{")
# A word that makes "option:" name the chosen option ("**Correct Option:** [ B ]"), not a list.
_CHOSEN = re.compile(r"(?:correct|right|best|final|chosen|selected|my|answer)[ \t*_]*$")
_OPTION_MARK = r"s?(?![a-z0-9_])[ \t]*[*_]*[ \t]*(?P<sep>[:：])"
MARKS: tuple[Marker, ...] = (
    # "answer" with a colon, ending its line (a header) or before a bracket ("answer (F)."): the
    # regex rejects "answer" in running text before any closer look.
    (
        "answer",
        re.compile(r"answers?(?![a-z0-9_])(?:[ \t]*[*_]*[ \t]*(?P<sep>[:：])|(?=[ \t*_#]*(?:\n|$))|(?=[ \t]*[(\[]))"),
        None,
    ),
    ("答案", re.compile(r"答案[ \t]*(?P<sep>[:：]|是|为|】)?"), None),  # 【答案】 is the GAOKAO header
    ("\\boxed", BOXED, None),
    ("option", re.compile("option" + _OPTION_MARK), _CHOSEN),
    ("choice", re.compile("choice" + _OPTION_MARK), _CHOSEN),
)
"""Rule 1's explicit markers."""

ECHOED = re.compile(
    r"(?:write[ \t]+exactly|(?:in|of)[ \t]+the[ \t]+form(?:at)?|e\.g\.|for[ \t]+(?:example|instance)"
    r"|such[ \t]+as|(?<![a-z])like)[ \t,:(]*[\"'“‘`][ \t*_]*$"
)
"""What precedes, in lowercased text, a marker that opens a quote in an instruction or its example
(``write exactly "Answer: 20"``, ``(e.g. "Answer: 7")``): a model echoing the prompt's format
instruction, not committing to an answer. Searched with the end at the marker."""

BRACKETED_ONLY = re.compile(r"[ \t]*(?:\([ \t]*[A-Za-z][ \t]*\)|\[[ \t]*[A-Za-z][ \t]*\])[ \t*_]*[.!]?[ \t*_]*$")
"""After "answer" without "is" or a colon ("or answer (F)."): only a bracketed letter closing the line."""

_VERB = (
    r"(?:is|are|(?:would|should|must|will|could|might|has[ \t]+to)[ \t]+be|(?:seems?|appears?)[ \t]+to[ \t]+be)"
    r"(?![a-z])"
)
# Words that qualify a statement without withdrawing it: "the answer is most likely (C)",
# "the answer is closest to D". A hedge that follows ("(A) or (D)") is still a hedge.
_QUALIFIERS = (
    r"(?:[ \t]+(?:therefore|thus|clearly|definitely|indeed|likely|probably|most|closest|close|nearest"
    r"|to|be|then|still|simply|actually|certainly|obviously|either))*"
)
# An adjective that makes "option is" a choice: "the only remaining option is (G)".
_CHOICE_WORD = re.compile(
    r"(?:correct|right|best|only|remaining|final|likely|appropriate|plausible|suitable|accurate|reasonable"
    r"|closest|nearest|intended|possible|valid)[ \t]+$"
)
STATEMENTS: tuple[Marker, ...] = (
    (
        "answer",
        # "the answer that doesn't fit the description is (C)": a short relative clause may intervene.
        re.compile(
            rf"answers?(?:[ \t]+(?:that|which|to|for)[^.\n!?:;]{{0,60}}?)?[ \t]+{_VERB}{_QUALIFIERS}[ \t]*[:：]?"
        ),
        None,
    ),
    *(
        (word, re.compile(rf"{word}s?[ \t]+(?:is|are)(?![a-z]){_QUALIFIERS}[ \t]*[:：]?"), _CHOICE_WORD)
        for word in ("option", "choice", "letter")
    ),
    # Chinese: "故选C", "应选 B", "正确选项是C"
    *((word, re.compile(rf"{word}[ \t]*[:：]?"), None) for word in ("故选", "应选")),
    ("选项", re.compile(r"选项(?:是|为)[ \t]*[:：]?"), re.compile(r"(?:正确|最佳)的?$")),
)
"""Rule 2's statements of the answer, every format's: the answer follows, on the line or the next."""
STATEMENT_PATTERNS = frozenset(pattern for _, pattern, _ in STATEMENTS)

# "D is the correct answer.", "This makes (E) the correct answer.": the letter comes first.
# ("the only option" alone describes, "the only possible option" chooses)
VERDICT = re.compile(
    r"(?:(?:correct|right|best)(?:[ \t]+(?:possible|remaining|valid|viable|plausible))?"
    r"|only[ \t]+(?:possible|remaining|valid|viable|plausible|correct|right))[ \t]+(?:answer|option|choice)(?![a-z])"
)
VERDICTS: tuple[Marker, ...] = tuple((word, VERDICT, None) for word in ("correct", "right", "best", "only"))
"""Statements that name their letter before them (one-letter items)."""
_SUBJECT_LETTER = r"(\([ \t]*[A-Z][ \t]*\)|\[[ \t]*[A-Z][ \t]*\]|(?<![A-Za-z0-9])[A-Z])[*_]*"
VERDICT_SUBJECT = re.compile(
    rf"(?:{_SUBJECT_LETTER}[ \t]+(?:is|was|remains|(?:would|must|should)[ \t]+be|seems[ \t]+to[ \t]+be)"
    rf"|(?<![a-z])(?:makes|making|make|leaves|leaving)[ \t]+{_SUBJECT_LETTER}(?:[ \t]+as)?)[ \t]+the[ \t]+$"
)
"""The letter a verdict is about, just before it."""

# "The statement that is NOT true is:" with the answer alone on the next line ("C. <its text>").
INTRO = re.compile(r"(?:is|are)[:：][ \t*_]*(?=\n|$)")
INTROS: tuple[Marker, ...] = tuple((literal, INTRO, None) for literal in ("is:", "are:", "is：", "are："))
"""Statements ending in "is:" whose next line is the answer alone."""
