"""Knowledge kept or lost: what the log-likelihood twin says of each item the generated answer flipped.

An item that goes 1->0 in the generative pair is **knowledge kept** when the after model still ranks the gold
option first by log-likelihood (its twin is correct after), else **knowledge lost**. An item that goes 0->1 is
**knowledge there before** when the before model already ranked the gold option first, else **not there before**.
Much apparent forgetting of generated answers is of the first kind: the format or the habit of committing to an
answer went, the knowledge stayed ("Spurious Forgetting in Continual Learning of Language Models", Zheng et al.,
ICLR 2025; CapTrack's behaviour drift, arXiv 2603.06610).

Shares are pooled over items (and seeds) within a sub-benchmark, a category and overall, with percentile bootstrap
intervals that resample the items within each sub-benchmark (by cluster where the items share a text), as
``_bootstrap`` does for F_true.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from postforget_lmeval import metrics
from postforget_lmeval.analyses import _bootstrap as bootstrap

KEPT, LOST, THERE, NOT_THERE = "kept", "lost", "there before", "not there before"
LABELS = (KEPT, LOST, THERE, NOT_THERE)
"""The per-item labels (samples' ``knowledge`` column; '' where the item did not flip or has no twin)."""
COUNTS = ("n_10", "n_10_kept", "n_10_lost", "n_01", "n_01_there", "n_01_not_there")
SHARES = ("kept_share", "there_before_share")
COLUMNS = (
    "level", "category", "subtask", *COUNTS,
    *(f"{s}{x}" for s in SHARES for x in ("", "_lo", "_hi")),
)  # fmt: skip
"""knowledge.csv: one row per sub-benchmark, category and OVERALL (``level``); ``n_10``/``n_01`` count the flips with
a twin label, pooled over seeds."""


def item_labels(samples: pd.DataFrame, twins: pd.DataFrame) -> pd.Series:
    """Per row of ``samples`` its label (:data:`LABELS`), '' where it did not flip or the side that decides it
    has no twin: the after twin for a 1->0, the before twin for a 0->1."""
    on = ["subtask", "doc_id"]
    right = twins[[*on, "correct_before", "correct_after"]].astype({"subtask": str})
    joined = samples[on].astype({"subtask": str}).merge(right, on=on, how="left", validate="many_to_one")
    before, after = samples["before"].to_numpy(), samples["after"].to_numpy()
    twin_b, twin_a = joined["correct_before"].to_numpy(dtype=float), joined["correct_after"].to_numpy(dtype=float)
    label = np.select(
        [
            (before == 1) & (after == 0) & (twin_a == 1),
            (before == 1) & (after == 0) & (twin_a == 0),
            (before == 0) & (after == 1) & (twin_b == 1),
            (before == 0) & (after == 1) & (twin_b == 0),
        ],
        list(LABELS),
        default="",
    )
    return pd.Series(label, index=samples.index, dtype=object)


def _item_counts(samples: pd.DataFrame) -> pd.DataFrame:
    """Per item (category, subtask, doc_id) how many of its rows carry each label."""
    items = samples[["category", "subtask", "doc_id", "knowledge"]].astype({"category": str, "subtask": str})
    flags = pd.get_dummies(items["knowledge"]).reindex(columns=list(LABELS), fill_value=False).astype(float)
    flags[["category", "subtask", "doc_id"]] = items[["category", "subtask", "doc_id"]]
    return flags.groupby(["category", "subtask", "doc_id"], sort=True)[list(LABELS)].sum()


def _replicate_counts(samples: pd.DataFrame, n_boot: int, seed: int) -> dict[tuple[str, str], np.ndarray]:
    """(category, subtask) -> (1 + n_boot) x 4 label counts: row 0 observed, then replicates drawing the
    sub-benchmark's items (clusters) with replacement; one generator, sub-benchmarks in sorted order."""
    rng = np.random.default_rng(seed)
    per_item = _item_counts(samples)
    clusters = bootstrap.item_clusters(samples, per_item.index) if "cluster" in samples else None
    table = per_item.to_numpy(dtype=float)
    out = {}
    for key, rows in bootstrap.sub_benchmarks(per_item.index):
        part = None if clusters is None else clusters[rows]
        cells, weights = bootstrap.cell_weights(rng, table[rows], part, n_boot)
        out[key] = weights @ cells
    return out


def _row(level: str, category: str, subtask: str, counts: np.ndarray, level_ci: float) -> dict[str, object]:
    """One row of knowledge.csv from (1 + n_boot) x 4 label counts."""
    kept, lost, there, not_there = (counts[:, i] for i in range(4))
    row: dict[str, object] = {"level": level, "category": category, "subtask": subtask}
    observed = counts[0].astype(int)
    row.update(zip(COUNTS, [observed[0] + observed[1], *observed[:2], observed[2] + observed[3], *observed[2:]]))
    tail = 100 * (1 - level_ci) / 2
    for name, hit, miss in (("kept_share", kept, lost), ("there_before_share", there, not_there)):
        with np.errstate(invalid="ignore", divide="ignore"):
            share = hit / (hit + miss)
        reps = share[1:][np.isfinite(share[1:])]
        row[name] = share[0]
        row[f"{name}_lo"], row[f"{name}_hi"] = (
            np.percentile(reps, [tail, 100 - tail]) if len(reps) and np.isfinite(share[0]) else (np.nan, np.nan)
        )
    return row


def knowledge_table(
    samples: pd.DataFrame, n_boot: int = bootstrap.N_BOOT, seed: int = 0, level: float = bootstrap.LEVEL
) -> pd.DataFrame:
    """knowledge.csv (:data:`COLUMNS`) from ``samples`` with its ``knowledge`` column (:func:`item_labels`)."""
    reps = _replicate_counts(samples, n_boot, seed)
    rows = [_row("subtask", c, s, counts, level) for (c, s), counts in reps.items()]
    for category in sorted({c for c, _ in reps}):
        total = sum(counts for (c, _), counts in reps.items() if c == category)
        rows.append(_row("category", category, "", total, level))
    if reps:
        rows.append(_row("overall", metrics.OVERALL, "", sum(reps.values()), level))
    return pd.DataFrame(rows, columns=list(COLUMNS))
