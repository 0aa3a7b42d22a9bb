"""Is a sub-benchmark's change more than noise: exact McNemar tests, or their cluster form where items share a text,
with Benjamini-Hochberg q-values.

For one sub-benchmark and seed the paired items give a 2x2 table; only the discordant cells carry
information about a change. Under "no change" an item that flips is equally likely to flip either
way, so ``n_10 ~ Binomial(n_10 + n_01, 1/2)``: the exact McNemar test is that two-sided binomial test.
It asks whether forgetting and backward transfer differ (a net change of accuracy), not whether F
exceeds the chance baseline; the bootstrap intervals of F_true answer that.

McNemar counts every item as an independent draw. Items that share a text (an MCTest story, a MuSR narrative:
the ``cluster`` the bootstrap draws whole) succeed and fail together, so their flips come in groups and the
binomial's spread is too narrow: its p-values come out too small. For those sub-benchmarks the test is the
exact sign-flip (randomization) test on clusters: each cluster's net flip ``d_c = n_10,c - n_01,c`` is, under
"no change" (before and after exchangeable within a cluster), as likely to be ``+d_c`` as ``-d_c``, independently
across clusters; the p-value is the share of the ``2^m`` sign choices whose ``|sum|`` reaches the observed one,
counted exactly by convolution. With one item per cluster it is the exact McNemar test itself. The replicates of
an item under one seed (inspect_ai epochs, lm-eval repeats) are one such group: the same question, read several
times, so a sub-benchmark with replicates is tested on clusters too, each item a cluster of its replicates
(within its text's cluster where it names one).

A pair of runs has one test per (sub-benchmark, seed) row of ``subtasks.csv``: ~100 sub-benchmarks x 3
seeds. That set of rows is the family over which the Benjamini-Hochberg procedure controls the false
discovery rate; a row is ``significant`` at q < 0.05.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from postforget_lmeval.analyses._bootstrap import item_clusters

ALPHA = 0.05
"""False discovery rate at which a row is flagged ``significant``."""
COLUMNS = ("p_mcnemar", "p_cluster", "q_bh", "significant")
"""Columns added to subtasks.csv."""
MCNEMAR, CLUSTER = "exact McNemar", "cluster sign-flip"
"""The ``test`` of a row of the significance table."""


def mcnemar_p(n_10: np.ndarray, n_01: np.ndarray) -> np.ndarray:
    """Exact two-sided McNemar p-values, row by row; 1.0 without discordant items (nothing changed, no evidence).

    Under "no change" ``n_10 ~ Binomial(n_10 + n_01, 1/2)``, a symmetric distribution, so the two-sided
    p-value (``scipy.stats.binomtest``'s) is twice the lower tail, at most 1.
    """
    n_10, n_01 = np.asarray(n_10, dtype=np.int64), np.asarray(n_01, dtype=np.int64)
    tail = stats.binom.cdf(np.minimum(n_10, n_01), n_10 + n_01, 0.5)
    return np.minimum(1.0, 2.0 * tail)


def sign_flip_p(net: np.ndarray) -> float:
    """Exact two-sided p-value of the cluster sign-flip test: ``P(|sum_c s_c |d_c|| >= |sum_c d_c|)`` over independent
    fair signs ``s_c``. ``net``: each cluster's ``n_10 - n_01``. 1.0 when no cluster has a net flip."""
    sizes = np.abs(np.asarray(net, dtype=np.int64))
    sizes = sizes[sizes > 0]
    total = int(sizes.sum())
    if total == 0:
        return 1.0
    dist = np.zeros(2 * total + 1)  # P(sum = s) at index s + total; partial sums never leave [-total, total]
    dist[total] = 1.0
    for size in sizes:
        dist = 0.5 * (np.roll(dist, size) + np.roll(dist, -size))
    observed = abs(int(np.sum(net)))
    return float(min(1.0, dist[np.abs(np.arange(-total, total + 1)) >= observed].sum()))


def cluster_tests(samples: pd.DataFrame) -> pd.DataFrame:
    """Per (subtask, seed) of the sub-benchmarks whose items name a cluster or have replicates: ``clusters`` (how
    many, an item without a key counting as its own) and ``p_cluster`` (:func:`sign_flip_p`); keys as text. Empty
    without either."""
    columns = ["subtask", "seed", "clusters", "p_cluster"]
    if samples.empty:
        return pd.DataFrame(columns=columns)
    repeated = samples.duplicated(["subtask", "seed", "doc_id"], keep=False)
    chosen = repeated.groupby(samples["subtask"], observed=True).transform("any").astype(bool)
    if "cluster" in samples:
        chosen |= samples.groupby("subtask", observed=True)["cluster"].transform(lambda c: c.notna().any()).astype(bool)
    if not chosen.any():
        return pd.DataFrame(columns=columns)
    items = samples.loc[chosen, ["subtask", "seed", "doc_id", "before", "after"]]
    items = items.astype({"subtask": str, "seed": str})
    index = pd.MultiIndex.from_frame(items[["subtask", "doc_id"]])
    named = item_clusters(samples, index)
    items["cluster"] = named if named is not None else [f"\0item {d}" for d in items["doc_id"]]
    items["net"] = items["before"].astype(int) - items["after"].astype(int)  # 1->0: +1, 0->1: -1, else 0
    net = items.groupby(["subtask", "seed", "cluster"], sort=True)["net"].sum()
    out = net.groupby(level=["subtask", "seed"]).agg(clusters="size", p_cluster=lambda d: sign_flip_p(d.to_numpy()))
    return out.reset_index()[columns]


def significance_table(
    subtasks: pd.DataFrame, samples: pd.DataFrame | None = None, alpha: float = ALPHA
) -> pd.DataFrame:
    """One row per (sub-benchmark, seed): n_10, n_01, the exact McNemar p, the cluster test's p where the
    sub-benchmark's items share texts (``samples`` names their ``cluster``), the ``test`` whose p counts, its BH q
    over all rows, the flag.

    ``direction`` says which way a significant row moved: ``forgetting`` (more 1->0 than 0->1),
    ``backward_transfer`` or ``none`` (equal counts).
    """
    out = subtasks[["subtask", "category", "seed", "n", "n_10", "n_01"]].reset_index(drop=True)
    out["p_mcnemar"] = mcnemar_p(out["n_10"].to_numpy(), out["n_01"].to_numpy())
    clustered = cluster_tests(samples if samples is not None else pd.DataFrame())
    keys = out[["subtask", "seed"]].astype(str)
    found = keys.merge(clustered, on=["subtask", "seed"], how="left", validate="one_to_one")
    out["clusters"] = found["clusters"].to_numpy(dtype=float)
    out["p_cluster"] = found["p_cluster"].to_numpy(dtype=float)
    has_clusters = out["p_cluster"].notna().to_numpy()
    out["test"] = np.where(has_clusters, CLUSTER, MCNEMAR)
    p = np.where(has_clusters, out["p_cluster"], out["p_mcnemar"])
    out["q_bh"] = stats.false_discovery_control(p)
    out["significant"] = out["q_bh"] < alpha
    diff = np.sign(out["n_10"].to_numpy(dtype=float) - out["n_01"].to_numpy(dtype=float))
    out["direction"] = np.select([diff > 0, diff < 0], ["forgetting", "backward_transfer"], "none")
    return out
