"""A column of strings as one buffer: how a reading process sends a run's ``doc_hash`` back.

Pickled as ``str`` objects, the doc_hash of every row (64 hex digits) was half of what a reading
process sends back and most of the time spent sending it: one object per row to write and memoize,
and one to rebuild in the main process (bench pair: 36 + 27 ms of 158,400 rows). :class:`Texts`
keeps the strings' UTF-8 bytes back to back with the end of each, two buffers that pickle as they
are, and :meth:`Texts.joined` makes the item table's column an Arrow string array on those bytes,
with no ``str`` per row. Pairing only compares hashes, which Arrow does on the buffers.
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
        return isinstance(other, Texts) and self.data == other.data and self.ends == other.ends

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
