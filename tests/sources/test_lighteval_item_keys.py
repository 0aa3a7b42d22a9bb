"""Which LightEval row pairs with which: the item's whole text is its key, not only what follows "Question:".

On LightEval 0.13's own details (``tests/fixtures/lighteval/v0_13``, a base model's few-shot queries before, the
instruct model's chat queries after) with the capitals rows changed: one item asked twice, of two different
stories (as MCTest asks the same question of many stories), each story's instruction holding its story as the
paper's MCTest prompt does. Before, the story was left out of the key and repeats were numbered in file order, so
an after side listing the two in the other order swapped them: a fake 1->0 and a fake 0->1.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from postforget_lmeval import pair
from postforget_lmeval.sources._lighteval_items import context_of, keys, parse_query
from tests.helpers import paths

FIXTURE = paths.FIXTURES / "lighteval" / "v0_13"
INSTRUCTION = "Answer questions about invented countries."
QUESTION = "What is the capital of Oskelan?"
STORIES = {"Ana": 1, "Ben": 0}  # story -> correct, on both sides


def _told(row: dict, story: str) -> dict:
    """``row`` asked of ``story``: the story follows the instruction, in the query and the rendered prompt."""
    doc = dict(row["doc"], query=row["doc"]["query"].replace(INSTRUCTION, f"{INSTRUCTION}\n\nStory: {story}", 1))
    return dict(row, doc=doc, metric={"extractive_match": float(STORIES[story])})


def _stories(root: Path, order: list[str], where: dict[tuple[str, int], str]) -> None:
    """Every capitals details file under ``root``: the row asking QUESTION replaced by one per story, in ``order``;
    ``where`` gets each story's (file, row)."""
    for path in root.rglob("details_synth_reasoning_letter:capitals*.parquet"):
        table = pq.read_table(path)
        rows = table.to_pylist()
        (at,) = [i for i, r in enumerate(rows) if parse_query(r["doc"]["query"])[0] == QUESTION]
        rows[at : at + 1] = [_told(rows[at], story) for story in order]
        where.update({(str(path), at + n): story for n, story in enumerate(order)})
        pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)


def test_one_question_asked_of_two_stories_pairs_story_with_story_in_any_order(tmp_path):
    where: dict[tuple[str, int], str] = {}
    for side, order in (("before", ["Ana", "Ben"]), ("after", ["Ben", "Ana"])):
        shutil.copytree(FIXTURE / side, tmp_path / side)
        _stories(tmp_path / side, order, where)
    samples = pair(tmp_path / "before", tmp_path / "after", analyses=False).samples
    told = [
        (where.get((str(r.file_before), r.locator_before)), where.get((str(r.file_after), r.locator_after)),
         r.before, r.after)
        for r in samples.itertuples() if (str(r.file_before), r.locator_before) in where
    ]  # fmt: skip
    assert sorted(told) == [("Ana", "Ana", 1, 1)] * 2 + [("Ben", "Ben", 0, 0)] * 2  # seeds 0 and 1


def test_an_item_repeated_word_for_word_keeps_both_rows_each_paired(tmp_path):
    """Two rows with the same whole text cannot be told apart: both are kept, numbered in file order, not collapsed
    into one (as the side table's duplicate check would, were they given one key)."""
    counts = {}
    for side in ("before", "after"):
        shutil.copytree(FIXTURE / side, tmp_path / side)
        for path in (tmp_path / side).rglob("details_synth_reasoning_letter:capitals*.parquet"):
            table = pq.read_table(path)
            rows = table.to_pylist()
            pq.write_table(pa.Table.from_pylist([*rows, rows[0]], schema=table.schema), path)
            counts[side] = len(rows) + 1
    result = pair(tmp_path / "before", tmp_path / "after", analyses=False)
    capitals = result.samples[result.samples["subtask"] == "synth_reasoning_letter:capitals"]
    assert capitals.groupby("seed").size().tolist() == [counts["before"]] * 2 == [5, 5]
    assert not [w for w in result.warnings if "duplicate" in w]


def _row(query: str, choices: tuple[str, ...] = (" A", " B"), gold: str = "A") -> dict:
    """One details row as ``_lighteval_details`` hands it to ``keys`` (the paper's tasks log letters as choices)."""
    return {"query": query, "choices": list(choices), "gold": gold}


def test_items_differing_only_in_their_question_or_their_options_keep_their_keys_in_any_order():
    red = _row("Question: Which is red?\nA) apple\nB) sky\nAnswer:")
    blue = _row("Question: Which is blue?\nA) apple\nB) sky\nAnswer:")
    cherry = _row("Question: Which is red?\nA) cherry\nB) sky\nAnswer:")
    xylo = _row("Question: Which is red?\nA) Xapple\nB) sky\nAnswer:")
    forward, backward = keys([red, blue, cherry, xylo]), keys([xylo, cherry, blue, red])
    assert [k[0] for k in forward] == [k[0] for k in reversed(backward)]
    assert len({k[0] for k in forward}) == 4


def test_the_context_is_the_text_before_the_first_question_spacing_collapsed_format_lines_left_out():
    query = (
        "Story:\n\n  Ana   went home.\nOn the very last line write the letter.\nOn the very last line, nothing else."
        "\nQuestion: Who went home?\nA) Ana\nB) Ben\nAnswer:"
    )
    assert context_of(query) == "Story: Ana went home."


def test_quotes_around_an_option_change_neither_the_key_nor_the_hash():
    ((quoted_id, _, quoted, quoted_hash),) = keys([_row('Question: Is it?\nA) "yes"\nB) no\nAnswer:')])
    ((plain_id, _, plain, plain_hash),) = keys([_row("Question: Is it?\nA) yes\nB) no\nAnswer:")])
    assert (quoted, plain) == (['"yes"', "no"], ["yes", "no"])
    assert (quoted_id, quoted_hash) == (plain_id, plain_hash)
    x_gold, i_gold = (k[3] for k in keys([_row("Question: Which?\nA) Xi\nB) i\nAnswer:", gold=g) for g in "AB"]))
    assert x_gold != i_gold  # only the gold differs: the hash check refuses joining one with the other


def test_a_gold_letter_past_the_options_is_hashed_as_the_letter():
    """BBH's object counting shows fewer options than its answer letters: the gold is kept as its letter."""
    query = "Question: How many?\nA) one\nB) two\nAnswer:"
    (c,), (d,), (b,) = (keys([_row(query, gold=g)]) for g in "CDB")
    assert c[0] == d[0] == b[0]
    assert len({c[3], d[3], b[3]}) == 3


def test_option_texts_logged_as_choices_are_the_options_only_when_the_query_lists_none():
    bare = "Question: Capital of France?\nAnswer:"
    listed = "Question: Capital of France?\nA) Paris\nB) Rome\nAnswer:"
    options = [
        keys([_row(q, choices=c)])[0][2]
        for q, c in [(bare, (" Paris ", " Rome")), (bare, (" 10", "12")), (bare, (" A", " B")),
                     (listed, ("Lyon", "Nice"))]
    ]  # fmt: skip
    assert options == [["Paris", "Rome"], ["10", "12"], [], ["Paris", "Rome"]]


def test_each_repeat_of_a_whole_item_gets_its_own_doc_id():
    row = _row("Question: Which is red?\nA) apple\nB) sky\nAnswer:")
    assert len({doc_id for doc_id, *_ in keys([row, row, row])}) == 3
