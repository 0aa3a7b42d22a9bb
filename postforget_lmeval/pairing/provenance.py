"""summary.json: the inputs, the runs used, how seeds were matched, who scored the figures, and every
count of paired, unpaired or dropped items, so that nothing left out of the figures goes unsaid."""

from __future__ import annotations

import json
import zipfile
from collections import defaultdict
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from postforget_lmeval.pairing.options import PairOptions
from postforget_lmeval.pairing.run_plan import SIDES, Collected


def summary(
    *,
    roots: dict[str, Any],
    formats: dict[str, str],
    options: PairOptions,
    got: Collected,
    seed_report: dict[str, Any],
    joined: pd.DataFrame,
    subtasks: pd.DataFrame,
    only: dict[str, list[str]],
    duplicates: dict[str, dict[str, int]],
    scored_by: str,
    timing: dict[str, float],
) -> dict[str, Any]:
    """The summary dict written as summary.json (``tables``, the extra tables, is filled in once they are made)."""
    per_subtask = _per_subtask(joined, duplicates)
    n_bytes = sum(r["bytes"] for side in SIDES for r in got.runs[side])
    problem_counts: dict[str, int] = defaultdict(int)
    for side in SIDES:
        for p in got.problems[side]:
            problem_counts[p.get("kind", "file")] += int(p.get("count", 1))
    read_s = timing["read_seconds"]
    return {
        "inputs": {side: str(Path(roots[side]).resolve()) for side in SIDES},
        "models": {side: model_names(r["results"] for r in got.runs[side] if r.get("results")) for side in SIDES},
        "formats": formats,
        "options": options.summary(),
        "scored_by": scored_by,
        "runs": got.runs,
        "superseded_runs": got.superseded,
        "problems": got.problems,
        "dropped_tasks": got.dropped,
        "seed_matching": seed_report,
        "only_before": only["before"],
        "only_after": only["after"],
        "subtasks": per_subtask,
        "tables": [],
        "totals": {
            "subtasks_paired": int(subtasks["subtask"].nunique()),
            "seeds": sorted(subtasks["seed"].unique().tolist()),
            "items_paired": int(subtasks["n"].sum()),
            "unpaired_before": sum(s["unpaired_before"] for s in per_subtask.values()),
            "unpaired_after": sum(s["unpaired_after"] for s in per_subtask.values()),
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


def _per_subtask(joined: pd.DataFrame, duplicates: dict[str, dict[str, int]]) -> dict[str, dict[str, Any]]:
    """Per sub-benchmark (sorted): its category, tasks, replicates (generations per item under one seed: inspect_ai
    epochs, lm-eval repeats; 1 in the paper's protocol) and counts of paired and unpaired items (each replicate
    of an item counted)."""
    counts = joined.groupby(["subtask", "_merge"], observed=False).size().unstack("_merge", fill_value=0)
    groups = joined.groupby("subtask", sort=True)
    category = groups["category"].first()
    replicates = joined.groupby(["subtask", "seed"])["replicate"].nunique().groupby(level="subtask").max()
    tasks = {side: defaultdict(list) for side in SIDES}
    for side in SIDES:
        pairs = joined[["subtask", f"task_{side}"]].dropna().drop_duplicates()
        for subtask, task in zip(pairs["subtask"].tolist(), pairs[f"task_{side}"].astype(str).tolist()):
            tasks[side][subtask].append(task)
    return {
        subtask: {
            "category": category[subtask],
            "tasks_before": sorted(set(tasks["before"][subtask])),
            "tasks_after": sorted(set(tasks["after"][subtask])),
            "replicates": int(replicates[subtask]),
            "paired": int(counts.loc[subtask, "both"]),
            "unpaired_before": int(counts.loc[subtask, "left_only"]),
            "unpaired_after": int(counts.loc[subtask, "right_only"]),
            "duplicates_before": duplicates["before"].get(subtask, 0),
            "duplicates_after": duplicates["after"].get(subtask, 0),
        }
        for subtask in category.index
    }


def _model_args_names(model_args: Any) -> list[str]:
    if isinstance(model_args, dict):
        return [str(model_args[k]) for k in ("pretrained", "model", "model_name") if model_args.get(k)]
    if isinstance(model_args, str):
        pairs = (part.split("=", 1) for part in model_args.split(",") if "=" in part)
        return [v for k, v in pairs if k.strip() in ("pretrained", "model", "model_name") and v.strip()]
    return []


@lru_cache(maxsize=4096)
def _names_in(results_file: str) -> tuple[str, ...]:
    """Model names a results file logs: lm-eval's ``config.model_args`` / ``model_name``, LightEval's
    ``config_general.model_name``, inspect's ``eval.model``. Unreadable files give none (pairing has reported
    them)."""
    try:
        if zipfile.is_zipfile(results_file):
            return _inspect_model(results_file)
        data = json.loads(Path(results_file).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    if not isinstance(data, dict):
        return ()
    config, general, spec = (
        data.get(k) if isinstance(data.get(k), dict) else {} for k in ("config", "config_general", "eval")
    )
    names = _model_args_names(config.get("model_args")) + [
        str(v)
        for v in (data.get("model_name"), general.get("model_name"), spec.get("model"))
        if isinstance(v, str) and v
    ]
    return tuple(dict.fromkeys(names))


def _inspect_model(log_file: str) -> tuple[str, ...]:
    """The model of an inspect ``.eval`` log, from its header (inspect_ai reads it: the members may be zstd)."""
    try:
        from inspect_ai.log import read_eval_log

        return (str(read_eval_log(log_file, header_only=True).eval.model),)
    except (ImportError, OSError, ValueError):  # no inspect_ai, or a log it cannot read: pairing reported that
        return ()


def model_names(results_files: Iterable[str | Path]) -> list[str]:
    """The model names the given results files log, each once, in order of first appearance."""
    files = dict.fromkeys(str(f) for f in results_files)
    return list(dict.fromkeys(n for f in files for n in _names_in(f)))
