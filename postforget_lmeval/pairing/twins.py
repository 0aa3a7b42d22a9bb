"""The log-likelihood twins set beside the generative runs of the same items.

A side that holds a generative postforget task (``postforget_<subtask>`` or its ``_base`` variant) and its twin
(the same name with the catalog's ``LL_SUFFIX``) has two scorings of each item. The headline figures come from
the generative run; the twin is set aside here and feeds the knowledge analysis
(``postforget_lmeval.analyses``), joined to the paired generative items by (sub-benchmark, doc_id) and checked
with doc_hash. A twin without its generative task on that side is an ordinary run, and the headline.
"""

from __future__ import annotations

import pandas as pd

from postforget_lmeval.pairing.run_plan import SIDES, Collected, listing
from postforget_lmeval.sources import ReadRequest, RunRead, item_table
from postforget_lmeval.tasks.catalog import LL_SUFFIX

COLUMNS = ("subtask", "doc_id", *(f"{c}_{s}" for c in ("correct", "option_ll") for s in SIDES))
"""The twins table: per paired generative item, each side's twin correctness (NaN: no twin) and log-likelihoods."""


def _generative_names(task: str) -> tuple[str, str]:
    plain = task.removesuffix(LL_SUFFIX)
    return plain, f"{plain}_base"


def set_aside(
    planned: list[tuple[str, ReadRequest]], reads: list[RunRead], got: Collected
) -> tuple[list[tuple[str, ReadRequest]], list[RunRead], dict[str, list[RunRead]]]:
    """(planned, reads) without the twins whose generative task runs on the same side, and those twins per side."""
    tasks = {side: {req.run.task for s, req in planned if s == side} for side in SIDES}
    keep = [
        not (req.run.task.endswith(LL_SUFFIX) and set(_generative_names(req.run.task)) & tasks[side])
        for side, req in planned
    ]
    twins: dict[str, list[RunRead]] = {side: [] for side in SIDES}
    for (side, _), read, kept in zip(planned, reads, keep):
        if not kept:
            twins[side].append(read)
    aside = {r.request.run.task for side in SIDES for r in twins[side]}
    alone = sorted({req.run.task for (_, req), kept in zip(planned, keep) if kept and req.run.task in aside})
    if alone:
        got.warnings.append(
            f"{listing(alone)}: beside its generative task on one side, alone on the other, where it is the headline: "
            "that side's log-likelihood scores are paired with the other's generated answers; run the generative "
            "task on both sides (or --exclude the twins)"
        )
    for side in SIDES:
        if twins[side]:
            names = sorted({r.request.run.task for r in twins[side]})
            got.note(
                f"{side}: {len(names)} log-likelihood twin(s) beside their generative tasks feed the knowledge "
                f"analysis, not the headline figures: {listing(names)}"
            )
    kept_planned = [p for p, k in zip(planned, keep) if k]
    kept_reads = [r for r, k in zip(reads, keep) if k]
    return kept_planned, kept_reads, twins


def twin_table(twins: dict[str, list[RunRead]], paired: pd.DataFrame, got: Collected) -> pd.DataFrame:
    """Per paired generative item with a twin on either side: each side's twin correctness and log-likelihoods.

    A twin item is joined on (subtask, doc_id); one whose doc_hash differs from the generative item's on its side
    is a different item (the dataset changed between the runs): left out and counted in a warning. Where a twin ran
    under several seeds (its scoring does not sample), the first seed's row is used.
    """
    items = paired[["subtask", "doc_id"]].astype({"subtask": str}).drop_duplicates()
    out = items.reset_index(drop=True)
    for side in SIDES:
        parts = [r.rows for r in twins[side] if len(r.rows)]
        if not parts:
            out[f"correct_{side}"], out[f"option_ll_{side}"] = float("nan"), None
            continue
        rows = item_table(parts).astype({"subtask": str})
        rows = rows.sort_values(["seed_value", "replicate"], kind="stable").drop_duplicates(["subtask", "doc_id"])
        hashes = paired[["subtask", "doc_id", f"doc_hash_{side}"]].astype({"subtask": str}).drop_duplicates()
        rows = rows.merge(hashes, on=["subtask", "doc_id"], how="inner", validate="one_to_one")
        changed = rows["doc_hash"] != rows[f"doc_hash_{side}"]
        if changed.any():
            got.warnings.append(
                f"{side}: {int(changed.sum())} twin item(s) differ from their generative item (doc_hash), e.g. "
                f"{rows.loc[changed, 'subtask'].iloc[0]} doc_id {rows.loc[changed, 'doc_id'].iloc[0]}: the "
                "dataset changed between the runs; those items have no knowledge label"
            )
        rows = rows.loc[~changed, ["subtask", "doc_id", "correct", "option_ll"]]
        rows = rows.rename(columns={"correct": f"correct_{side}", "option_ll": f"option_ll_{side}"})
        out = out.merge(rows, on=["subtask", "doc_id"], how="left", validate="one_to_one")
    has_twin = out[[f"correct_{side}" for side in SIDES]].notna().any(axis=1)
    return out.loc[has_twin, list(COLUMNS)].reset_index(drop=True)
