"""significance_table at its edges, hand-worked: the flag at exactly alpha, equal counts, a caller's own index."""

from __future__ import annotations

import pandas as pd
import pytest

from postforget_lmeval.analyses._significance import significance_table


def _rows(n_10: list[int], n_01: list[int], index: list[int]) -> pd.DataFrame:
    n = len(n_10)
    return pd.DataFrame(
        {
            "subtask": list("abcd")[:n],
            "category": ["X"] * n,
            "seed": ["0"] * n,
            "n": [20] * n,
            "n_10": n_10,
            "n_01": n_01,
        },
        index=index,
    )


def test_a_q_value_equal_to_alpha_is_not_significant() -> None:
    # one row, 6 -> 0: p = 2 * (1/2)^6 = 0.03125 (exact in binary); one test, so q = p
    table = significance_table(_rows([6], [0], [0]), alpha=0.03125)
    assert table.loc[0, "q_bh"] == 0.03125 and not table.loc[0, "significant"]
    assert significance_table(_rows([6], [0], [0]), alpha=0.03126).loc[0, "significant"]


def test_equal_counts_move_nowhere_and_the_callers_index_is_not_a_column() -> None:
    table = significance_table(_rows([2, 6, 0], [2, 0, 6], [7, 3, 9]))
    assert list(table.columns) == [
        "subtask", "category", "seed", "n", "n_10", "n_01", "p_mcnemar", "clusters", "p_cluster", "test", "q_bh",
        "significant", "direction",
    ]  # fmt: skip
    assert list(table.index) == [0, 1, 2]
    assert table["direction"].tolist() == ["none", "forgetting", "backward_transfer"]
    # p: 2*P(X<=2 | 4) = 2*11/16 -> 1; 2*(1/2)^6 twice. BH over 3: 0.03125*3/2 for both, 1 for the first
    assert table["q_bh"].tolist() == pytest.approx([1.0, 0.046875, 0.046875])
