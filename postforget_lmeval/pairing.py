"""Pairing two lm-eval output directories item by item: the ``pair()`` API behind ``postforget-pair``.

The join key is (sub-benchmark, doc_id) checked with doc_hash, per matched seed and replicate, so
the few-shot ``_base`` variant run on a base model pairs with the zero-shot variant run on its
instruct model. Nothing is dropped silently: every run, line and item that does not make it into the
figures is counted in ``PairResult.summary`` with the reason, and anything that would make a figure
wrong (a changed dataset, an ambiguous run, an unknown metric) raises :class:`PairingError`.

Per-item work is vectorised (one table per side, one join); Python loops run per sub-benchmark and
seed only, so a sweep of ~100 sub-benchmarks x 3 seeds pairs in about a second after reading.
"""

from __future__ import annotations

import fnmatch
import os
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from postforget_lmeval import metrics
from postforget_lmeval.results import SUBTASK_COLUMNS, TRANSITIONS, PairingError, PairResult
from postforget_lmeval.samples import AUTO_METRICS, Chunk, ScanSpec, TaskRun, find_runs, read_all

SIDES = ("before", "after")
SEED_MATCH = ("auto", "exact", "order")
_ITEM_FIELDS = ("doc_id", "doc_hash", "replicate", "correct", "k", "answer", "gold", "status", "offset")

Progress = Callable[[int, int], None]
"""Called with (bytes read so far, bytes to read in all)."""


@dataclass
class _Planned:
    side: str
    run: TaskRun
    spec: ScanSpec
    ours: bool


@dataclass
class _Context:
    """What a pairing collects on the way, for the summary and the terminal."""

    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {s: [] for s in SIDES})
    superseded: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {s: [] for s in SIDES})
    dropped: list[dict[str, Any]] = field(default_factory=list)
    runs: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {s: [] for s in SIDES})

    def problem(self, side: str, path: str | Path, problem: str, **extra: Any) -> None:
        self.problems[side].append({"path": str(path), "problem": problem, **extra})
        self.warnings.append(f"{side}: {path}: {problem}")


def _seed_label(seed: int | None) -> str:
    return "none" if seed is None else str(seed)


def _match(patterns: Sequence[str] | None, task: str) -> bool:
    return any(fnmatch.fnmatchcase(task, p) for p in patterns or ())


def _check_roots(roots: dict[str, Any]) -> None:
    paths = {side: Path(roots[side]).resolve() for side in SIDES}
    for side in SIDES:
        if not paths[side].is_dir():
            raise PairingError(
                f"{side} directory {roots[side]} does not exist or is not a directory: "
                "give the --output_path of an lm_eval run"
            )
    b, a = paths["before"], paths["after"]
    if b == a or b in a.parents or a in b.parents:
        raise PairingError(
            f"before ({b}) and after ({a}) overlap: runs in the inner one would be read on both sides; "
            "give two separate directories"
        )


def _discover(
    side: str, root: str | os.PathLike[str], tasks: Sequence[str] | None, exclude: Sequence[str] | None, ctx: _Context
) -> list[TaskRun]:
    """The task runs of one side that have samples and pass the task filters."""
    found = find_runs(root)
    if not found.task_runs:
        seen = "; ".join(f"{p['path']}: {p['problem']}" for p in found.problems[:3])
        raise PairingError(
            f"no lm-eval results_<time>.json found under {side} directory {root} (searched every subdirectory)"
            + (f" [{seen}]" if seen else "")
            + ": point at the --output_path of an `lm_eval ... --log_samples` run"
        )
    for p in found.problems:
        ctx.problem(side, p["path"], p["problem"])
    runs = [r for r in found.task_runs if (not tasks or _match(tasks, r.task)) and not _match(exclude, r.task)]
    if not runs:
        names = sorted({r.task for r in found.task_runs})
        raise PairingError(f"no task under {root} matches --tasks/--exclude; tasks found: {', '.join(names[:20])}")
    with_samples = [r for r in runs if r.samples_path is not None]
    if not with_samples:
        raise PairingError(
            f"the runs under {side} directory {root} were made without --log_samples (e.g. {runs[0].results_path.name} "
            f"has no samples_{runs[0].task}_{runs[0].date}.jsonl beside it): re-run lm_eval with --log_samples"
        )
    for r in runs:
        if r.samples_path is None:
            ctx.problem(
                side,
                r.results_path,
                f"task {r.task}: no samples_{r.task}_{r.date}.jsonl (run without --log_samples?); task skipped",
            )
    return with_samples


