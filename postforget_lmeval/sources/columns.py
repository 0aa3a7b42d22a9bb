"""Per-row columns in the forms a reading process sends back: :class:`Texts` and :class:`Coded`.

A reading process returns each run's rows pickled, and the main process rebuilds them. As lists of
Python objects that cost one object per row on both ends (bench pair, 158,400 rows: the doc_hash
strings alone took 36 ms to pickle and 27 to rebuild), plus, for the columns with few distinct values,
a pass to make equal values one object. So:

* :class:`Texts` (doc_hash: a distinct string per row) keeps the strings' UTF-8 bytes back to back with
  the end of each: two buffers that pickle as they are; :meth:`Texts.joined` makes the item table's
  column an Arrow string array on those bytes, with no ``str`` per row (pairing only compares hashes,
  which Arrow does on the buffers);
* :class:`Coded` (answer, gold, status, subtask, category: a few distinct values per run) keeps each
  row's code into the distinct values; the scanner's fast path hands it whole blocks of codes, and
  :meth:`Coded.joined` makes the item table's object column with one ``take``.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # imported where a table is built: readers start without pandas
    import pandas as pd


class Texts:
    """Strings, one per row: their UTF-8 bytes in ``data``, the offset just past each one in ``ends``."""

    __slots__ = ("data", "ends")

    def __init__(self, values: Iterable[Any] = ()) -> None:
        self.data = bytearray()
        self.ends = array("q")
        self.extend(values)

    def append(self, value: Any) -> None:
        """One row; a value that is not a string is kept as its ``str()``."""
        self.data += (value if isinstance(value, str) else str(value)).encode()
        self.ends.append(len(self.data))

    def extend(self, values: Iterable[Any]) -> None:
        """Rows from strings, or all rows of another :class:`Texts`."""
        if isinstance(values, Texts):
            base = len(self.data)
            self.data += values.data
            self.ends.frombytes((np.frombuffer(values.ends, np.int64) + base).tobytes())
        else:
            for value in values:
                self.append(value)

    def extend_fixed(self, data: bytes, width: int) -> None:
        """Rows of ``width`` bytes each, back to back in ``data`` (ASCII text, e.g. hex digests)."""
        base = len(self.data)
        self.data += data
        self.ends.frombytes(np.arange(base + width, base + len(data) + 1, width, dtype=np.int64).tobytes())

    def __len__(self) -> int:
        return len(self.ends)

    def __iter__(self) -> Iterator[str]:
        start = 0
        for end in self.ends:
            yield self.data[start:end].decode()
            start = end

    def __eq__(self, other: object) -> bool:
        """Equal rows (to another column, or a list or tuple of strings)."""
        if isinstance(other, Texts):
            return self.data == other.data and self.ends == other.ends
        return isinstance(other, (list, tuple)) and list(self) == list(other)

    @staticmethod
    def joined(parts: Sequence[Texts | Sequence[Any]]) -> pd.api.extensions.ExtensionArray:
        """The rows of all ``parts`` in order (a part may be a plain list of strings) as one column of pandas'
        ``str`` dtype, built on the parts' bytes."""
        import pandas as pd
        import pyarrow as pa

        texts = [part if isinstance(part, Texts) else Texts(part) for part in parts]
        sizes = np.array([len(t.data) for t in texts], dtype=np.int64)
        bases = np.cumsum(sizes) - sizes
        offsets = np.concatenate(
            [np.zeros(1, np.int64), *(np.frombuffer(t.ends, np.int64) + b for t, b in zip(texts, bases))]
        )
        data = b"".join(t.data for t in texts)
        strings = pa.LargeStringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(data))
        return pd.array(strings, dtype="str")


class Coded:
    """Values with few distinct ones (hashable: text or None), one per row: each row's code in ``codes``, the
    distinct values in order of first appearance in ``values``."""

    __slots__ = ("codes", "values", "_code")

    def __init__(self, values: Iterable[Any] = ()) -> None:
        self.codes = array("i")
        self.values: list[Any] = []
        self._code: dict[Any, int] = {}
        self.extend(values)

    def _code_of(self, value: Any) -> int:
        code = self._code.get(value)
        if code is None:
            code = self._code[value] = len(self.values)
            self.values.append(value)
        return code

    def append(self, value: Any) -> None:
        self.codes.append(self._code_of(value))

    def extend(self, values: Iterable[Any]) -> None:
        """Rows from values (TypeError for an unhashable one), or all rows of another :class:`Coded`."""
        if isinstance(values, Coded):
            self.extend_codes(np.frombuffer(values.codes, np.int32), values.values)
        else:
            self.codes.extend(map(self._code_of, values))

    def extend_codes(self, codes: np.ndarray, values: Sequence[Any]) -> None:
        """Rows given as codes into ``values`` (the scanner's fast path: one per distinct line tail)."""
        if len(codes):
            mine = np.array([self._code_of(v) for v in values], dtype=np.int32)
            self.codes.frombytes(mine[codes].tobytes())

    @staticmethod
    def joined(columns: Sequence[Coded], missing: Sequence[Any]) -> np.ndarray:
        """The rows of all ``columns`` in order as one object array, None values of ``columns[i]`` replaced by
        ``missing[i]``: the distinct values of all columns in one array, taken at every row's code (shifted
        to its column's values) in one step."""
        table = np.empty(sum(len(c.values) for c in columns), dtype=object)
        at = 0
        for column, fill in zip(columns, missing):
            for value in column.values:  # one by one: a value is never unpacked as a sequence
                table[at] = fill if value is None else value
                at += 1
        sizes = np.array([len(c.values) for c in columns], dtype=np.int64)
        codes = [np.frombuffer(c.codes, np.int32) for c in columns]
        shift = np.repeat(np.cumsum(sizes) - sizes, [len(c) for c in codes])
        return table[np.concatenate(codes) + shift] if codes else table

    def __len__(self) -> int:
        return len(self.codes)

    def __iter__(self) -> Iterator[Any]:
        return map(self.values.__getitem__, self.codes)

    def __eq__(self, other: object) -> bool:
        """Equal rows (to another column, or a list or tuple of values)."""
        return isinstance(other, (Coded, list, tuple)) and list(self) == list(other)

    def __getstate__(self) -> tuple[array, list[Any]]:
        return self.codes, self.values

    def __setstate__(self, state: tuple[array, list[Any]]) -> None:
        self.codes, self.values = state
        self._code = {v: i for i, v in enumerate(self.values)}
