"""Where lm-eval 0.4.x puts a run's files, and what its results file says about each task.

lm-eval 0.4.3 and later (``EvaluationTracker``) write ``<output_path>/<model>/results_<time>.json``
and, beside it, ``samples_<task>_<time>.jsonl`` (one JSON object a line). When ``--output_path``
names a file (``run.json``) the results are ``run_<time>.json`` in its folder, the samples keep
their usual names. lm-eval 0.4.0-0.4.2 wrote ``results.json`` (or the file named by
``--output_path``) and ``<model_args>_<task>.jsonl`` with ``/`` and ``=`` of the model args replaced
by ``__``, holding one indented JSON *array*, not JSON lines.

Hidden folders (``.ipynb_checkpoints`` copies, ``.git``) are not runs and are not searched; links to
folders are followed.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path
from typing import Any

from postforget_lmeval.sources._base import Discovery, TaskRun, walk

RESULTS_RE = re.compile(r"^(?P<stem>.+)_(?P<date>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.json$")
SAMPLES_RE = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.jsonl$")
LFS_HEAD = b"version https://git-lfs.github.com/spec/"
CANNOT_READ = "file cannot be read"


def lfs_pointer(path: Path) -> str | None:
    """Why ``path`` cannot be read: it cannot be opened, or it is a Git LFS pointer stub; else None."""
    try:
        with open(path, "rb") as f:
            head = f.read(512)
    except OSError as e:
        return f"{CANNOT_READ} ({e.strerror}): give this user read access, or pair a copy"
    if not head.startswith(LFS_HEAD):
        return None
    size = re.search(rb"\nsize (\d+)", head)
    stored = f" ({int(size[1]) / 1e6:.1f} MB on the LFS server)" if size else ""
    return (
        f"is a Git LFS pointer stub{stored}, not the logged samples: the clone was made without the LFS "
        "objects; run `git lfs pull` in it (or download the real files) and pair again"
    )


COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".zip")


def compressed(samples: Path) -> tuple[Path, str | None]:
    """A samples file found only compressed (``samples_x.jsonl.gz``): named as such, not taken for a run
    made without --log_samples, which would send its user back to the GPU."""
    for suffix in COMPRESSED:
        packed = samples.with_name(samples.name + suffix)
        if packed.is_file():
            return packed, f"is compressed ({suffix}): decompress it beside its results file and pair again"
    return samples, None


def _seed_from_kwargs(value: Any) -> int | None:
    """``seed`` from model_args / gen_kwargs, logged as a dict or as lm-eval's ``k=v,k=v`` string."""
    if isinstance(value, str):
        value = dict(item.split("=", 1) for item in value.split(",") if "=" in item)
    if isinstance(value, dict) and value.get("seed") not in (None, "", "None"):
        try:
            return int(value["seed"])
        except (TypeError, ValueError):
            return None
    return None


def run_seed(config: dict[str, Any], task_config: dict[str, Any]) -> tuple[int | None, str]:
    """The seed a task's generations were sampled with, and where it was read.

    A sampling seed (``seed`` in the task's generation kwargs, from the YAML or ``--gen_kwargs``;
    then vLLM's ``seed=`` in model_args) decides the generations, so it wins over lm-eval's
    ``random_seed``; ``torch_seed`` is the last resort.
    """
    candidates = (
        (task_config.get("generation_kwargs"), "generation_kwargs seed"),
        (config.get("gen_kwargs"), "gen_kwargs seed"),
        (config.get("model_args"), "model_args seed"),
    )
    for value, source in candidates:
        seed = _seed_from_kwargs(value)
        if seed is not None:
            return seed, source
    for key in ("random_seed", "torch_seed"):
        if isinstance(config.get(key), int):
            return config[key], key
    return None, "none logged"


def _max_gen_toks(config: dict[str, Any], task_config: dict[str, Any]) -> int | None:
    for value in (task_config.get("generation_kwargs"), config.get("gen_kwargs")):
        if isinstance(value, str):
            value = dict(item.split("=", 1) for item in value.split(",") if "=" in item)
        if isinstance(value, dict) and value.get("max_gen_toks") not in (None, ""):
            try:
                return int(value["max_gen_toks"])
            except (TypeError, ValueError):
                return None
    return None


