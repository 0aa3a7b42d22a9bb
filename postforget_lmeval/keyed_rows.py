"""Which row of a small keyed table each row of another table has, its keys compared as text.

The analyses key their tables like ``subtasks`` (one row per sub-benchmark and seed) and ``categories``
(one row per category): a few hundred rows. Matching them with pandas indexes (a MultiIndex per side,
``merge``) costs milliseconds of fixed overhead per call, and converting the keys of the ~80k paired
items to text is slow in pandas 3; here the small tables' keys go through a dict, and an item table's
keys are factorized first so that only their few distinct values become text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd

from postforget_lmeval import keys as key_codes


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
    """:func:`positions` for an item table (many rows, few distinct keys, listed run by run): each distinct
    tuple of keys is converted to text and looked up once; -1 also where an item's key is missing."""
    code = np.zeros(len(items), dtype=np.int64)  # the keys' codes, fused: key by key, as digits
    missing = np.zeros(len(items), dtype=bool)
    uniques = []
    for key in keys:
        values, distinct = pd.factorize(items[key])
        code = code * max(len(distinct), 1) + np.maximum(values, 0)
        missing |= values < 0
        uniques.append(np.asarray(distinct, dtype=object))
    if missing.all():  # no item has all its keys (or there is none)
        return np.full(len(items), -1, dtype=np.int64)
    seen, fused = key_codes.factorize(code)
    texts, rest = [], fused
    for distinct in reversed(uniques):  # the last key's codes are the lowest digits
        rest, at = np.divmod(rest, max(len(distinct), 1))
        texts.append(map(str, distinct[at].tolist()))
    return np.where(missing, -1, _lookup(table, keys, zip(*reversed(texts)))[seen])
