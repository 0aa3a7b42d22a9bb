"""Macro averages of per-sub-benchmark columns, in the shape ``metrics.aggregate`` uses for the paper's rates.

The analyses add columns to ``subtasks`` (format share, answered share, bootstrap replicates, ...) that
must be averaged exactly like the headline figures: per category and seed the unweighted mean over
the category's sub-benchmarks, OVERALL per seed the unweighted mean over categories, then the mean over
seeds. NaN values are left out of each mean. One function does this for a plain table and for a table
of bootstrap replicates (an extra key column), so the point figures and their intervals share one
definition of the macro structure.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

OVERALL = "OVERALL"


def macro_means(rows: pd.DataFrame, columns: Sequence[str], by: Sequence[str] = ()) -> pd.DataFrame:
    """Macro means of ``columns`` per category and OVERALL, averaged over seeds.

    ``rows``: one row per (category, subtask, seed[, *by]) with the given columns. ``by``: extra keys
    kept apart throughout (e.g. the bootstrap replicate). Returns a frame indexed by
    (*by, category): the categories sorted by name, then the OVERALL rows.
    """
    cols, keys = list(columns), list(by)
    values = rows[["category", "seed", *keys, *cols]].copy()
    values[cols] = values[cols].astype(float)
    per_cat = values.groupby([*keys, "category", "seed"], sort=True, dropna=False)[cols].mean()
    overall = per_cat.groupby(level=[*keys, "seed"], dropna=False).mean()
    cat = per_cat.groupby(level=[*keys, "category"], dropna=False).mean()
    over = overall.groupby(level=keys, dropna=False).mean() if keys else overall.mean().to_frame().T
    if keys:
        over = over.assign(category=OVERALL).set_index("category", append=True)
    else:
        over.index = pd.Index([OVERALL], name="category")
    return pd.concat([cat, over])
