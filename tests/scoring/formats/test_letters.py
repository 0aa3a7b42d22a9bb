"""The ``letters`` format: every correct option letter, in alphabetical order."""

from __future__ import annotations

from postforget_lmeval.scoring import Extraction, extract_answer, get_format, rescore
from postforget_lmeval.scoring._options import options_of
from postforget_lmeval.scoring._reading import HEDGE

LETTERS_FORMAT = get_format("letters")
CITIES = ["Lyon", "Marseille", "Paris", "Nice"]
OPTIONS = options_of(CITIES)


def test_wording_and_chance_over_every_non_empty_subset() -> None:
    assert '"Answer: $LETTERS", every correct letter in alphabetical order' in LETTERS_FORMAT.instruction
    assert LETTERS_FORMAT.lettered
    assert [LETTERS_FORMAT.chance_k(n) for n in (1, 2, 3, 4)] == [1.0, 3.0, 7.0, 15.0]


def test_reads_a_list_of_letters() -> None:
    read = LETTERS_FORMAT.parser.read
    assert read("A, C", OPTIONS) == "AC"
    assert read("C and A", OPTIONS) == "AC"
    assert read("A、C、D", OPTIONS) == "ACD"
    assert read("(b) (d)", OPTIONS) == "BD"
    assert read("NONE", OPTIONS) is None  # a word, not letters written together
    assert read("A or C", OPTIONS) == HEDGE


def test_bare_line_may_hold_several_letters() -> None:
    assert LETTERS_FORMAT.parser.bare("AC", OPTIONS, False) == "AC"
    assert LETTERS_FORMAT.parser.valid("AD", OPTIONS) and not LETTERS_FORMAT.parser.valid("AE", OPTIONS)


def test_the_whole_set_is_needed_to_be_correct() -> None:
    assert extract_answer("Answer: A、C", CITIES, "letters") == Extraction("AC", "answered")
    assert extract_answer("Answer: A、C", CITIES, "letter") == Extraction(None, "no_answer")  # a hedge there
    assert rescore("Answer: A", CITIES, "AC", "letters", "strict").correct == 0
    assert rescore("Answer: A, C", CITIES, "AC", "letters", "strict").correct == 1
    # LightEval reads one letter, correct when it is any gold letter
    assert rescore("Answer: A", CITIES, "AC", "letters", "lighteval").correct == 1