def _newest(side: str, runs: list[TaskRun], ctx: _Context) -> list[TaskRun]:
    """One run per (task, seed): the newest; the others are reported, not read."""
    by_key: dict[tuple[str, str], list[TaskRun]] = defaultdict(list)
    for r in runs:
        by_key[(r.task, _seed_label(r.seed))].append(r)
    chosen = []
    for (task, seed), group in sorted(by_key.items()):
        group.sort(key=lambda r: r.date, reverse=True)
        newest = group[0]
        chosen.append(newest)
        for old in group[1:]:
            ctx.superseded[side].append(
                {
                    "task": task,
                    "seed": seed,
                    "results": str(old.results_path),
                    "used_instead": str(newest.results_path),
                    "n_samples": old.n_expected,
                    "n_samples_used": newest.n_expected,
                }
            )
            differs = (
                ""
                if old.n_expected == newest.n_expected
                else f" (it has {old.n_expected} samples, the newest {newest.n_expected})"
            )
            ctx.warnings.append(
                f"{side}: task {task} seed {seed} was run more than once; using the newest "
                f"({newest.results_path}), ignoring {old.results_path}{differs}"
            )
    return chosen


def _plan(side: str, runs: list[TaskRun], metric: str | None, filter_: str | None, ctx: _Context) -> list[_Planned]:
    """Choose filter and metric per task run; tasks without a usable metric are dropped with the reason."""
    planned = []
    for r in runs:
        if filter_ is not None and filter_ in r.filters:
            chosen_filter = filter_
        elif filter_ is not None and len(r.filters) > 1:
            raise PairingError(
                f"task {r.task} ({r.results_path}) has filters {', '.join(r.filters)}; "
                f"--filter {filter_} is not one of them"
            )
        else:
            chosen_filter = r.filters[0]
        ours = "postforget" in r.metrics or (not r.metrics and r.task.startswith("postforget_"))
        if not ours and r.metrics:
            if metric is not None and metric not in r.metrics:
                ctx.dropped.append(
                    {
                        "side": side,
                        "task": r.task,
                        "kind": "metric",
                        "reason": f"metric {metric} not logged (it logs {', '.join(r.metrics)})",
                    }
                )
                continue
            if metric is None and not any(m in r.metrics for m in AUTO_METRICS):
                ctx.dropped.append(
                    {
                        "side": side,
                        "task": r.task,
                        "kind": "metric",
                        "reason": f"no per-sample binary metric ({'/'.join(AUTO_METRICS)}); "
                        f"it logs {', '.join(r.metrics)}: pass --metric",
                    }
                )
                continue
        spec = ScanSpec(
            str(r.samples_path), chosen_filter, None if ours else metric, r.output_type == "multiple_choice"
        )
        planned.append(_Planned(side, r, spec, ours))
    return planned


def _check_metric(metric: str, planned: list[_Planned], ctx: _Context) -> None:
    """An explicit --metric that no ordinary task logs is a typo, not a reason to drop every task."""
    ordinary = [p for p in planned if not p.ours]
    missing = [d for d in ctx.dropped if d.get("kind") == "metric"]
    if missing and not ordinary:
        examples = "; ".join(f"{d['task']}: {d['reason']}" for d in missing[:3])
        raise PairingError(f"unknown metric {metric!r}: no task logs it per sample ({examples})")
    if not ordinary and not missing:
        ctx.notes.append(f"--metric {metric} ignored: postforget tasks log their own correctness")


