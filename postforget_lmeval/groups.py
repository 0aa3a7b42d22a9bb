"""Groups of rows by key columns compared as text, numbered with integer codes for numpy reductions.

The analyses group ~80k paired items by (sub-benchmark, seed) many times and key their tables by
the text of those keys. Grouping on ``astype(str)`` columns is the slow way in pandas 3 (it builds a
pyarrow string per row); the key columns of the samples are categorical, so :func:`text_groups`
factorises each column once and converts only its few distinct values to text. The groups come out
numbered and ordered exactly as ``frame.astype(str).groupby(keys, sort=True)`` orders them (rows with
a missing key in no group), so per-group results are ``np.bincount`` or one groupby on the codes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


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
