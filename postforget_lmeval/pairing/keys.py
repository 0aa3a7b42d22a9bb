"""Integer codes for the key columns of the item tables (sub-benchmark, seed, doc_id, ...), made cheaply.

pandas 3 hashes text slowly, and the item tables have few distinct keys in long runs: a side table
lists each run's items together, and the joined table is sorted by its key. So the rows that start
a run are all that ``unique``, ``drop_duplicates`` or ``pd.factorize`` need to see, and several
integer columns fused into one int64 make a join or duplicate test one pass over integers.

The analyses group the paired items by (sub-benchmark, seed) many times and key their tables by the
text of those keys: :func:`text_groups` numbers the groups as ``frame.astype(str).groupby(keys,
sort=True)`` orders them, converting only the few distinct values to text.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

_LIMIT = 2**62  # fused keys stay below this (int64, with room to spare)


def starts(*columns: np.ndarray) -> np.ndarray:
    """Rows whose value differs from the previous row's in any column (the first row always).

    Every first occurrence of a distinct tuple is among them, so ``frame[starts(...)]`` has the same
    ``drop_duplicates``/``unique`` as the frame, in the same order (NaN, unequal to itself, only
    starts more rows).
    """
    mask = np.zeros(len(columns[0]), dtype=bool)
    mask[:1] = True
    for col in columns:  # numpy arrays, or pandas arrays (whose != may be missing where a value is: a start)
        differs = col[1:] != col[:-1]
        mask[1:] |= differs if isinstance(differs, np.ndarray) else differs.to_numpy(dtype=bool, na_value=True)
    return mask


def factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``pd.factorize(values)`` (codes in order of first appearance, -1 for missing) hashing only run starts."""
    first = starts(values)
    codes, uniques = pd.factorize(values[first])
    return codes[np.cumsum(first) - 1], uniques


def unique(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` (sorted uniques, each row's index in them) for values
    without missing ones, sorting only the distinct values."""
    codes, uniques = factorize(values)
    order = np.argsort(uniques)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return uniques[order], rank[codes]


def categorical(values: np.ndarray) -> pd.Categorical:
    """``pd.Categorical(values)`` (sorted categories of pandas' own dtype) built from the run starts."""
    first = starts(values)
    return pd.Categorical(values[first])[np.cumsum(first) - 1]


def fused(*columns: np.ndarray) -> np.ndarray:
    """One int64 per row for the tuple of its integer ``columns``: equal tuples, equal keys; ordered like
    the tuples (lexicographically), so sorting the keys sorts the rows by the columns in turn."""
    n = len(columns[0])
    key, size = np.zeros(n, dtype=np.int64), 1
    for col in columns:
        col, span = _ranks(np.asarray(col, dtype=np.int64))
        if size * span >= _LIMIT:  # renumber the tuples so far (their order kept) to make room
            uniques, key = np.unique(key, return_inverse=True)
            size = len(uniques)
        key, size = key * span + col, size * span
    return key


def _ranks(col: np.ndarray) -> tuple[np.ndarray, int]:
    """Order-preserving codes from 0 and how many there can be: offsets where the range is small, else ranks."""
    if not len(col):
        return col, 1
    low, high = int(col.min()), int(col.max())
    if high - low < 2**31:
        return col - low, high - low + 1
    uniques, ranks = np.unique(col, return_inverse=True)
    return ranks.astype(np.int64), len(uniques)


def varies_within(groups: np.ndarray, values: np.ndarray | pd.api.extensions.ExtensionArray) -> bool:
    """Whether some group (rows of equal ``groups`` key) holds a value unequal to its first row's: a cheap
    screen before an exact pandas test, as missing values count here (NaN is unequal to itself). ``values``:
    a numpy array, or a pandas array compared as it is (an Arrow string column on its buffers)."""
    codes = pd.factorize(groups)[0]  # numbered in order of first appearance: a first row has a new highest code
    first = codes > np.r_[-1, np.maximum.accumulate(codes)[:-1]]
    later = ~first
    return bool((values[later] != values[np.flatnonzero(first)[codes[later]]]).any())


def text_groups(frame: pd.DataFrame, keys: Sequence[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """(group number of every row, -1 where a key is missing; the groups' keys as text, one row per group).

    Groups are numbered in the sorted order of their keys' text; the key frame has one ``str`` column
    per key and row ``i`` is group ``i``.
    """
    code = np.zeros(len(frame), dtype=np.int64)  # the keys' text ranks, fused: key by key, as digits
    missing = np.zeros(len(frame), dtype=bool)
    texts = []
    for key in keys:
        values, uniques = pd.factorize(frame[key])
        rank, text = pd.factorize(pd.Index(uniques).astype(str), sort=True)  # equal texts: one rank
        code = code * len(text) + np.append(rank, 0)[values]  # a missing key (-1) counts as 0 here
        missing |= values < 0
        texts.append(text)
    seen, distinct = pd.factorize(code[~missing])  # hashing; then only the few distinct codes are sorted
    order = np.argsort(distinct)
    number = np.empty_like(order)
    number[order] = np.arange(len(order))
    groups = np.full(len(frame), -1, dtype=np.int64)
    groups[~missing] = number[seen]
    columns, rest = {}, distinct[order]
    for key, text in zip(reversed(keys), reversed(texts)):  # the last key's ranks are the lowest digits
        rest, rank = np.divmod(rest, len(text))
        columns[key] = text.take(rank)
    return groups, pd.DataFrame({key: columns[key] for key in keys})
