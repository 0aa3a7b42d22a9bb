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

import numpy as np
import pandas as pd

OVERALL = "OVERALL"


def macro_means(rows: pd.DataFrame, columns: Sequence[str], by: Sequence[str] = ()) -> pd.DataFrame:
    """Macro means of ``columns`` per category and OVERALL, averaged over seeds.

    ``rows``: one row per (category, subtask, seed[, *by]) with the given columns. ``by``: extra keys
    kept apart throughout (e.g. the bootstrap replicate). Returns a frame indexed by
    (*by, category): the categories sorted by name, then the OVERALL rows.
    """
    cols, keys = list(columns), list(by)
    per_cat = _means_by(rows[cols].astype(float), rows, [*keys, "category", "seed"])
    overall = per_cat.groupby(level=[*keys, "seed"], dropna=False).mean()
    cat = per_cat.groupby(level=[*keys, "category"], dropna=False).mean()
    over = overall.groupby(level=keys, dropna=False).mean() if keys else overall.mean().to_frame().T
    if keys:
        over = over.assign(category=OVERALL).set_index("category", append=True)
    else:
        over.index = pd.Index([OVERALL], name="category")
    return pd.concat([cat, over])


def _means_by(values: pd.DataFrame, rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """``values.groupby([rows[k] for k in keys], sort=True, dropna=False).mean()``, indexed the same way, grouped
    on one fused integer key: pandas' own group means (the same sums, in the same row order), without the
    cost of grouping a long table (the bootstrap's replicates) by several columns."""
    factors = [pd.factorize(rows[key], sort=True) for key in keys]  # codes in sorted order; -1: missing
    code = np.zeros(len(rows), dtype=np.int64)
    for codes, uniques in factors:  # key by key, as digits; a missing key is the last value (dropna=False)
        code = code * (len(uniques) + 1) + np.where(codes < 0, len(uniques), codes)
    means = values.groupby(code, sort=True).mean()
    rest, level_codes = means.index.to_numpy(), []
    for _, uniques in reversed(factors):
        rest, at = np.divmod(rest, len(uniques) + 1)
        level_codes.append(np.where(at == len(uniques), -1, at))
    index = pd.MultiIndex(levels=[uniques for _, uniques in factors], codes=level_codes[::-1], names=keys)
    return means.set_axis(index)
