"""Which row of a small keyed table each row of another table has, its keys compared as text.

The analyses key their tables like ``subtasks`` (one row per sub-benchmark and seed) and ``categories``
(one row per category): a few hundred rows. Matching them with pandas indexes (a MultiIndex per side,
``merge``) costs milliseconds of fixed overhead per call, and converting the keys of the ~80k paired
items to text is slow in pandas 3; here the small tables' keys go through a dict, and an item table's
keys are grouped first so that only their few distinct values become text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd

from postforget_lmeval.pairing import keys as key_codes


def _texts(frame: pd.DataFrame, keys: Sequence[str]) -> Iterator[tuple[str, ...]]:
    return zip(*(map(str, frame[key].tolist()) for key in keys))


def _lookup(table: pd.DataFrame, keys: Sequence[str], wanted: Iterator[tuple[str, ...]]) -> np.ndarray:
    """The position in ``table`` of each wanted tuple of key texts, -1 where none."""
    index = {key: i for i, key in enumerate(_texts(table, keys))}
    return np.array([index.get(key, -1) for key in wanted], dtype=np.int64)


def positions(table: pd.DataFrame, target: pd.DataFrame, keys: Sequence[str]) -> np.ndarray:
    """For each row of ``target``, the position of the row of ``table`` with the same ``keys`` as text, -1
    where none (``table``'s keys are unique)."""
    return _lookup(table, keys, _texts(target, keys))


def item_rows(items: pd.DataFrame, table: pd.DataFrame, keys: Sequence[str]) -> np.ndarray:
    """:func:`positions` for an item table (many rows, few distinct keys): the items' groups of equal key
    texts (:func:`keys.text_groups`) are each looked up once; -1 also where an item's key is missing."""
    groups, texts = key_codes.text_groups(items, keys)
    if not len(texts):  # no item has all its keys (or there is none)
        return np.full(len(items), -1, dtype=np.int64)
    at = _lookup(table, keys, zip(*(texts[key].tolist() for key in keys)))
    return np.where(groups < 0, -1, at[groups])
