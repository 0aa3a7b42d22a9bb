"""How ``metrics.aggregate`` takes its table of sub-benchmark rows: a bad table is named in full (which rows are
duplicates), and neither the order of the rows nor the names of the categories change a figure. (Surviving
mutants showed these were unpinned.)"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from postforget_lmeval import metrics


def subtask_row(category: str, subtask: str, seed: str, f: float) -> dict:
    """A per-sub-benchmark row as ``aggregate`` takes it, with a chosen F and the other metrics NaN or 0."""
    row = {c: float("nan") for c in metrics.METRIC_COLUMNS}
    row.update(n=10, n_11=0, n_10=0, n_01=0, n_00=10, F=f)
    return {**row, "category": category, "subtask": subtask, "seed": seed}


def key(category: str, subtask: str, seed: str) -> dict:
    return {"category": category, "subtask": subtask, "seed": seed}


DUPLICATES = "subtask table has several rows for the same (category, subtask, seed): "
SIX_DUPLICATED = [subtask_row("C", f"s{i}", "0", f) for i in range(6) for f in (0.1, 0.2)]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([], "subtask table is empty: nothing to aggregate"),
        (
            [subtask_row("OVERALL", "s", "0", 0.1)],
            "'OVERALL' is reserved for the overall row and cannot be a category name",
        ),
        (  # same keys, different figures: still a duplicate; listed once each, in order of first appearance
            [
                subtask_row("B", "b", "0", 0.1),
                subtask_row("A", "a", "0", 0.2),
                subtask_row("A", "a", "0", 0.3),
                subtask_row("B", "b", "0", 0.4),
                subtask_row("A", "a", "1", 0.5),
            ],
            DUPLICATES + str([key("B", "b", "0"), key("A", "a", "0")]),
        ),
        (SIX_DUPLICATED, DUPLICATES + str([key("C", f"s{i}", "0") for i in range(5)])),  # the first five only
    ],
    ids=["empty", "reserved-category", "duplicate-keys", "six-duplicates"],
)
@pytest.mark.parametrize("average", [metrics.aggregate, metrics.aggregate_micro])
def test_a_bad_subtask_table_is_named_in_full(rows: list[dict], message: str, average) -> None:
    """The table checks say exactly what is wrong: a duplicate is a repeated (category, subtask, seed) whatever
    its figures (a second row would silently double that sub-benchmark's weight), each repeated key once."""
    table = pd.DataFrame(rows, columns=[*metrics.METRIC_COLUMNS, "category", "subtask", "seed"])
    with pytest.raises(ValueError) as err:
        average(table)
    assert str(err.value) == message


def test_macro_figures_do_not_depend_on_row_order() -> None:
    """Categories enter OVERALL, and seeds the mean over seeds, in sorted order, so the same table in another row
    order gives the same figures bit for bit (a rerun that discovers the runs in another order changes nothing).

    One sub-benchmark per category, so no within-category order is involved. F per (category, seed):
    A 0.8 0.6 0.5, B 0.2 0.3 0.0, C 0.0 0.0 0.1; OVERALL per seed 1/3, 0.3, 0.2, so its mean is 5/18.
    """
    f = {"A": (0.8, 0.6, 0.5), "B": (0.2, 0.3, 0.0), "C": (0.0, 0.0, 0.1)}
    table = pd.DataFrame(
        [subtask_row(c, c.lower(), str(s), v) for c, values in f.items() for s, v in enumerate(values)]
    )
    forward = metrics.aggregate(table)
    backward = metrics.aggregate(table.iloc[::-1].reset_index(drop=True))
    pd.testing.assert_frame_equal(forward, backward, check_exact=True)
    overall = forward.set_index("category").loc["OVERALL"]
    assert overall["F_mean"] == pytest.approx(5 / 18, rel=1e-12)
    assert overall["F_std"] == pytest.approx(
        math.sqrt(((1 / 3 - 5 / 18) ** 2 + (0.3 - 5 / 18) ** 2 + (0.2 - 5 / 18) ** 2) / 2)
    )


def test_overall_does_not_depend_on_category_names() -> None:
    """OVERALL averages the seeds in their sorted order whichever category comes first by name, so renaming a
    category that lacks a seed leaves OVERALL the same bit for bit.

    F per (category, seed): A - 0.2 0.3, B 0.1 0.2 0.3; OVERALL per seed 0.1, 0.2, 0.3 (mean 0.2, std 0.1).
    """
    f = {("A", "1"): 0.2, ("A", "2"): 0.3, ("B", "0"): 0.1, ("B", "1"): 0.2, ("B", "2"): 0.3}
    table = pd.DataFrame([subtask_row(c, c.lower(), s, v) for (c, s), v in f.items()])
    renamed = table.assign(category=table["category"].replace({"A": "Z"}))
    overall = metrics.aggregate(table).set_index("category").loc["OVERALL"]
    pd.testing.assert_series_equal(
        overall, metrics.aggregate(renamed).set_index("category").loc["OVERALL"], check_exact=True
    )
    assert overall["F_mean"] == pytest.approx(0.2, rel=1e-12) and overall["F_std"] == pytest.approx(0.1, rel=1e-12)
