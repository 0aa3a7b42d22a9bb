"""summary.json: the inputs, the runs used, how seeds were matched, who scored the figures, and every
count of paired, unpaired or dropped items, so that nothing left out of the figures goes unsaid."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from postforget_lmeval import keys
from postforget_lmeval.run_plan import SIDES, Collected


def summary(
    roots: dict[str, Any],
    formats: dict[str, str],
    options: dict[str, Any],
    got: Collected,
    seed_report: dict[str, Any],
    joined: pd.DataFrame,
    subtasks: pd.DataFrame,
    only: dict[str, list[str]],
    duplicates: dict[str, dict[str, int]],
    scored_by: str,
    table_names: list[str],
    timing: dict[str, float],
) -> dict[str, Any]:
    """The summary dict written as summary.json."""
    # the counts and firsts of the item table from its runs of equal values (see keys.starts), then per subtask
    columns = ["subtask", "_merge", "task_before", "task_after", "category"]
    codes = [joined["subtask"].to_numpy(), *(pd.factorize(joined[c])[0] for c in columns[1:])]
    first = np.flatnonzero(keys.starts(*codes))
    runs = joined.iloc[first][columns].assign(n=np.diff(np.r_[first, len(joined)]))
    counts = runs.groupby(["subtask", "_merge"], observed=True)["n"].sum().unstack(fill_value=0)
    counts = counts.reindex(columns=["both", "left_only", "right_only"], fill_value=0)
    tasks: dict[str, dict[str, set[str]]] = {side: defaultdict(set) for side in SIDES}
    for side in SIDES:
        for subtask, task in zip(runs["subtask"], runs[f"task_{side}"]):
            if isinstance(task, str):
                tasks[side][subtask].add(task)
    category = runs.groupby("subtask")["category"].first().to_dict()
    per_subtask = {
        subtask: {
            "category": category[subtask],
            "tasks_before": sorted(tasks["before"][subtask]),
            "tasks_after": sorted(tasks["after"][subtask]),
            "paired": int(both),
            "unpaired_before": int(left_only),
            "unpaired_after": int(right_only),
            "duplicates_before": duplicates["before"].get(subtask, 0),
            "duplicates_after": duplicates["after"].get(subtask, 0),
        }
        for subtask, both, left_only, right_only in zip(
            counts.index, counts["both"], counts["left_only"], counts["right_only"]
        )
    }
    n_bytes = sum(r["bytes"] for side in SIDES for r in got.runs[side])
    problem_counts: dict[str, int] = defaultdict(int)
    for side in SIDES:
        for p in got.problems[side]:
            problem_counts[p.get("kind", "file")] += int(p.get("count", 1))
    read_s = timing["read_seconds"]
    return {
        "inputs": {side: str(Path(roots[side]).resolve()) for side in SIDES},
        "formats": formats,
        "options": options,
        "scored_by": scored_by,
        "runs": got.runs,
        "superseded_runs": got.superseded,
        "problems": got.problems,
        "dropped_tasks": got.dropped,
        "seed_matching": seed_report,
        "only_before": only["before"],
        "only_after": only["after"],
        "subtasks": per_subtask,
        "tables": table_names,
        "totals": {
            "subtasks_paired": int(subtasks["subtask"].nunique()),
            "seeds": sorted(subtasks["seed"].unique().tolist()),
            "items_paired": int(subtasks["n"].sum()),
            "unpaired_before": int(counts["left_only"].sum()),
            "unpaired_after": int(counts["right_only"].sum()),
            "duplicates": sum(sum(d.values()) for d in duplicates.values()),
            "superseded_runs": sum(len(v) for v in got.superseded.values()),
            "dropped_tasks": len(got.dropped),
            "malformed_lines": problem_counts["malformed"],
            "truncated_files": problem_counts["truncated"],
            "non_binary_samples": problem_counts["non_binary"],
            "samples_without_metric": problem_counts["no_metric"],
            "incomplete_files": problem_counts["incomplete"],
            "unusable_files": problem_counts["unusable"],
            "not_rescored_samples": problem_counts["not_rescored"],
            "files_skipped": problem_counts["file"],
        },
        "notes": got.notes,
        "warnings": got.warnings,
        "timing": {
            "bytes_read": n_bytes,
            **{k: round(v, 3) for k, v in timing.items()},
            "read_mb_per_s": round(n_bytes / 1e6 / read_s, 1) if read_s else None,
        },
    }
