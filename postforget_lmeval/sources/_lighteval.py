"""The LightEval source: runs written by LightEval 0.10 (the paper's pipeline) and 0.13.

A run is ``results/<model>/results_<date>.json`` plus, with ``--save-details``,
``details/<model>/<date>/details_<task>_<date>.parquet`` per task. The details hold no seed: a
details file takes the seed of the results file of the same ``<date>``
(``config_general.generation_parameters.seed`` in 0.10, ``config_general.model_config.
generation_parameters.seed`` in 0.13).

The items: :mod:`._lighteval_items` (task names, question, options, key); the details files:
:mod:`._lighteval_details`. This module finds the runs and reads one item back for ``show``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from postforget_lmeval.errors import PairingError
from postforget_lmeval.sources._base import (
    Discovery,
    LoadedItem,
    Progress,
    ReadRequest,
    RunRead,
    Source,
    TaskRun,
    read_each,
    walk,
)
from postforget_lmeval.sources._lighteval_items import METRIC, keys
from postforget_lmeval.sources._lmeval_runs import lfs_pointer

DATE = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?"
RESULTS_RE = re.compile(rf"^results_(?P<date>{DATE})\.json$")
DETAILS_RE = re.compile(rf"^details_(?P<task>.+)_(?P<date>{DATE})\.parquet$")


def _head(path: Path) -> bytes:
    """The first bytes of a file; none where it cannot be read (find_runs names it)."""
    try:
        with open(path, "rb") as f:
            return f.read(256)
    except OSError:
        return b""


def _results(path: Path, found: Discovery) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        found.problems.append({"path": str(path), "problem": f"results file cannot be read ({e.strerror}); skipped"})
        return None
    except ValueError:
        return None
    if not isinstance(data, dict) or "config_general" not in data:
        return None
    if not isinstance(data["config_general"], dict):
        found.problems.append({"path": str(path), "problem": "'config_general' is not an object; skipped"})
        return None
    return data


def _generation(config: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The run's generation parameters and where they sit: top level in 0.10, in the model config in 0.13."""
    for where, params in (
        ("config_general.generation_parameters", config.get("generation_parameters")),
        ("config_general.model_config.generation_parameters",
         (config.get("model_config") if isinstance(config.get("model_config"), dict) else {}).get(
             "generation_parameters")),
    ):  # fmt: skip
        if isinstance(params, dict):
            return params, where
    return {}, "config_general"


def _seed(config: dict[str, Any]) -> tuple[int | None, str]:
    params, where = _generation(config)
    if params.get("seed") is None:
        return None, f"none logged ({where} has no seed)"
    try:
        return int(params["seed"]), f"{where}.seed"
    except (TypeError, ValueError):
        return None, f"none usable ({where}.seed is {params['seed']!r}, not a whole number)"


def _task_config(data: dict[str, Any], logged: str) -> dict[str, Any]:
    tasks = data.get("config_tasks") if isinstance(data.get("config_tasks"), dict) else {}
    found = tasks.get(logged) or tasks.get(logged.rsplit("|", 1)[0])
    return found if isinstance(found, dict) else {}


class LightEvalSource(Source):
    """LightEval 0.10-0.13 output directories (results + ``--save-details`` parquet files)."""

    name = "lighteval"
    layout = "LightEval results_<time>.json with details/.../details_<task>_<time>.parquet"
    produced_by = "the --output-dir of a `lighteval ... --save-details` run"

    def matches(self, root: Path) -> bool:
        """A details parquet file, or a results file that opens with LightEval's ``config_general``."""
        for dirpath, names in walk(root, Discovery()):
            for n in names:
                if DETAILS_RE.match(n):
                    return True
                if RESULTS_RE.match(n) and b'"config_general"' in _head(dirpath / n):
                    return True
        return False

    def find_runs(self, root: Path) -> Discovery:
        found = Discovery()
        results: dict[str, tuple[Path, dict[str, Any]]] = {}
        details: list[tuple[Path, str, str]] = []
        for dirpath, names in walk(root, found):
            for n in names:
                path = dirpath / n
                if m := DETAILS_RE.match(n):
                    details.append((path, m["task"], m["date"]))
                elif (m := RESULTS_RE.match(n)) and (data := _results(path, found)) is not None:
                    if m["date"] in results:
                        found.problems.append({
                            "path": str(path),
                            "problem": f"a second results file of date {m['date']} (the first: "
                            f"{results[m['date']][0]}); its details are read with the first one's seed",
                        })  # fmt: skip
                        continue
                    results[m["date"]] = (path, data)
        if results and not details:
            first = min(path for path, _ in results.values())
            raise PairingError(
                f"{root} holds LightEval results files ({len(results)}, e.g. {first}) but no per-item details "
                "(details/<model>/<date>/details_<task>_<date>.parquet): LightEval writes them only with "
                "--save-details; re-run with it, or copy the details folder beside results/"
            )
        dated = {date for _, _, date in details}
        for date, (path, data) in sorted(results.items()):
            if date not in dated:
                tasks = ", ".join(k for k in (data.get("results") or {}) if k != "all" and ":_average" not in k)
                found.problems.append({
                    "path": str(path),
                    "problem": f"no details_<task>_{date}.parquet (run without --save-details?); "
                    f"task(s) {tasks or '?'} skipped",
                })  # fmt: skip
        for path, task, date in details:
            if date not in results:
                found.problems.append({
                    "path": str(path),
                    "problem": f"no results_{date}.json of the same date, so its seed is unknown; task {task} skipped",
                })  # fmt: skip
                continue
            results_path, data = results[date]
            seed, seed_source = _seed(data["config_general"])
            cfg = _task_config(data, task)
            gen = cfg.get("generation_size")
            if gen is None:
                gen = _generation(data["config_general"])[0].get("max_new_tokens")
            n = cfg.get("effective_num_docs")
            found.task_runs.append(TaskRun(
                task=task, results_path=results_path, date=date, samples_path=path, seed=seed,
                seed_source=seed_source, output_type="generate_until", filters=("none",), metrics=(METRIC,),
                group=None, n_expected=n if isinstance(n, int) and n > 0 else None, self_scored=True,
                max_gen_toks=gen if isinstance(gen, int) else None, samples_bytes=path.stat().st_size,
                unusable=lfs_pointer(path),
            ))  # fmt: skip
        return found

    def read(self, requests: Sequence[ReadRequest], jobs: int, progress: Progress | None) -> list[RunRead]:
        from postforget_lmeval.sources._lighteval_details import read_run  # pyarrow: only when reading details

        return read_each(requests, read_run, progress)

    def load_item(self, file: str, locator: int) -> LoadedItem:
        from postforget_lmeval.sources._lighteval_details import rows_of

        rows = rows_of(file, full=True)
        row = rows[int(locator)]
        doc_id, question, options, _ = keys(rows)[int(locator)]
        return LoadedItem(
            question=question or row["query"], options=options, gold=row["gold"] or None,
            responses=[str(r) for r in row["responses"]], prompt=row["prompt"], doc=row["doc"], doc_id=doc_id,
        )  # fmt: skip


SOURCE = LightEvalSource()
