"""The ``number`` format: a count (BBH object_counting), with no option list in the prompt."""

from __future__ import annotations

from postforget_lmeval.scoring import Extraction, extract_answer, get_format, rescore
from postforget_lmeval.scoring._options import options_of
from postforget_lmeval.scoring._reading import HEDGE
from postforget_lmeval.scoring.formats.number import canonical_number, count_letter, letter_count

NUMBER = get_format("number")
COUNTS = [str(n) for n in range(19)]
OPTIONS = options_of(COUNTS)


def test_wording_chance_and_no_option_list() -> None:
    assert NUMBER.instruction.startswith('On the very last line, write exactly "Answer: $NUMBER" (e.g. "Answer: 7")')
    assert not NUMBER.lettered
    assert NUMBER.chance_k(19) == 19.0


def test_reads_integers_number_words_and_equations() -> None:
    read = NUMBER.parser.read
    assert read("7 objects", OPTIONS) == "7"
    assert read("Seven", OPTIONS) == "7"
    assert read("07", OPTIONS) == "7" and read("7.0", OPTIONS) == "7"
    assert read("2 + 3 + 2 = 7", OPTIONS) == "7"
    assert read("7 or 8", OPTIONS) == HEDGE
    assert read("B", OPTIONS) is None
    assert canonical_number("−3") == "-3" and canonical_number("7.5") == "7.5"


def test_bare_line_is_a_number_alone() -> None:
    assert NUMBER.parser.bare("twelve", OPTIONS, False) == "12"
    assert NUMBER.parser.bare("12 apples", OPTIONS, False) is None


def test_valid_counts_are_the_options_or_any_integer_without_options() -> None:
    assert NUMBER.parser.valid("18", OPTIONS) and not NUMBER.parser.valid("19", OPTIONS)
    assert extract_answer("Answer: 19", COUNTS, "number") == Extraction("19", "invalid")
    assert extract_answer("Answer: 42", [], "number") == Extraction("42", "answered")


def test_count_statements_are_read_for_numbers_only() -> None:
    reply = "I listed every object.\nIn total, there are 7 objects."
    assert extract_answer(reply, COUNTS, "number") == Extraction("7", "answered")
    assert extract_answer(reply, ["6", "7"], "letter") == Extraction(None, "no_answer")


def test_lighteval_counts_are_letters_shifted_by_one() -> None:
    assert [count_letter(gold) for gold in ("1", "7", "19", "0", "27", "x")] == ["A", "G", "S", "", "", ""]
    assert [letter_count(letter) for letter in ("A", "G", "S")] == ["1", "7", "19"]
    assert NUMBER.lighteval.gold_letters is count_letter and NUMBER.lighteval.answer is letter_count
    assert rescore("So there are seven. Answer: G", COUNTS, "7", "number", "lighteval").correct == 1
