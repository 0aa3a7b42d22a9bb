"""Is a sub-benchmark's change more than noise: exact McNemar tests with Benjamini-Hochberg q-values.

For one sub-benchmark and seed the paired items give a 2x2 table; only the discordant cells carry
information about a change. Under "no change" an item that flips is equally likely to flip either
way, so ``n_10 ~ Binomial(n_10 + n_01, 1/2)``: the exact McNemar test is that two-sided binomial test
(``scipy.stats.binomtest``). The distribution is symmetric, so the p-value is twice the lower tail,
summed here exactly in integers and rounded once (the tests hold it to scipy's value; importing
``scipy.stats`` would cost more than all the analyses). It asks whether forgetting and backward
transfer differ (a net change of accuracy), not whether F exceeds the chance baseline; the bootstrap
intervals of F_true answer that.

A pair of runs has one test per (sub-benchmark, seed) row of ``subtasks.csv``: ~100 sub-benchmarks x 3
seeds. That set of rows is the family over which the Benjamini-Hochberg procedure controls the false
discovery rate (``scipy.stats.false_discovery_control``'s step-up adjustment, the same operations in
numpy); a row is ``significant`` at q < 0.05.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

ALPHA = 0.05
"""False discovery rate at which a row is flagged ``significant``."""
COLUMNS = ("p_mcnemar", "q_bh", "significant")
"""Columns added to subtasks.csv."""


def mcnemar_p(n_10: int, n_01: int) -> float:
    """Exact two-sided McNemar p-value; 1.0 without discordant items (nothing changed, no evidence)."""
    n = int(n_10) + int(n_01)
    low = min(int(n_10), int(n_01))
    if 2 * low == n:  # includes n == 0; the observed count is the mode
        return 1.0
    term = tail = 1  # comb(n, 0); then comb(n, i + 1) = comb(n, i) * (n - i) // (i + 1), exactly
    for i in range(low):
        term = term * (n - i) // (i + 1)
        tail += term  # sum of comb(n, i) for i <= low: P(X <= low) * 2^n
    return min(1.0, 2 * tail / (1 << n))  # int / int: the correctly rounded float


def bh_qvalues(p_values: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values); NaN entries stay NaN and are not in the family."""
    p = np.asarray(p_values, dtype=float)
    q = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    m = int(ok.sum())
    if m <= 1:
        q[ok] = p[ok]
        return q
    order = np.argsort(p[ok])
    adjusted = p[ok][order] * (m / np.arange(1, m + 1, dtype=float))
    np.minimum.accumulate(adjusted[::-1], out=adjusted[::-1])  # a rank's q: the least of it and all above
    q_ok = np.empty(m)
    q_ok[order] = adjusted
    q[ok] = np.clip(q_ok, 0.0, 1.0)
    return q


def significance_table(subtasks: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """One row per (sub-benchmark, seed): n_10, n_01, the exact McNemar p, its BH q over all rows, the flag.

    ``direction`` says which way a significant row moved: ``forgetting`` (more 1->0 than 0->1),
    ``backward_transfer`` or ``none`` (equal counts).
    """
    out = subtasks[["subtask", "category", "seed", "n", "n_10", "n_01"]].copy()
    out["p_mcnemar"] = [mcnemar_p(a, b) for a, b in zip(out["n_10"], out["n_01"])]
    out["q_bh"] = bh_qvalues(out["p_mcnemar"].to_numpy())
    out["significant"] = out["q_bh"] < alpha
    diff = np.sign(out["n_10"].to_numpy(dtype=float) - out["n_01"].to_numpy(dtype=float))
    out["direction"] = np.select([diff > 0, diff < 0], ["forgetting", "backward_transfer"], "none")
    return out.reset_index(drop=True)
