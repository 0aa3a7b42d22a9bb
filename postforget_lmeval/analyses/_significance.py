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


def mcnemar_p(n_10: int, n_01: int) -> float:
    """Exact two-sided McNemar p-value; 1.0 without discordant items (nothing changed, no evidence)."""
    n = int(n_10) + int(n_01)
    return float(stats.binomtest(int(n_10), n, 0.5).pvalue) if n else 1.0


def significance_table(subtasks: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """One row per (sub-benchmark, seed): n_10, n_01, the exact McNemar p, its BH q over all rows, the flag.

    ``direction`` says which way a significant row moved: ``forgetting`` (more 1->0 than 0->1),
    ``backward_transfer`` or ``none`` (equal counts).
    """
    out = subtasks[["subtask", "category", "seed", "n", "n_10", "n_01"]].reset_index(drop=True)
    out["p_mcnemar"] = [mcnemar_p(a, b) for a, b in zip(out["n_10"], out["n_01"])]
    out["q_bh"] = stats.false_discovery_control(out["p_mcnemar"].to_numpy())
    out["significant"] = out["q_bh"] < alpha
    diff = np.sign(out["n_10"].to_numpy(dtype=float) - out["n_01"].to_numpy(dtype=float))
    out["direction"] = np.select([diff > 0, diff < 0], ["forgetting", "backward_transfer"], "none")
    return out
