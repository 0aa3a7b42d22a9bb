"""``item_table``: the rows of many runs as one table, with the columns, order and dtypes pairing relies on."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from postforget_lmeval.sources import ITEM_COLUMNS, TaskRun, item_rows, item_table


def _run(task: str, seed: int | None = 0, group: str | None = "group") -> TaskRun:
    return TaskRun(task, Path("r.json"), "2025", Path(f"{task}.jsonl"), seed, "seed", "generate_until", ("none",),
                   ("acc",), group, 3)  # fmt: skip


COLUMNS = {"doc_id": [0, 1, 2], "doc_hash": ["h0", "h1", "h2"], "correct": [1, 0, 1], "locator": [0, 5, 9],
           "answer": ["A", None, "A"], "subtask": ["s", None, "s"], "category": [None, None, "C"]}  # fmt: skip


def test_columns_order_and_dtypes():
    lists = {"option_ll": [[-1.0, -2.0], None, [-0.5, -3.0]], "replicate": [0, 1, 0], "k": [2.0, 2.0, 2.0]}
    parts = [item_rows(_run("t"), "t.jsonl", COLUMNS | lists), item_rows(_run("u", None), "u.jsonl", COLUMNS)]
    table = item_table(parts)
    assert list(table.columns) == list(ITEM_COLUMNS)
    dtypes = {name: str(dtype) for name, dtype in table.dtypes.items()}
    assert dtypes == {
        "task": "category", "subtask": "object", "category": "object", "doc_id": "int64", "doc_hash": "str",
        "replicate": "int32", "correct": "int8", "k": "float64", "answer": "object", "gold": "object",
        "status": "object", "file": "category", "locator": "int64", "seed_value": "category", "seed_num": "float64",
        "response_chars": "float64", "option_ll": "object", "cluster": "object",
    }  # fmt: skip
    assert table["doc_hash"].dtype == pd.StringDtype("pyarrow", na_value=float("nan"))  # pandas' default str
    for name in ("task", "file", "seed_value"):
        assert table[name].cat.categories.dtype == object
    assert table["task"].tolist() == ["t"] * 3 + ["u"] * 3
    assert table["file"].tolist() == ["t.jsonl"] * 3 + ["u.jsonl"] * 3
    assert table["seed_value"].tolist() == ["0"] * 3 + ["none"] * 3
    assert table["seed_num"].tolist()[:3] == [0.0] * 3 and all(math.isnan(v) for v in table["seed_num"][3:])
    assert table["option_ll"].tolist() == [[-1.0, -2.0], None, [-0.5, -3.0], None, None, None]  # lists stay elements
    assert table["replicate"].tolist() == [0, 1, 0, 0, 0, 0]  # a run without the column: 0
    assert table["k"].tolist()[:3] == [2.0] * 3 and all(math.isnan(v) for v in table["k"][3:])
    assert table["answer"].tolist() == ["A", None, "A"] * 2
    assert table["subtask"].tolist() == ["s", "t", "s", "s", "u", "s"]  # a row without one: the task
    assert table["category"].tolist() == ["group", "group", "C"] * 2  # a row without one: the run's group
    assert "correct_logged" not in table


def test_correct_logged_of_a_part_not_rescored_is_its_correct():
    rescored = item_rows(_run("t"), "t.jsonl", COLUMNS | {"correct_logged": [0, 0, 0]})
    table = item_table([rescored, item_rows(_run("u", group=None), "u.jsonl", COLUMNS)])
    assert table["correct_logged"].tolist() == [0, 0, 0, 1, 0, 1] and str(table["correct_logged"].dtype) == "int8"
    assert table["category"].tolist()[3:] == ["u", "u", "C"]  # no group: the task


def test_no_rows():
    table = item_table([])
    assert list(table.columns) == list(ITEM_COLUMNS) and len(table) == 0
    assert str(table["doc_hash"].dtype) == "str"
