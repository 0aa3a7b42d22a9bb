"""Texts: a column of strings as one buffer (how reading processes send doc_hash back)."""

from __future__ import annotations

import hashlib
import pickle
import pickletools

import pandas as pd
import pytest

from postforget_lmeval.sources.texts import Texts


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
