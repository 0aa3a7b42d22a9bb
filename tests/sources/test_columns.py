"""Texts and Coded: the columns reading processes send back (doc_hash as one buffer, text as codes)."""

from __future__ import annotations

import hashlib
import pickle
import pickletools

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval.sources.base import Rows, TaskRun, item_rows, item_table
from postforget_lmeval.sources.columns import Coded, Texts


def _digests(n: int, salt: str = "") -> list[str]:
    return [hashlib.sha256(f"{salt}{i}".encode()).hexdigest() for i in range(n)]


def test_rows_from_strings_fixed_width_bytes_and_other_texts_keep_their_order() -> None:
    texts = Texts(["a", "", "é-ü", 7])  # a value that is not a string is kept as its str()
    fixed = Texts()
    fixed.extend_fixed("".join(_digests(3)).encode(), 64)
    texts.extend(fixed)
    texts.extend(Texts())
    texts.append("z")
    assert list(texts) == ["a", "", "é-ü", "7", *_digests(3), "z"]
    assert len(texts) == 8


def test_pickled_as_two_buffers_not_an_object_per_row() -> None:
    hashes = _digests(5000)
    packed = Texts(hashes)
    data = pickle.dumps(packed, protocol=pickle.HIGHEST_PROTOCOL)
    assert pickle.loads(data) == packed and list(pickle.loads(data)) == hashes
    opcodes = sum(1 for _ in pickletools.genops(data))  # what unpickling executes: a few steps, whatever the rows
    assert opcodes < 60
    assert sum(1 for _ in pickletools.genops(pickle.dumps(hashes, protocol=pickle.HIGHEST_PROTOCOL))) > 5000 * 2


def test_joined_is_one_str_column_over_all_parts() -> None:
    first, second = Texts(_digests(4)), Texts()
    second.extend_fixed("".join(_digests(2, "x")).encode(), 64)
    column = Texts.joined([first, ["plain", "list"], Texts(), second])
    assert column.dtype == pd.StringDtype("pyarrow", na_value=float("nan"))  # pandas' default str
    assert list(column) == [*_digests(4), "plain", "list", *_digests(2, "x")]
    # pairing compares hashes on the column as it is (no str per row): equal rows, and the one that differs
    other = Texts.joined([Texts([*_digests(4)[:3], "changed"])])
    assert (column[:4] != other).tolist() == [False, False, False, True]


@pytest.mark.parametrize("parts", [[], [Texts()], [[]]])
def test_joined_without_rows(parts: list) -> None:
    assert len(Texts.joined(parts)) == 0


def test_coded_rows_from_values_codes_and_other_columns() -> None:
    coded = Coded(["x", None, "x"])
    coded.extend_codes(np.array([1, 0, 1, 1], dtype=np.int32), ["y", "x"])  # a block of the scanner's fast path
    coded.extend(Coded(["z", None]))
    coded.extend(Coded())
    coded.append("y")
    rows = ["x", None, "x", "x", "y", "x", "x", "z", None, "y"]
    assert list(coded) == rows and coded == rows and len(coded) == 10
    assert coded.values == ["x", None, "y", "z"]  # each distinct value once, in order of first appearance
    assert Coded.joined([coded], ["fill"]).tolist() == ["fill" if v is None else v for v in rows]
    again = pickle.loads(pickle.dumps(coded, protocol=pickle.HIGHEST_PROTOCOL))
    again.append("x")
    assert list(again) == [*rows, "x"] and again.values == coded.values  # codes still index the same values
    with pytest.raises(TypeError):
        Coded([["a list"]])  # unhashable: item_rows keeps such a column as a list


def test_item_table_takes_coded_and_plain_columns_alike() -> None:
    """Text columns reach the table the same, coded (lm-eval's reader) or as lists (other sources), missing
    subtask/category filled per run."""
    run = TaskRun("t", Path("r.json"), "2025", Path("s.jsonl"), 0, "seed", "generate_until", ("none",), ("acc",),
                  "group", 3)  # fmt: skip
    columns = {"doc_id": [0, 1, 2], "doc_hash": ["h0", "h1", "h2"], "correct": [1, 0, 1], "locator": [0, 5, 9],
               "answer": ["A", None, "A"], "subtask": ["s", None, "s"], "category": [None, None, "C"]}  # fmt: skip
    coded = item_rows(run, "s.jsonl", columns)
    assert isinstance(coded.columns["answer"], Coded)
    plain = Rows(run, "s.jsonl", dict(columns))
    table = item_table([coded, plain])
    assert table["answer"].tolist() == ["A", None, "A"] * 2
    assert table["subtask"].tolist() == ["s", "t", "s"] * 2  # a row without one: the task
    assert table["category"].tolist() == ["group", "group", "C"] * 2  # a row without one: the run's group
    assert table["doc_hash"].tolist() == ["h0", "h1", "h2"] * 2
    pd.testing.assert_frame_equal(item_table([coded]), item_table([plain]))
