"""The LightEval source: runs written by LightEval 0.10 (the paper's pipeline) and 0.13.

A run is ``results/<model>/results_<date>.json`` plus, with ``--save-details``,
``details/<model>/<date>/details_<task>_<date>.parquet`` per task. The details hold no seed: a
details file takes the seed of the results file of the same ``<date>``
(``config_general.generation_parameters.seed`` in 0.10, ``config_general.model_config.
generation_parameters.seed`` in 0.13).

Item key. 0.10 logs no id, 0.13 the dataset row (``doc.id``), and a base model's few-shot query
differs from an instruct model's chat query for the same item, so the key is taken from the item
itself, the same way for both versions (a 0.10 run pairs with a 0.13 run): the question after the
query's last ``Question:`` marker (quotes and spacing dropped) with the set of its option texts,
numbered by occurrence when an item repeats. ``doc_hash`` adds the gold option's text, so the
pairing's hash check refuses a join of two different items. Options are the ``A) ...`` lines of the
query (0.10 details store no choices for generative tasks, and the paper's tasks log letters as
choices); k is their count, else the number of choices the doc logs.

Paper task names (``community|mmlu_reasoning_letter:abstract_algebra|0``, ``bbh_reasoning_letter:
causal_judgment``, ``arc_reasoning_custom_prompt_letter:easy`` ...) map onto the catalog's
sub-benchmarks; any other task keeps its own name (without suite and few-shot count).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from postforget_lmeval import catalog
from postforget_lmeval.results import PairingError
from postforget_lmeval.sources.base import (
    Discovery,
    LoadedItem,
    Problem,
    Progress,
    ReadRequest,
    RunRead,
    Source,
    TaskRun,
    item_frame,
)
from postforget_lmeval.sources.lmeval_layout import lfs_pointer

DATE = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?"
RESULTS_RE = re.compile(rf"^results_(?P<date>{DATE})\.json$")
DETAILS_RE = re.compile(rf"^details_(?P<task>.+)_(?P<date>{DATE})\.parquet$")
TASK_RE = re.compile(r"^(?P<bench>.+?)_reasoning(?:_custom)?(?:_prompt)?_letter:(?P<subset>.+)$")
BENCHMARKS = {
    "mmlu": "mmlu", "bbh": "bbh", "gpqa": "gpqa", "musr": "musr", "arc": "arc", "truthfulqa": "truthfulqa",
    "hellaswag": "hellaswag", "social_iqa": "siqa", "mctest": "mctest", "piqa": "piqa",
    "commonsense_qa": "commonsenseqa", "salad_bench": "saladbench",
}  # fmt: skip
"""The paper's LightEval task namespaces -> the catalog's benchmark names."""
SUBSETS = {"causal_judgment": "causal_judgement"}  # LightEval's BBH spelling -> the dataset's
HIDDEN_OPTIONS_K = {"bbh_object_counting": 19.0}  # the paper shows no options; the answer is one of 19 letters
OPTION_RE = re.compile(r"^\s*(\()?([A-Z])\)\s?(.*)$")
METRIC = "extractive_match"


def _task_name(logged: str) -> str:
    """``community|mmlu_reasoning_letter:x|0`` (0.10) or ``mmlu_reasoning_letter:x|0`` (0.13) -> the task."""
    parts = logged.split("|")
    if len(parts) >= 2 and parts[-1].isdigit():
        parts = parts[:-1]
    return parts[-1]


def subtask_of(logged: str) -> tuple[str, str]:
    """(sub-benchmark, category) of a logged LightEval task name."""
    name = _task_name(logged)
    m = TASK_RE.match(name)
    if m and m["bench"] in BENCHMARKS:
        candidate = f"{BENCHMARKS[m['bench']]}_{SUBSETS.get(m['subset'], m['subset'])}"
        try:
            return candidate, catalog.by_subtask(candidate).category
        except KeyError:
            pass
    return name, name


def _option_block(lines: list[str], paren: bool) -> tuple[int | None, list[str]]:
    """(first line, options) of the last run of consecutive ``A) ..``, ``B) ..`` lines (``(A) ..`` if paren)."""
    start, options = None, []
    for i, line in enumerate(lines):
        m = OPTION_RE.match(line)
        if not m or bool(m[1]) != paren:
            continue
        if m[2] == "A":
            start, options = i, [m[3]]
        elif start is not None and i == start + len(options) and ord(m[2]) == 65 + len(options):
            options.append(m[3])
    return start, options


def parse_query(query: str) -> tuple[str, list[str]]:
    """(question, options) of the item a LightEval query asks, exemplars and instructions left out.

    The item is what follows the last ``Question:`` (few-shot exemplars come before it); its options
    are the last ``A) ..`` block there, else BBH's own ``(A) ..`` block.
    """
    cut = query.rfind("Question:")
    lines = (query[cut + len("Question:"):] if cut >= 0 else query).split("\n")
    start, options = _option_block(lines, paren=False)
    if start is None:
        start, options = _option_block(lines, paren=True)
    question = "\n".join(lines if start is None else lines[:start])
    options = [o.strip() for o in options]
    if question.lstrip().startswith('"') and options and options[-1].endswith('"'):
        options[-1] = options[-1][:-1].rstrip()  # the chat prompt's closing quote after BBH's own options
    return re.sub(r"\s+", " ", question).strip().strip("\"'").strip(), options


def _item_key(question: str, options: list[str], gold: str) -> tuple[str, str]:
    """(key, doc_hash) of one item, both blind to the order of its options.

    The key is the question and the set of option texts; the hash adds the gold option's text. So an
    item whose options a side shuffled differently (the paper's GPQA draws the gold position from the
    global random state) still pairs, and a join of two different items is refused by the hash check.
    """
    bare = sorted(o.strip("\"' ") for o in options)
    golds = sorted(options[ord(g) - 65].strip("\"' ") if 0 <= ord(g) - 65 < len(options) else g for g in gold)
    key = json.dumps([question, bare], ensure_ascii=False)
    return key, hashlib.sha256(json.dumps([bare, golds], ensure_ascii=False).encode("utf-8")).hexdigest()


def _letters(indices: Any) -> str:
    idx = indices if isinstance(indices, (list, tuple)) else [indices]
    return "".join(chr(65 + int(i)) for i in idx if i is not None and int(i) >= 0)


_V013_FIELDS = ("doc.query", "doc.choices", "doc.gold_index", "doc.specific", "metric", "model_response.text",
                "model_response.text_post_processed")  # fmt: skip
_V010_FIELDS = ("example", "gold", "metrics", "predictions", "specifics")


def _has_field(schema: pa.Schema, dotted: str) -> bool:
    head, _, child = dotted.partition(".")
    if head not in schema.names:
        return False
    kind = schema.field(head).type
    return not child or (pa.types.is_struct(kind) and kind.get_field_index(child) >= 0)


def _rows(path: str, full: bool = False) -> list[dict[str, Any]]:
    """One dict per details row, the same fields for both versions.

    Only the fields pairing needs are read (token ids and log-probs stay on disk); ``full`` reads the
    whole row, with the prompt and the logged doc, for ``load_item``.
    """
    schema = pq.read_schema(path)
    names = schema.names
    if "doc" in names:  # 0.13: three struct columns; a nested selection comes back as flat columns
        present = [f for f in _V013_FIELDS if _has_field(schema, f)]
        table = pq.read_table(path, columns=None if full else present)
        if full:
            docs, metrics, resps = (
                table.column(c).to_pylist() if c in table.column_names else [{}] * table.num_rows
                for c in ("doc", "metric", "model_response")
            )
        else:
            flat = {f.split(".")[-1]: table.column(f.split(".")[-1]).to_pylist() for f in present if "." in f}
            none = [None] * table.num_rows
            docs = [dict(zip(("query", "choices", "gold_index", "specific"), v)) for v in zip(
                *(flat.get(k, none) for k in ("query", "choices", "gold_index", "specific")))]  # fmt: skip
            metrics = table.column("metric").to_pylist() if "metric" in present else none
            resps = [{"text": t, "text_post_processed": p}
                     for t, p in zip(flat.get("text", none), flat.get("text_post_processed", none))]  # fmt: skip
        out = []
        for doc, metric, resp in zip(docs, metrics, resps):
            texts = list(resp.get("text") or [])
            out.append({
                "query": doc.get("query") or "", "choices": list(doc.get("choices") or []),
                "gold": _letters(doc.get("gold_index")),
                "extracted": list((doc.get("specific") or {}).get("extracted_predictions") or []),
                "score": (metric or {}).get(METRIC), "responses": texts,
                "scored_text": list(resp.get("text_post_processed") or []) or texts,
                "prompt": resp.get("input"), "doc": doc,
            })  # fmt: skip
        return out
    cols = (*_V010_FIELDS, "full_prompt")
    table = pq.read_table(path, columns=[c for c in cols if c in names and (full or c != "full_prompt")])
    data = {c: table.column(c).to_pylist() if c in table.column_names else [None] * table.num_rows for c in cols}
    return [
        {
            "query": ex or "", "choices": [], "gold": "".join(g or []),
            "extracted": list((sp or {}).get("extracted_predictions") or []),
            "score": (m or {}).get(METRIC), "responses": list(pr or []), "scored_text": list(pr or []),
            "prompt": fp, "doc": {"example": ex, "gold": g, "specifics": sp},
        }
        for ex, g, m, pr, sp, fp in zip(*(data[c] for c in cols))
    ]  # fmt: skip


def _keys(rows: list[dict[str, Any]]) -> list[tuple[int, str, list[str], str]]:
    """(doc_id, question, options, doc_hash) per row; doc_id numbers repeats of one key in file order."""
    seen: Counter[str] = Counter()
    out = []
    for row in rows:
        question, options = parse_query(row["query"])
        if not options and any(len(str(c).strip()) > 1 for c in row["choices"]):
            options = [str(c).strip() for c in row["choices"]]  # a task that logs option texts as choices
        key, doc_hash = _item_key(question, options, row["gold"])
        nth = seen[key]
        seen[key] += 1
        doc_id = int(hashlib.sha256(f"{nth}\x00{key}".encode()).hexdigest()[:15], 16)  # stable, fits int64
        out.append((doc_id, question, options, doc_hash))
    return out


def _read_one(req: ReadRequest) -> RunRead:
    from postforget_lmeval.rescoring import rescore

    run, path = req.run, str(req.run.samples_path)
    subtask, category = subtask_of(run.task)
    fmt = "letters" if subtask == "saladbench_mrq" else "letter"
    rows = _rows(path)
    cols: dict[str, list[Any]] = {c: [] for c in (
        "doc_id", "doc_hash", "correct", "k", "answer", "gold", "status", "locator", "response_chars",
        "subtask", "category", *(("correct_logged",) if req.rescore else ()),
    )}  # fmt: skip
    missing = not_rescored = 0
    for i, (row, (doc_id, _, options, doc_hash)) in enumerate(zip(rows, _keys(rows))):
        if row["score"] is None:
            missing += 1
            continue
        logged = int(round(float(row["score"])))
        k = float(len(row["choices"]) or len(options)) or HIDDEN_OPTIONS_K.get(subtask, float("nan"))
        answer = row["extracted"][0] if row["extracted"] else None
        status = "answered" if answer else "no_answer"
        correct = logged
        if req.rescore:
            if options and row["gold"] and row["scored_text"]:
                got = rescore(row["scored_text"][0], options, row["gold"], fmt, req.rescore)
                answer, status, correct = got.answer, got.status, got.correct
            else:
                not_rescored += 1
            cols["correct_logged"].append(logged)
        response = row["responses"][0] if row["responses"] else None
        for name, value in (
            ("doc_id", doc_id), ("doc_hash", doc_hash),
            ("correct", correct), ("k", k), ("answer", answer), ("gold", row["gold"] or None), ("status", status),
            ("locator", i), ("response_chars", float("nan") if response is None else float(len(response))),
            ("subtask", subtask), ("category", category),
        ):  # fmt: skip
            cols[name].append(value)
    problems = []
    if missing:
        problems.append(Problem(path, f"{missing} row(s) without metric {METRIC} skipped", "no_metric", missing))
    if not_rescored:
        problems.append(Problem(
            path, f"{not_rescored} row(s) cannot be rescored (no options in the prompt or no gold); their logged "
            "score is used", "not_rescored", not_rescored,
        ))  # fmt: skip
    if run.n_expected is not None and len(rows) < run.n_expected:
        problems.append(
            Problem(path, f"holds {len(rows)} of the {run.n_expected} items LightEval evaluated", "incomplete")
        )
    info = {"filter": "none", "metric": METRIC, "lines": len(rows), "items": len(set(cols["doc_id"])), "extractors": []}
    return RunRead(req, item_frame(run, path, cols), problems, [], info)


def _results(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "config_general" in data else None


def _generation(config: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The run's generation parameters and where they sit: top level in 0.10, in the model config in 0.13."""
    for where, params in (
        ("config_general.generation_parameters", config.get("generation_parameters")),
        ("config_general.model_config.generation_parameters",
         (config.get("model_config") or {}).get("generation_parameters")),
    ):  # fmt: skip
        if isinstance(params, dict):
            return params, where
    return {}, "config_general"


