"""Did this checkpoint forget anything, anywhere: one stratified paired test over every sub-benchmark of a pair.

The per-sub-benchmark tests (``_significance``) ask where a change is; a release asks first whether there is one.
Kübler et al. ("When LLMs get significantly worse", ICLR 2026) pool their per-benchmark decisions into one; here
the evidence is pooled, not the decisions, with the Cochran–Mantel–Haenszel test for matched pairs: each
sub-benchmark a stratum, each item paired with itself. Per stratum h, b_h items went 1->0 and c_h 0->1; the CMH
statistic for matched pairs (the stratified McNemar) is ``(sum_h (b_h - c_h))^2 / sum_h (b_h + c_h)``, chi-square
with 1 df.

Null: no net forgetting in any sub-benchmark: before and after are exchangeable within every item (within every
text its items share), so each item that flips is as likely to flip 1->0 as 0->1 (F = BT, paired, in every
stratum). The test is two-sided and has its power against a change in one direction summed over the strata:
forgetting in some sub-benchmarks and as much backward transfer in others cancel (the per-sub-benchmark tests and
their q-values say where).

Clusters and seeds: the CMH variance ``sum (b_h + c_h)`` counts every flip as an independent sign. Under the null
what is exchangeable is a whole item (all its seeds and replicates: one question, read several times) and, where
items share a text (an MCTest story, a MuSR narrative: the ``cluster`` of the bootstrap), the whole text. So the
statistic is summed over those clusters: with ``d_c`` a cluster's net flip (its 1->0 minus its 0->1 over every
item, seed and replicate of it), ``X^2 = (sum_c d_c)^2 / sum_c d_c^2``. ``sum_c d_c^2`` is the variance of
``sum_c d_c`` under the null's sign flips (each ``d_c`` as likely to be ``-d_c``, independently), so the test is
the normal form of the stratified sign-flip test over clusters; with one seed and no clusters every ``d_c`` is
-1, 0 or 1 and ``X^2`` is the CMH statistic itself. Every (1->0, 0->1) counts once, whatever its sub-benchmark's
size: a large sub-benchmark weighs more than in the macro average of the headline.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from postforget_lmeval.analyses._bootstrap import item_clusters

TEST = "stratified McNemar (Cochran–Mantel–Haenszel for matched pairs), sign-flip variance over clusters"
NULL = (
    "no net forgetting: in every sub-benchmark, before and after exchangeable within each item (each text its items "
    "share), so an item that flips is as likely to go 1->0 as 0->1 (F = BT, paired)"
)


def cluster_nets(samples: pd.DataFrame) -> pd.DataFrame:
    """Per (subtask, cluster): ``net`` (its 1->0 minus its 0->1 over every item, seed and replicate), ``n_10``,
    ``n_01``. A cluster is a text its items share (``cluster``), else an item."""
    if samples.empty:
        return pd.DataFrame(columns=["subtask", "cluster", "net", "n_10", "n_01"])
    items = samples[["subtask", "doc_id"]].astype({"subtask": str})
    before, after = samples["before"].to_numpy(dtype=int), samples["after"].to_numpy(dtype=int)
    named = item_clusters(samples, pd.MultiIndex.from_frame(items)) if "cluster" in samples else None
    items["cluster"] = ("\0item " + items["doc_id"].astype(str)) if named is None else named
    items["n_10"], items["n_01"] = (before > after).astype(int), (before < after).astype(int)
    out = items.groupby(["subtask", "cluster"], sort=True)[["n_10", "n_01"]].sum().reset_index()
    out["net"] = out["n_10"] - out["n_01"]
    return out[["subtask", "cluster", "net", "n_10", "n_01"]]


def statistic(net: np.ndarray) -> tuple[float, float]:
    """(X^2, p): ``(sum d)^2 / sum d^2`` and its chi-square (1 df) upper tail; (0, 1) when nothing flipped net."""
    net = np.asarray(net, dtype=float)
    variance = float(np.sum(net**2))
    if variance == 0:
        return 0.0, 1.0
    x2 = float(np.sum(net)) ** 2 / variance
    return x2, float(stats.chi2.sf(x2, 1))


def overall_test(samples: pd.DataFrame) -> dict[str, object]:
    """The test over every sub-benchmark of ``samples`` (paired items: subtask, doc_id, before, after, seed and
    replicate rows, ``cluster`` where items share a text), as summary.json states it."""
    nets = cluster_nets(samples)
    x2, p = statistic(nets["net"].to_numpy())
    n_10, n_01 = int(nets["n_10"].sum()), int(nets["n_01"].sum())
    return {
        "test": TEST,
        "null": NULL,
        "statistic": x2,
        "df": 1,
        "p_value": p,
        "strata": int(nets["subtask"].nunique()),
        "clusters": len(nets),
        "n_10": n_10,
        "n_01": n_01,
        "direction": "forgetting" if n_10 > n_01 else "backward_transfer" if n_01 > n_10 else "none",
    }