def _innermost_group(task: str, group_subtasks: dict[str, list[str]]) -> str | None:
    """The deepest group listing ``task`` (mmlu_philosophy -> mmlu_humanities, not mmlu); a group that lists
    itself, or a cycle of groups, counts each group once."""

    def depth(group: str, seen: frozenset[str] = frozenset()) -> int:
        parents = [g for g, members in group_subtasks.items() if group in members and g not in seen | {group}]
        return 1 + max(depth(p, seen | {group}) for p in parents) if parents else 0

    groups = [g for g, members in group_subtasks.items() if task in members and g != task]
    return max(groups, key=depth) if groups else None


def _old_samples_name(config: dict[str, Any], task: str) -> str:
    """0.4.0-0.4.2: ``<model_args>_<task>.jsonl``, '/' and '=' of the model args made '__'."""
    args = config.get("model_args") or ""
    if isinstance(args, dict):
        args = ",".join(f"{k}={v}" for k, v in args.items())
    return f"{re.sub('/|=', '__', str(args))}_{task}.jsonl"


def _effective(counts: Any) -> int | None:
    """The items lm-eval evaluated of a task (``n-samples``' effective count), None where not logged."""
    value = counts.get("effective") if isinstance(counts, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _wrong_types(data: dict[str, Any]) -> list[str]:
    """The fields of a results file that do not have lm-eval's types (each names the field and what it holds)."""
    wrong = [
        f"'{key}' is {type(data[key]).__name__}, not an object"
        for key in ("results", "config", "configs", "group_subtasks", "n-samples")
        if data.get(key) is not None and not isinstance(data[key], dict)
    ]
    groups = data.get("group_subtasks")
    if isinstance(groups, dict):
        wrong += [f"group {g!r} lists {type(m).__name__}, not task names" for g, m in groups.items()
                  if not isinstance(m, list)]  # fmt: skip
    return wrong


def _task_problem(task: str, task_config: Any, entry: Any) -> str | None:
    """Why one task of a results file cannot be read (a field of the wrong type), else None."""
    if not isinstance(task_config, dict):
        return f"task {task}: its config is {type(task_config).__name__}, not an object"
    if entry is not None and not isinstance(entry, dict):
        return f"task {task}: its 'results' entry is {type(entry).__name__}, not an object"
    repeats = task_config.get("repeats")
    whole = isinstance(repeats, int) and not isinstance(repeats, bool) or isinstance(repeats, str) and repeats.isdigit()
    if repeats is not None and not (whole and int(repeats) >= 1):
        return f"task {task}: repeats is {repeats!r}, not a whole number of at least 1"
    return None


def _task_runs(results_path: Path, date: str | None, data: dict[str, Any], found: Discovery) -> list[TaskRun]:
    """One TaskRun per task of a results file; ``date`` None: the 0.4.0-0.4.2 layout. A task with fields of the
    wrong type is a problem (its samples file is not also called an orphan), not a traceback."""
    config = data.get("config") or {}
    results = data.get("results") or {}
    group_subtasks = data.get("group_subtasks") or {}
    n_samples = data.get("n-samples") or {}
    configs = data.get("configs")
    if not isinstance(configs, dict):  # hand-reduced file: the tasks with per-filter metrics in "results"
        configs = {t: {} for t, v in results.items() if isinstance(v, dict) and any("," in k for k in v)}
    out = []
    for task, task_config in configs.items():
        task_config = {} if task_config is None else task_config
        name = f"samples_{task}_{date}.jsonl" if date else _old_samples_name(config, task)
        problem = _task_problem(task, task_config, results.get(task))
        if problem:
            found.problems.append({"path": str(results_path), "problem": f"{problem}; task skipped"})
            found.skipped.append(results_path.parent / name)
            continue
        seed, source = run_seed(config, task_config)
        keys = [k.split(",", 1) for k in (results.get(task) or {}) if "," in k]
        metrics = tuple(dict.fromkeys(m for m, _ in keys if not m.endswith("_stderr")))
        filters = tuple(f["name"] for f in task_config.get("filter_list") or [] if isinstance(f, dict) and "name" in f)
        filters = filters or tuple(dict.fromkeys(f for _, f in keys)) or ("none",)
        samples = results_path.parent / name
        samples, unusable = (samples, lfs_pointer(samples)) if samples.is_file() else compressed(samples)
        has_samples = samples.is_file()
        process = str(task_config.get("process_results") or "")
        out.append(
            TaskRun(
                task=task,
                results_path=results_path,
                date=date or dt.datetime.fromtimestamp(results_path.stat().st_mtime).strftime("%Y-%m-%dT%H-%M-%S.%f"),
                samples_path=samples if has_samples else None,
                seed=seed,
                seed_source=source,
                output_type=task_config.get("output_type"),
                filters=filters,
                metrics=metrics,
                group=_innermost_group(task, group_subtasks),
                n_expected=_effective(n_samples.get(task)),
                repeats=int(task_config.get("repeats") or 1),
                self_scored="postforget" in metrics or (not metrics and task.startswith("postforget_")),
                max_gen_toks=_max_gen_toks(config, task_config),
                response_prefix="Answer:" if "base_direct" in process else "",
                samples_bytes=samples.stat().st_size if has_samples else 0,
                unusable=unusable,
            )
        )
    return out


def _starts_like_results(path: Path) -> bool:
    """lm-eval writes "results" first; a file that cannot be opened may be one too (its error is named)."""
    try:
        with open(path, "rb") as f:
            return b'"results"' in f.read(64)
    except OSError:
        return True


def _read_results(path: Path) -> dict[str, Any] | str:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        return f"{CANNOT_READ} ({e.strerror}); its run is skipped: give this user read access"
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        return f"unreadable results file ({e}); its run is skipped"
    return data if isinstance(data, dict) else "not an lm-eval results file (not a JSON object); skipped"


def find_runs(root: str | os.PathLike[str]) -> Discovery:
    """Every lm-eval run under ``root`` (any depth), with unusable files listed as problems."""
    root = Path(root).absolute()  # samples.parquet keeps these paths for `show`, run from anywhere
    found = Discovery()
    used: set[Path] = set()
    named: set[tuple[Path, str]] = set()  # (folder, <time>) of results files skipped with their problem named
    samples_files: list[Path] = []
    without_configs: list[str] = []
    hidden: list[str] = []
    for dirpath, filenames in walk(root, found, hidden):
        for name in filenames:
            path = dirpath / name
            if SAMPLES_RE.match(name):
                samples_files.append(path)
                continue
            m = RESULTS_RE.match(name)
            if not name.endswith(".json") or name.startswith("samples_"):
                continue
            if not m and not _starts_like_results(path):
                continue  # any other JSON: lm-eval writes "results" first
            data = _read_results(path)
            if isinstance(data, str):
                if m or data.startswith(CANNOT_READ):
                    found.problems.append({"path": str(path), "problem": data})
                continue
            if not ({"config", "configs", "n-samples"} & data.keys()) or ("results" not in data):
                continue  # some other tool's JSON
            wrong = _wrong_types(data)
            if wrong:
                if m:
                    named.add((dirpath, m["date"]))
                problem = f"not an lm-eval results file as written ({'; '.join(wrong)}); its run is skipped"
                found.problems.append({"path": str(path), "problem": problem})
                continue
            if "configs" not in data:
                without_configs.append(str(path))
            runs = _task_runs(path, m["date"] if m else None, data, found)
            found.task_runs.extend(runs)
            used.update(r.samples_path for r in runs if r.samples_path)
    if hidden:
        more = f", ... ({len(hidden) - 5} more)" if len(hidden) > 5 else ""
        found.notes.append(
            f"hidden folders are not searched for runs (editor or notebook copies): {', '.join(hidden[:5])}{more}"
        )
    if without_configs:
        found.notes.append(
            f"{len(without_configs)} results file(s) have no 'configs' (e.g. {without_configs[0]}; hand-reduced, or "
            "written by another tool): tasks, metrics and filters are read from their 'results' entries, "
            "and multiple choice is recognised from the logged log-likelihoods"
        )
    for path in samples_files:
        named_already = path in found.skipped or (path.parent, SAMPLES_RE.match(path.name)["date"]) in named
        if path not in used and not named_already:
            problem = "samples file without a results file of the same <time> beside it; skipped"
            found.problems.append({"path": str(path), "problem": problem})
    return found
