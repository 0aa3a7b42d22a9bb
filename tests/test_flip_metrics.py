"""NFR, NFI, PFR, PFI (Yan et al., CVPR 2021) on hand-counted transitions, and through ``pair`` on real runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from postforget_lmeval import metrics, pair
from tests.helpers.lmeval_runs import ours, write_run


def test_flip_metrics_by_hand() -> None:
    # 5 kept, 2 forgotten, 1 gained, 2 never right: the after model is wrong on 4 items and right on 6
    got = metrics.flip_metrics(5, 2, 1, 2)
    assert got == pytest.approx({"NFR": 2 / 10, "NFI": 2 / 4, "PFR": 1 / 10, "PFI": 1 / 6})
    nothing = metrics.flip_metrics(0, 0, 0, 0)
    assert all(v != v for v in nothing.values())  # no items: NaN, not 0
    assert metrics.flip_metrics(3, 0, 0, 0)["NFI"] != metrics.flip_metrics(3, 0, 0, 0)["NFI"]  # no errors after


def test_flip_columns_of_a_pairing(tmp_path: Path) -> None:
    # 1111111100 -> 1111110010: n_11 6, n_10 2, n_01 1, n_00 1
    for side, bits in (("before", "1111111100"), ("after", "1111110010")):
        write_run(tmp_path / side, ours("arc_easy", bits, category="Logic"), seed=0)
    result = pair(tmp_path / "before", tmp_path / "after")
    row = result.subtasks.iloc[0]
    assert [row[m] for m in metrics.FLIP_METRICS] == pytest.approx([0.2, 2 / 3, 0.1, 1 / 7])
    macro = result.categories.query("average == 'macro' and category == 'OVERALL'").iloc[0]
    assert macro["NFI_mean"] == pytest.approx(2 / 3) and macro["PFI_mean"] == pytest.approx(1 / 7)
