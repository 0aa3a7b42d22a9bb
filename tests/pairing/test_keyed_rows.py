"""keyed_rows: rows matched by their keys as text, as a merge on ``astype(str)`` keys would match them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from postforget_lmeval.pairing.keyed_rows import item_rows, positions

TABLE = pd.DataFrame({"subtask": ["b", "a", "a"], "seed": ["0", "0", "1"], "x": [1.0, 2.0, 3.0]})


def _by_merge(items: pd.DataFrame) -> np.ndarray:
    """The reference: a left merge on the keys as text (pandas keeps the left order)."""
    table = TABLE.assign(position=np.arange(len(TABLE)))[["subtask", "seed", "position"]]
    keys = items[["subtask", "seed"]].astype(str)
    got = keys.merge(table, on=["subtask", "seed"], how="left")["position"]
    return got.fillna(-1).to_numpy(dtype=np.int64)


def test_positions_match_as_text() -> None:
    target = pd.DataFrame({"subtask": ["a", "c", "b", "a"], "seed": [1, 0, 0, 0]})  # integer seeds: "1", "0"
    assert positions(TABLE, target, ["subtask", "seed"]).tolist() == [2, -1, 0, 1]
    assert positions(TABLE, target.iloc[:0], ["subtask", "seed"]).tolist() == []


def test_item_rows_equal_a_merge_on_text_keys() -> None:
    rng = np.random.default_rng(0)
    n = 500
    items = pd.DataFrame({
        "subtask": pd.Categorical(rng.choice(["a", "b", "c"], n)),
        "seed": rng.choice([0, 1, 2], n),
    })  # fmt: skip
    assert (item_rows(items, TABLE, ["subtask", "seed"]) == _by_merge(items)).all()
    with_missing = items.assign(subtask=items["subtask"].astype(object).where(rng.random(n) > 0.2, None))
    got = item_rows(with_missing, TABLE, ["subtask", "seed"])
    assert (got[with_missing["subtask"].isna().to_numpy()] == -1).all()
    assert (got[with_missing["subtask"].notna().to_numpy()] == _by_merge(items)[with_missing["subtask"].notna()]).all()


def test_item_rows_without_items_or_keys() -> None:
    assert item_rows(TABLE.iloc[:0], TABLE, ["subtask", "seed"]).tolist() == []
    none = pd.DataFrame({"subtask": [None, None], "seed": ["0", "1"]})
    assert item_rows(none, TABLE, ["subtask", "seed"]).tolist() == [-1, -1]
