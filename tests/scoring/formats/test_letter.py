"""The ``letter`` format: one option letter; rules 4 and 5 apply to it alone."""

from __future__ import annotations

from postforget_lmeval.scoring import Extraction, extract_answer, get_format
from postforget_lmeval.scoring._options import options_of
from postforget_lmeval.scoring._reading import HEDGE
from postforget_lmeval.scoring.formats.letter import closing_statement, whole_option

LETTER = get_format("letter")
CITIES = ["Lyon", "Marseille", "Paris", "Nice"]
OPTIONS = options_of(CITIES)


def test_wording_chance_and_options_shown() -> None:
    assert LETTER.instruction.startswith('On the very last line, write exactly "Answer: $LETTER" (e.g. "Answer: B")')
    assert LETTER.lettered
    assert LETTER.chance_k(4) == 4.0 and LETTER.chance_k(2) == 2.0


def test_reads_one_letter_and_calls_two_a_hedge() -> None:
    read = LETTER.parser.read
    assert read("B because it is the capital", OPTIONS) == "B"
    assert read("(c)", OPTIONS) == "C"
    assert read("C Paris", OPTIONS) == "C"
    assert read("A good approach", OPTIONS) is None  # an article
    assert read("(A) or (D)", OPTIONS) == HEDGE
    assert read("A, C", OPTIONS) == HEDGE


def test_bare_line_is_one_letter_or_the_first_lines_letter_and_text() -> None:
    bare = LETTER.parser.bare
    assert bare("B", OPTIONS, False) == "B"
    assert bare("AC", OPTIONS, False) is None
    assert bare("C) Paris", OPTIONS, True) == "C"
    assert bare("C) Paris", OPTIONS, False) is None
    assert bare("C) Lyon", OPTIONS, True) is None


def test_valid_letters_are_the_items_options() -> None:
    assert LETTER.parser.valid("D", OPTIONS) and not LETTER.parser.valid("E", OPTIONS)
    assert extract_answer("Answer: E", CITIES) == Extraction("E", "invalid")


def test_closing_statement_and_whole_option() -> None:
    assert closing_statement("", "Therefore the most likely city is (E).", OPTIONS) == "E"
    assert closing_statement("", "So the answer is K.", OPTIONS) is None  # not an option letter
    assert closing_statement("", "Therefore, option C is correct.", OPTIONS) == "C"
    assert closing_statement("", "The largest port of the four is Marseille.", OPTIONS) == "B"
    assert whole_option("Paris", "Paris", OPTIONS) == "C"
    assert whole_option("Paris is lovely in spring", "", OPTIONS) is None
    assert LETTER.parser.fallbacks == (closing_statement, whole_option)


def test_only_one_letter_items_read_a_closing_statement() -> None:
    reply = "Lyon is inland and Nice is small.\nThe largest port of the four is Marseille."
    assert extract_answer(reply, CITIES, "letter") == Extraction("B", "answered")
    assert extract_answer(reply, CITIES, "letters") == Extraction(None, "no_answer")


def test_lighteval_takes_letters_as_written() -> None:
    assert LETTER.lighteval.gold_letters("C") == "C" and LETTER.lighteval.answer("C") == "C"