def _report_chunk(p: _Planned, chunk: Chunk, ctx: _Context) -> None:
    """Record the run used and every problem met while reading its file."""
    r, side, path = p.run, p.side, p.spec.path
    items = len(set(chunk.doc_id))
    if r.n_expected is not None and chunk.lines and chunk.filter_lines < r.n_expected:
        ctx.problem(
            side, path, f"holds {chunk.filter_lines} of the {r.n_expected} items lm-eval evaluated", kind="incomplete"
        )
    ctx.runs[side].append(
        {
            "task": r.task,
            "results": str(r.results_path),
            "samples": path,
            "date": r.date,
            "seed": r.seed,
            "seed_source": r.seed_source,
            "filter": chunk.filter_seen or p.spec.filter,
            "metric": chunk.metric_used,
            "lines": chunk.lines,
            "items": items,
            "n_expected": r.n_expected,
            "bytes": os.path.getsize(path),
            "slow_path": chunk.slow_lines,
        }
    )
    used = chunk.filter_seen or p.spec.filter
    note = f"task {r.task} logs filters {', '.join(r.filters)}; using '{used}' (choose with --filter)"
    if len(r.filters) > 1 and note not in ctx.notes:
        ctx.notes.append(note)
    if r.repeats > 1 and chunk.doc_id and max(chunk.replicate) == 0:
        ctx.notes.append(
            f"{side}: task {r.task} ran with repeats={r.repeats} but logs one score per item "
            "(its filter keeps one generation), so it has no replicates to pair"
        )
    if chunk.truncated is not None:
        ctx.problem(
            side,
            path,
            f"ends mid-line at byte {chunk.truncated} (interrupted run?); the incomplete last line is ignored",
            kind="truncated",
        )
    if chunk.malformed:
        ctx.problem(
            side,
            path,
            f"{len(chunk.malformed)} malformed line(s) skipped (first at byte {chunk.malformed[0]})",
            kind="malformed",
            count=len(chunk.malformed),
        )
    if chunk.n_non_binary:
        ctx.problem(
            side,
            path,
            f"{chunk.n_non_binary} sample(s) with a non-binary score (e.g. {', '.join(chunk.non_binary)}) "
            "skipped: a score in (0,1) is not a transition",
            kind="non_binary",
            count=chunk.n_non_binary,
        )
    if chunk.no_metric:
        wanted = p.spec.metric or "/".join(AUTO_METRICS)
        ctx.problem(
            side,
            path,
            f"{chunk.no_metric} sample(s) without metric {wanted} (logged: {', '.join(chunk.metrics_seen)}) skipped",
            kind="no_metric",
            count=chunk.no_metric,
        )
    if not chunk.doc_id and not chunk.no_metric:
        ctx.dropped.append({"side": side, "task": r.task, "reason": f"no usable sample in {path}"})