def _seed(config: dict[str, Any]) -> tuple[int | None, str]:
    params, where = _generation(config)
    if params.get("seed") is None:
        return None, f"none logged ({where} has no seed)"
    return int(params["seed"]), f"{where}.seed"


def _task_config(data: dict[str, Any], logged: str) -> dict[str, Any]:
    tasks = data.get("config_tasks") or {}
    return tasks.get(logged) or tasks.get(logged.rsplit("|", 1)[0]) or {}


class LightEvalSource(Source):
    """LightEval 0.10-0.13 output directories (results + ``--save-details`` parquet files)."""

    name = "lighteval"

    def matches(self, root: Path) -> bool:
        """A details parquet file, or a results file that opens with LightEval's ``config_general``."""
        for dirpath, dirnames, names in os.walk(root):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for n in names:
                if DETAILS_RE.match(n):
                    return True
                if RESULTS_RE.match(n):
                    with open(Path(dirpath) / n, "rb") as f:
                        if b'"config_general"' in f.read(256):
                            return True
        return False

    def find_runs(self, root: Path) -> Discovery:
        found = Discovery(Path(root))
        results: dict[str, tuple[Path, dict[str, Any]]] = {}
        details: list[tuple[Path, str, str]] = []
        for dirpath, dirnames, names in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for n in sorted(names):
                path = Path(dirpath) / n
                if m := DETAILS_RE.match(n):
                    details.append((path, m["task"], m["date"]))
                elif (m := RESULTS_RE.match(n)) and (data := _results(path)) is not None:
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
        total, done, out = sum(r.run.samples_bytes for r in requests), 0, []
        for req in requests:
            out.append(_read_one(req))
            done += req.run.samples_bytes
            if progress:
                progress(done, total)
        return out

    def load_item(self, file: str, locator: int) -> LoadedItem:
        rows = _rows(file, full=True)
        row = rows[int(locator)]
        doc_id, question, options, _ = _keys(rows)[int(locator)]
        return LoadedItem(
            question=question or row["query"], options=options, gold=row["gold"] or None,
            responses=[str(r) for r in row["responses"]], prompt=row["prompt"], doc=row["doc"], doc_id=doc_id,
        )  # fmt: skip


SOURCE = LightEvalSource()
