"""A pairing told the items of a subset (``PairOptions.drawn``, from ``postforget-pair --weights``): a before item
outside the subset is unpaired by design and counted, not warned about; a drawn item the after-run lacks and an
item on the after side only are still warned about, each by its own doc_id."""

from __future__ import annotations

from pathlib import Path

import pytest

from postforget_lmeval import PairingError, pair
from tests.helpers.lmeval_runs import pf_record, sample_line, write_run


def _run(root: Path, doc_ids: list[int]) -> Path:
    lines = [sample_line(i, None, record=pf_record("logic_a", i % 2)) for i in doc_ids]
    write_run(root, {"postforget_logic_a": lines})
    return root


@pytest.fixture
def sides(tmp_path: Path) -> tuple[Path, Path]:
    # before: items 0-5; after: 0-2 and 7 (on the after side only)
    return _run(tmp_path / "before", list(range(6))), _run(tmp_path / "after", [0, 1, 2, 7])


def test_undrawn_before_items_are_counted_and_the_rest_warned_about(sides: tuple[Path, Path]) -> None:
    drawn = {("logic_a", d) for d in (0, 1, 2, 3)}  # 3 drawn but not in the after-run; 4 and 5 not drawn
    result = pair(*sides, analyses=False, drawn=drawn)
    (warning,) = [w for w in result.warnings if w.startswith("logic_a seed 0")]
    assert warning.startswith(
        "logic_a seed 0: 1 item(s) only on the before side (doc_id 3) and 1 item(s) only on the after side (doc_id 7)"
    )
    assert result.summary["totals"]["unpaired_undrawn"] == 2
    assert result.summary["totals"]["items_paired"] == 3
    with pytest.raises(PairingError, match=r"--strict: logic_a seed 0: 1 item\(s\) only on the before side"):
        pair(*sides, analyses=False, drawn=drawn, strict=True)


def test_every_missing_before_item_undrawn_leaves_only_the_after_side_warning(sides: tuple[Path, Path]) -> None:
    result = pair(*sides, analyses=False, drawn=[("logic_a", d) for d in (0, 1, 2)])
    (warning,) = [w for w in result.warnings if w.startswith("logic_a seed 0")]
    assert warning.startswith("logic_a seed 0: 1 item(s) only on the after side (doc_id 7) cannot be paired")
    assert result.summary["totals"]["unpaired_undrawn"] == 3


def test_without_a_subset_every_unpaired_item_is_warned_about(sides: tuple[Path, Path]) -> None:
    result = pair(*sides, analyses=False)
    (warning,) = [w for w in result.warnings if w.startswith("logic_a seed 0")]
    assert "3 item(s) only on the before side (doc_id 3, 4, 5)" in warning
    assert "unpaired_undrawn" not in result.summary["totals"]
    # an empty subset: every before item on its side only is undrawn
    assert pair(*sides, analyses=False, drawn=set()).summary["totals"]["unpaired_undrawn"] == 3


def test_an_after_run_of_exactly_the_drawn_items_warns_of_nothing(tmp_path: Path) -> None:
    before, after = _run(tmp_path / "before", list(range(6))), _run(tmp_path / "after", [1, 4])
    result = pair(before, after, analyses=False, drawn=[("logic_a", 1), ("logic_a", 4)], strict=True)
    assert not result.warnings
    assert result.summary["totals"]["unpaired_undrawn"] == 4
    assert result.summary["totals"]["unpaired_before"] == 4  # the pairing's own count is unchanged
