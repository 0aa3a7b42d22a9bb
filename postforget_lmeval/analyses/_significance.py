"""Is a sub-benchmark's change more than noise: exact McNemar tests with Benjamini-Hochberg q-values.

For one sub-benchmark and seed the paired items give a 2x2 table; only the discordant cells carry
information about a change. Under "no change" an item that flips is equally likely to flip either
way, so ``n_10 ~ Binomial(n_10 + n_01, 1/2)``: the exact McNemar test is that two-sided binomial test.
It asks whether forgetting and backward transfer differ (a net change of accuracy), not whether F
exceeds the chance baseline; the bootstrap intervals of F_true answer that.

A pair of runs has one test per (sub-benchmark, seed) row of ``subtasks.csv``: ~100 sub-benchmarks x 3
seeds. That set of rows is the family over which the Benjamini-Hochberg procedure controls the false
discovery rate; a row is ``significant`` at q < 0.05.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

ALPHA = 0.05
"""False discovery rate at which a row is flagged ``significant``."""
COLUMNS = ("p_mcnemar", "q_bh", "significant")
"""Columns added to subtasks.csv."""


def mcnemar_p(n_10: np.ndarray, n_01: np.ndarray) -> np.ndarray:
    """Exact two-sided McNemar p-values, row by row; 1.0 without discordant items (nothing changed, no evidence).

    Under "no change" ``n_10 ~ Binomial(n_10 + n_01, 1/2)``, a symmetric distribution, so the two-sided
    p-value (``scipy.stats.binomtest``'s) is twice the lower tail, at most 1.
    """
    n_10, n_01 = np.asarray(n_10, dtype=np.int64), np.asarray(n_01, dtype=np.int64)
    tail = stats.binom.cdf(np.minimum(n_10, n_01), n_10 + n_01, 0.5)
    return np.minimum(1.0, 2.0 * tail)


def significance_table(subtasks: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """One row per (sub-benchmark, seed): n_10, n_01, the exact McNemar p, its BH q over all rows, the flag.

    ``direction`` says which way a significant row moved: ``forgetting`` (more 1->0 than 0->1),
    ``backward_transfer`` or ``none`` (equal counts).
    """
    out = subtasks[["subtask", "category", "seed", "n", "n_10", "n_01"]].reset_index(drop=True)
    out["p_mcnemar"] = mcnemar_p(out["n_10"].to_numpy(), out["n_01"].to_numpy())
    out["q_bh"] = stats.false_discovery_control(out["p_mcnemar"].to_numpy())
    out["significant"] = out["q_bh"] < alpha
    diff = np.sign(out["n_10"].to_numpy(dtype=float) - out["n_01"].to_numpy(dtype=float))
    out["direction"] = np.select([diff > 0, diff < 0], ["forgetting", "backward_transfer"], "none")
    return out