def _side_table(
    side: str, read: list[tuple[_Planned, Chunk]], k: float | None, ctx: _Context
) -> tuple[pd.DataFrame, dict[str, int]]:
    """All items of one side in one table, deduplicated; raises on ambiguous runs and on a dataset that changed."""
    columns: dict[str, list[Any]] = {name: [] for name in (*_ITEM_FIELDS, "subtask", "category")}
    files: list[dict[str, Any]] = []
    file_of_row: list[np.ndarray] = []
    for p, chunk in read:
        n = len(chunk.doc_id)
        if not n:
            continue
        r = p.run
        for name in _ITEM_FIELDS:
            columns[name].extend(getattr(chunk, name))
        if any(chunk.subtask):  # postforget records name their sub-benchmark and category
            columns["subtask"].extend(s or r.task for s in chunk.subtask)
            columns["category"].extend(c or r.task for c in chunk.category)
        else:
            columns["subtask"].extend([r.task] * n)
            columns["category"].extend([r.group or r.task] * n)
            if k is not None:
                columns["k"][-n:] = [float(k)] * n
        file_of_row.append(np.full(n, len(files), dtype=np.int32))
        files.append(
            {
                "task": r.task,
                "file": p.spec.path,
                "seed_value": _seed_label(r.seed),
                "seed_num": np.nan if r.seed is None else float(r.seed),
                "has_repeats": max(chunk.replicate) > 0,
            }
        )
    if not files:
        raise PairingError(
            f"no usable samples on the {side} side: " + "; ".join(w for w in ctx.warnings if w.startswith(side))[:500]
        )
    codes = np.concatenate(file_of_row)
    per_file = pd.DataFrame(files)
    df = pd.DataFrame(
        {
            "doc_id": np.asarray(columns["doc_id"], dtype=np.int64),
            "replicate": np.asarray(columns["replicate"], dtype=np.int32),
            "correct": np.asarray(columns["correct"], dtype=np.int8),
            "k": np.asarray(columns["k"], dtype=float),
            "offset": np.asarray(columns["offset"], dtype=np.int64),
            **{name: columns[name] for name in ("doc_hash", "answer", "gold", "status", "subtask", "category")},
            # per-file values as categoricals: no string conversion per row
            **{name: pd.Categorical(per_file[name])[codes] for name in ("task", "file", "seed_value")},
            "seed_num": per_file["seed_num"].to_numpy()[codes],
            "has_repeats": per_file["has_repeats"].to_numpy()[codes],
        }
    )

    tasks = df.groupby(["subtask", "seed_value"])["task"].nunique()
    if (tasks > 1).any():
        subtask, seed = tasks[tasks > 1].index[0]
        names = sorted(df.loc[(df["subtask"] == subtask) & (df["seed_value"] == seed), "task"].unique())
        raise PairingError(
            f"{side}: sub-benchmark {subtask} seed {seed} comes from several tasks ({', '.join(names)}); "
            "keep one with --exclude (e.g. --exclude '*_base') or move the other run out of the directory"
        )
    dup = df.duplicated(["subtask", "seed_value", "replicate", "doc_id"], keep="first")
    duplicates = {str(s): int(n) for s, n in df.loc[dup, "subtask"].value_counts().items()}
    for subtask, n in duplicates.items():
        ctx.warnings.append(f"{side}: {subtask}: {n} duplicate item line(s) in one run; the first is used")
    df = df.loc[~dup].reset_index(drop=True)
    hashes = df.groupby(["subtask", "doc_id"])["doc_hash"].nunique()
    if (hashes > 1).any():
        changed = hashes[hashes > 1]
        subtask, doc_id = changed.index[0]
        runs = df.loc[(df["subtask"] == subtask) & (df["doc_id"] == doc_id), ["task", "seed_value"]].drop_duplicates()
        raise PairingError(
            f"{side}: doc_hash of {subtask} doc_id {doc_id} differs between runs "
            f"({', '.join(f'{t} seed {s}' for t, s in runs.itertuples(index=False))}): "
            "the dataset changed between them "
            f"({len(changed)} item(s) in all); re-run them on the same data"
        )
    return df, duplicates


