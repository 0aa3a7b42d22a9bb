"""Analyses beyond the paper, added to a :class:`PairResult` at the end of pairing.

Three questions a reader asks of a forgetting figure, each answered by one module:

* is it more than noise: exact McNemar tests with Benjamini-Hochberg q-values (``significance``) and
  percentile bootstrap intervals of F_true / BT_true (``bootstrap``);

:func:`annotate` adds columns to ``result.subtasks`` (per sub-benchmark and seed) and to the macro rows
of ``result.categories``, and named tables to ``result.tables`` (written as ``<name>.csv``).
:func:`analyses_markdown` renders them for report.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from postforget_lmeval import bootstrap, significance
from postforget_lmeval.results import PairResult

LoadItem = Callable[[str, int], Any]
"""``load_item(file, locator)`` of the input source: the full logged item (responses, options, ...)."""


def _add_columns(frame: pd.DataFrame, extra: pd.DataFrame, keys: Sequence[str], rows: pd.Series | None = None) -> None:
    """Set ``extra``'s non-key columns on ``frame`` (in place) by matching ``keys``; only on ``rows`` if given."""
    keys = list(keys)
    left = frame[keys].astype(str)
    right = extra.astype({k: str for k in keys})
    merged = left.merge(right, on=keys, how="left")
    for col in (c for c in extra.columns if c not in keys):
        values = merged[col].to_numpy()
        if rows is None:
            frame[col] = values
        else:
            frame.loc[rows.to_numpy(), col] = values[rows.to_numpy()]


def annotate(result: PairResult, load_item: LoadItem | None = None, *, n_boot: int = bootstrap.N_BOOT, seed: int = 0) -> None:
    """Add the analyses to ``result`` in place.

    ``load_item`` reads back a logged item; it is called only for the unanswered items of 1->0 and
    0->1 transitions (to look for refusals), never for every item. ``n_boot``/``seed``: bootstrap
    replicates and the seed of their random draws.
    """
    subtasks, categories = result.subtasks, result.categories
    macro_rows = categories["average"] == "macro" if "average" in categories else pd.Series(True, categories.index)

    sig = significance.significance_table(subtasks)
    _add_columns(subtasks, sig[["subtask", "seed", *significance.COLUMNS]], ["subtask", "seed"])
    result.tables["significance"] = sig

    per_row, per_cat = bootstrap.intervals(result.samples, n_boot=n_boot, seed=seed)
    _add_columns(subtasks, per_row, ["subtask", "seed"])
    _add_columns(categories, per_cat, ["category"], rows=macro_rows)
    result.summary.setdefault("analyses", {})["bootstrap"] = {
        "replicates": n_boot,
        "seed": seed,
        "level": bootstrap.LEVEL,
        "unit": "item within sub-benchmark, same draw for every seed",
    }