def _seed_plan(
    before: pd.DataFrame, after: pd.DataFrame, mode: str, ctx: _Context
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Which before seed pairs with which after seed, per sub-benchmark, and how that was decided."""

    def seeds(df: pd.DataFrame) -> dict[str, list[str]]:
        order = (
            df[["subtask", "seed_value", "seed_num"]]
            .drop_duplicates()
            .sort_values(["seed_num", "seed_value"], na_position="last")
        )
        return order.groupby("subtask", sort=False)["seed_value"].agg(list).to_dict()

    sb, sa = seeds(before), seeds(after)
    rows, report = [], {}
    for subtask in sorted(set(sb) & set(sa)):
        b, a = sb[subtask], sa[subtask]
        common = [s for s in b if s in a]
        if mode == "order" or (mode == "auto" and not common and len(b) == len(a)):
            method, pairs = "order", list(zip(b, a))
        elif mode == "exact" or common:
            method, pairs = "exact", [(s, s) for s in common]
        else:
            raise PairingError(
                f"seeds of {subtask} do not line up: before {', '.join(b)}, after {', '.join(a)}; "
                "pass --seed-match order to pair them in sorted order (unmatched seeds are reported and left out)"
            )
        report[subtask] = {
            "method": method,
            "pairs": [[x, y] for x, y in pairs],
            "unmatched_before": [s for s in b if s not in {x for x, _ in pairs}],
            "unmatched_after": [s for s in a if s not in {y for _, y in pairs}],
        }
        rows.extend(
            {"subtask": subtask, "seed_before": x, "seed_after": y, "seed_label": x if x == y else f"{x}~{y}"}
            for x, y in pairs
        )
    _warn_seeds(report, ctx)
    return pd.DataFrame(rows, columns=["subtask", "seed_before", "seed_after", "seed_label"]), report


def _warn_seeds(report: dict[str, Any], ctx: _Context) -> None:
    """One line per distinct seed situation, not one per sub-benchmark."""
    groups: dict[str, list[str]] = defaultdict(list)
    for subtask, r in report.items():
        if r["method"] == "order" and any(x != y for x, y in r["pairs"]):
            groups[
                "seeds matched in sorted order (no seed shared): "
                + ", ".join(f"before {x} ~ after {y}" for x, y in r["pairs"])
            ].append(subtask)
        if r["unmatched_before"] or r["unmatched_after"]:
            groups[
                f"seeds without a partner, left out: before {r['unmatched_before'] or '-'}, "
                f"after {r['unmatched_after'] or '-'}"
            ].append(subtask)
        if not r["pairs"]:
            groups["no seed in common: not paired"].append(subtask)
    for message, subtasks in groups.items():
        more = " ..." if len(subtasks) > 5 else ""
        ctx.warnings.append(f"{message} ({len(subtasks)} sub-benchmark(s): {', '.join(subtasks[:5])}{more})")


def _join(before: pd.DataFrame, after: pd.DataFrame, plan: pd.DataFrame) -> pd.DataFrame:
    """Outer join of the matched seeds on (subtask, seed label, replicate, doc_id); raises on doc_hash mismatch."""
    key = ["subtask", "seed_label", "replicate", "doc_id"]
    keep = ["doc_hash", "correct", "k", "answer", "gold", "status", "offset", "task", "file", "category", "has_repeats"]
    b = before.merge(plan, left_on=["subtask", "seed_value"], right_on=["subtask", "seed_before"])[key + keep]
    a = after.merge(plan, left_on=["subtask", "seed_value"], right_on=["subtask", "seed_after"])[key + keep]
    joined = b.merge(a, on=key, how="outer", suffixes=("_before", "_after"), indicator=True)
    bad = joined[(joined["_merge"] == "both") & (joined["doc_hash_before"] != joined["doc_hash_after"])]
    if len(bad):
        first = bad.iloc[0]
        per = bad.groupby("subtask")["doc_id"].nunique().to_dict()
        raise PairingError(
            f"doc_hash differs for {first['subtask']} doc_id {first['doc_id']} (before: task {first['task_before']}, "
            f"after: task {first['task_after']}): the two runs did not see the same item. Mismatched items per "
            f"sub-benchmark: {per}. Re-run both sides on the same dataset version, or leave the task out with --exclude"
        )
    joined = joined.merge(plan, on=["subtask", "seed_label"], how="left")
    repeats = joined["has_repeats_before"].fillna(False).astype(bool) | joined["has_repeats_after"].fillna(
        False
    ).astype(bool)
    joined["seed"] = joined["seed_label"].where(~repeats, joined["seed_label"] + "#r" + joined["replicate"].astype(str))
    joined["k"] = joined["k_before"].fillna(joined["k_after"])
    return joined


def _categories(joined: pd.DataFrame, ctx: _Context) -> pd.Series:
    """One category per sub-benchmark: a named one wins over the task-name fallback of ordinary tasks."""
    stacked = pd.concat(
        [
            joined[["subtask", "category_before"]].set_axis(["subtask", "category"], axis=1),
            joined[["subtask", "category_after"]].set_axis(["subtask", "category"], axis=1),
        ]
    ).dropna()
    named = stacked[stacked["category"] != stacked["subtask"]].drop_duplicates()
    for subtask, cats in named.groupby("subtask")["category"]:
        if len(cats) > 1:
            ctx.warnings.append(
                f"{subtask}: category differs between the sides ({', '.join(map(str, cats))}); using {cats.iloc[0]}"
            )
    chosen = {s: s for s in joined["subtask"].unique()}
    chosen.update(named.drop_duplicates("subtask").set_index("subtask")["category"].to_dict())
    return pd.Series(chosen, name="category")


def _subtask_rows(paired: pd.DataFrame, joined: pd.DataFrame) -> pd.DataFrame:
    """SPEC §2 metrics per (sub-benchmark, seed label), plus unanswered and unpaired counts."""
    groups = paired.groupby(["subtask", "seed"], sort=True)
    before, after, ks = (paired[c].to_numpy() for c in ("before", "after", "k"))
    rows = []
    for (subtask, seed), idx in groups.indices.items():
        k = ks[idx]
        rows.append(
            {
                "subtask": subtask,
                "seed": seed,
                **metrics.transition_metrics(before[idx], after[idx], k=None if np.isnan(k).all() else k),
            }
        )
    out = pd.DataFrame(rows).set_index(["subtask", "seed"]).sort_index()
    firsts = groups[["category", "seed_before", "seed_after", "replicate", "task_before", "task_after"]].first()
    for side in SIDES:
        status = paired[f"status_{side}"]
        unanswered = (status.notna() & (status != "answered")).groupby([paired["subtask"], paired["seed"]]).sum()
        logged = status.notna().groupby([paired["subtask"], paired["seed"]]).any()
        out[f"unanswered_{side}"] = unanswered.where(logged)
    unpaired = joined[joined["_merge"] != "both"].groupby(["subtask", "seed", "_merge"], observed=True).size()
    unpaired = unpaired.unstack("_merge").reindex(columns=["left_only", "right_only"]) if len(unpaired) else None
    for side, col in (("before", "left_only"), ("after", "right_only")):
        values = unpaired[col].reindex(out.index) if unpaired is not None else None
        out[f"n_unpaired_{side}"] = 0 if values is None else values.fillna(0).astype(int)
    out = out.join(firsts).reset_index()
    return out[[*SUBTASK_COLUMNS, *(c for c in out.columns if c not in SUBTASK_COLUMNS)]]


def _agreement(paired: pd.DataFrame) -> pd.DataFrame:
    """The paper's stricter variant over all matched seeds, on the items paired under every one of them."""
    if paired.groupby("subtask")["seed"].nunique().max() < 2:
        return pd.DataFrame()
    wide = paired.pivot(index=["subtask", "doc_id"], columns="seed", values=["before", "after"])
    ks = paired.groupby(["subtask", "doc_id"])["k"].first().reindex(wide.index).to_numpy(dtype=float)
    seeds = np.asarray(wide["before"].columns)
    b_all, a_all = wide["before"].to_numpy(dtype=float), wide["after"].to_numpy(dtype=float)
    subtask_codes = wide.index.get_level_values("subtask")
    starts = np.flatnonzero(np.r_[True, subtask_codes[1:] != subtask_codes[:-1]])
    rows = []
    for start, end in zip(starts, np.r_[starts[1:], len(subtask_codes)]):
        b, a, k = b_all[start:end], a_all[start:end], ks[start:end]
        cols = ~np.isnan(b).all(axis=0)
        if cols.sum() < 2:
            continue
        b, a = b[:, cols], a[:, cols]
        complete = ~(np.isnan(b).any(axis=1) | np.isnan(a).any(axis=1))
        k = k[complete]
        row = {"subtask": subtask_codes[start], "seeds": ",".join(map(str, seeds[cols]))}
        row.update(metrics.seed_agreement_metrics(b[complete], a[complete], k=None if np.isnan(k).all() else k))
        rows.append(row)
    return pd.DataFrame(rows)


def _samples_frame(paired: pd.DataFrame) -> pd.DataFrame:
    """samples.parquet: one row per paired item; file + byte offset let `show` read the question back lazily."""
    out = paired[["subtask", "category", "doc_id", "seed", "replicate", "before", "after", "k"]].copy()
    codes = 2 * out["before"].to_numpy() + out["after"].to_numpy()  # 3: 1->1, 2: 1->0, 1: 0->1, 0: 0->0
    out["transition"] = pd.Categorical.from_codes(3 - codes, categories=list(TRANSITIONS.values()))
    out["gold"] = paired["gold_before"].fillna(paired["gold_after"])
    for col in ("answer", "status", "task", "file", "offset", "seed"):
        for side in SIDES:
            out[f"{col}_{side}"] = paired[f"{col}_{side}"]
    for col in (
        "subtask",
        "category",
        "seed",
        "status_before",
        "status_after",
        "task_before",
        "task_after",
        "file_before",
        "file_after",
        "seed_before",
        "seed_after",
    ):
        out[col] = out[col].astype("category")
    return out.reset_index(drop=True)


def pair(
    before: str | os.PathLike[str],
    after: str | os.PathLike[str],
    *,
    metric: str | None = None,
    filter: str | None = None,  # noqa: A002 - the name lm-eval and the CLI use
    k: float | None = None,
    tasks: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    seed_match: str = "auto",
    jobs: int | None = None,
    strict: bool = False,
    progress: Progress | None = None,
) -> PairResult:
    """Pair the lm-eval runs under ``before`` with those under ``after``, item by item.

    ``metric``/``filter``/``k`` apply to ordinary lm-eval tasks (postforget tasks log their own
    correctness and k; ``filter`` also picks among several filters of any task). ``tasks``/``exclude``:
    shell patterns on task names. ``seed_match``: 'exact' pairs equal seeds only, 'order' pairs sorted
    seeds in turn, 'auto' does 'exact' and falls back to 'order' when no seed is shared and both sides
    have as many. ``jobs``: processes reading the logs (default: CPUs available). ``strict``: every
    reported problem is an error. ``progress(done_bytes, total_bytes)`` follows the reading.
    Raises :class:`PairingError` for input that would make the figures wrong.
    """
    if seed_match not in SEED_MATCH:
        raise PairingError(f"--seed-match must be one of {', '.join(SEED_MATCH)}, not {seed_match!r}")
    if k is not None and not k >= 1:
        raise PairingError(f"--k must be the number of options (>= 1), not {k}")
    started = time.perf_counter()
    ctx = _Context()
    roots = {"before": before, "after": after}
    _check_roots(roots)
    planned: list[_Planned] = []
    for side in SIDES:
        planned.extend(
            _plan(side, _newest(side, _discover(side, roots[side], tasks, exclude, ctx), ctx), metric, filter, ctx)
        )
    if metric is not None:
        _check_metric(metric, planned, ctx)

    jobs = max(1, jobs or _available_cpus())
    read_start = time.perf_counter()
    try:
        chunks = read_all([p.spec for p in planned], jobs, progress)
    except OSError as e:
        raise PairingError(f"cannot read a samples file: {e}") from e
    read_seconds = time.perf_counter() - read_start
    for p, chunk in zip(planned, chunks):
        _report_chunk(p, chunk, ctx)
    if (
        metric is not None
        and any(not p.ours for p in planned)
        and not any(c.doc_id for p, c in zip(planned, chunks) if not p.ours)
    ):
        raise PairingError(f"unknown metric {metric!r}: no sample of the ordinary tasks logs it")
    for d in ctx.dropped:
        ctx.warnings.append(f"{d['side']}: task {d['task']} left out: {d['reason']}")
    tables, duplicates = {}, {}
    for side in SIDES:
        tables[side], duplicates[side] = _side_table(
            side, [(p, c) for p, c in zip(planned, chunks) if p.side == side], k, ctx
        )

    names = {side: set(tables[side]["subtask"].unique().tolist()) for side in SIDES}
    only = {side: sorted(names[side] - names[other]) for side, other in (("before", "after"), ("after", "before"))}
    for side, missing in only.items():
        if missing:
            more = " ..." if len(missing) > 10 else ""
            ctx.warnings.append(
                f"{len(missing)} sub-benchmark(s) only on the {side} side, not paired: {', '.join(missing[:10])}{more}"
            )

    plan, seed_report = _seed_plan(tables["before"], tables["after"], seed_match, ctx)
    if plan.empty:
        raise PairingError(
            "nothing to pair: no sub-benchmark has a matched seed on both sides (before: "
            f"{', '.join(sorted(names['before']))[:300]}; after: {', '.join(sorted(names['after']))[:300]})"
        )
    joined = _join(tables["before"], tables["after"], plan)
    joined["category"] = joined["subtask"].map(_categories(joined, ctx))
    paired = joined[joined["_merge"] == "both"].rename(columns={"correct_before": "before", "correct_after": "after"})
    if paired.empty:
        raise PairingError(
            "no item is present on both sides for any matched seed: check that both directories ran the same tasks"
        )
    paired = paired.astype({"before": np.int8, "after": np.int8})

    subtasks = _subtask_rows(paired, joined)
    categories = pd.concat([metrics.aggregate(subtasks), metrics.aggregate_micro(subtasks)], ignore_index=True)
    base_safety = (subtasks["category"] == "Safety/Truthfulness") & (
        subtasks["task_before"].str.endswith("_base") | subtasks["task_after"].str.endswith("_base")
    )
    if base_safety.any():
        ctx.notes.append(
            "Safety/Truthfulness includes a base-model (few-shot) run; the paper reports this category "
            "only when neither model is a base model"
        )
    agreement = _agreement(paired)
    if not agreement.empty:
        agreement.insert(
            1,
            "category",
            agreement["subtask"].map(subtasks.drop_duplicates("subtask").set_index("subtask")["category"]),
        )
    options = {
        "metric": metric,
        "filter": filter,
        "k": k,
        "tasks": list(tasks or []),
        "exclude": list(exclude or []),
        "seed_match": seed_match,
        "jobs": jobs,
    }
    summary = _summary(
        roots,
        options,
        ctx,
        seed_report,
        joined,
        subtasks,
        only,
        duplicates,
        read_seconds,
        time.perf_counter() - started,
    )
    if strict and ctx.warnings:
        more = f" (and {len(ctx.warnings) - 5} more)" if len(ctx.warnings) > 5 else ""
        raise PairingError("--strict: " + "; ".join(ctx.warnings[:5]) + more)
    return PairResult(
        subtasks=subtasks,
        categories=categories,
        samples=_samples_frame(paired),
        agreement=agreement,
        summary=summary,
        warnings=ctx.warnings,
        notes=ctx.notes,
    )


def _available_cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _summary(
    roots: dict[str, Any],
    options: dict[str, Any],
    ctx: _Context,
    seed_report: dict[str, Any],
    joined: pd.DataFrame,
    subtasks: pd.DataFrame,
    only: dict[str, list[str]],
    duplicates: dict[str, dict[str, int]],
    read_seconds: float,
    total_seconds: float,
) -> dict[str, Any]:
    """Inputs, runs used, seed matching and every count of paired, unpaired or dropped items."""
    counts = joined.groupby(["subtask", "_merge"], observed=True).size().unstack(fill_value=0)
    counts = counts.reindex(columns=["both", "left_only", "right_only"], fill_value=0)
    tasks = {side: joined.groupby("subtask")[f"task_{side}"].unique() for side in SIDES}
    category = joined.groupby("subtask")["category"].first()
    per_subtask = {
        subtask: {
            "category": category[subtask],
            "tasks_before": sorted(t for t in tasks["before"][subtask] if isinstance(t, str)),
            "tasks_after": sorted(t for t in tasks["after"][subtask] if isinstance(t, str)),
            "paired": int(row["both"]),
            "unpaired_before": int(row["left_only"]),
            "unpaired_after": int(row["right_only"]),
            "duplicates_before": duplicates["before"].get(subtask, 0),
            "duplicates_after": duplicates["after"].get(subtask, 0),
        }
        for subtask, row in counts.iterrows()
    }
    n_bytes = sum(r["bytes"] for side in SIDES for r in ctx.runs[side])
    problem_counts: dict[str, int] = defaultdict(int)
    for side in SIDES:
        for p in ctx.problems[side]:
            problem_counts[p.get("kind", "file")] += int(p.get("count", 1))
    return {
        "inputs": {side: str(Path(roots[side]).resolve()) for side in SIDES},
        "options": options,
        "runs": ctx.runs,
        "superseded_runs": ctx.superseded,
        "problems": ctx.problems,
        "dropped_tasks": ctx.dropped,
        "seed_matching": seed_report,
        "only_before": only["before"],
        "only_after": only["after"],
        "subtasks": per_subtask,
        "totals": {
            "subtasks_paired": int(subtasks["subtask"].nunique()),
            "seeds": sorted(subtasks["seed"].unique().tolist()),
            "items_paired": int(subtasks["n"].sum()),
            "unpaired_before": int(counts["left_only"].sum()),
            "unpaired_after": int(counts["right_only"].sum()),
            "duplicates": sum(sum(d.values()) for d in duplicates.values()),
            "superseded_runs": sum(len(v) for v in ctx.superseded.values()),
            "dropped_tasks": len(ctx.dropped),
            "malformed_lines": problem_counts["malformed"],
            "truncated_files": problem_counts["truncated"],
            "non_binary_samples": problem_counts["non_binary"],
            "samples_without_metric": problem_counts["no_metric"],
            "incomplete_files": problem_counts["incomplete"],
            "files_skipped": problem_counts["file"],
        },
        "notes": ctx.notes,
        "warnings": ctx.warnings,
        "timing": {
            "bytes_read": n_bytes,
            "read_seconds": round(read_seconds, 3),
            "read_mb_per_s": round(n_bytes / 1e6 / read_seconds, 1) if read_seconds else None,
            "total_seconds": round(total_seconds, 3),
        },
    }
