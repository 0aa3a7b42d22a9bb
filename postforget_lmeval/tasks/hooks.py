"""The functions lm-eval calls for a postforget task (through ``task_configs/utils.py``).

``process_docs`` turns each benchmark's published rows into one normalised item (``_rows.py``:
question text, option texts, gold answer, sub-benchmark and category); the prompt renderers and
``process_results`` only ever read those ``pf_*`` fields. Because the chat and base variants of a
sub-benchmark share ``process_docs``, lm-eval logs the same ``doc`` and ``doc_hash`` for both (and for the
log-likelihood twin, which scores each option's text as a continuation: ``process_results_ll``); the
instruction line and the exemplars are looked up at render time and never stored in the doc.
"""

from __future__ import annotations

import hashlib
import logging
from collections import defaultdict
from collections.abc import Sequence
from functools import partial
from typing import Any

from postforget_lmeval.metrics import k_eff
from postforget_lmeval.scoring import (
    EXTRACTOR_NAME,
    EXTRACTOR_VERSION,
    LETTERS,
    extract_answer,
    get_format,
    option_letter,
)
from postforget_lmeval.tasks import _exemplars, _prompts
from postforget_lmeval.tasks._rows import Doc, normaliser, unscorable
from postforget_lmeval.tasks.catalog import SUBTASKS, Subtask, by_subtask

log = logging.getLogger("postforget_lmeval")

EXTRACTOR = f"{EXTRACTOR_NAME}/{EXTRACTOR_VERSION}"
LOGLIKELIHOOD = "loglikelihood"
"""The twins' scorer, in the record's ``extractor`` field: the option of highest log-likelihood."""


def process_docs(subtask: Subtask, dataset: Any) -> Any:
    """Normalise a ``datasets.Dataset``; rows that cannot be scored are dropped deterministically and logged."""
    normalise = normaliser(subtask)
    items, dropped = [], defaultdict(list)
    for i, doc in enumerate(dataset):
        item = normalise(doc)
        reason = unscorable(item, subtask.answer_format)
        if reason:
            dropped[reason].append(i)
        items.append(None if reason else item)
    if dropped:
        total = sum(len(rows) for rows in dropped.values())
        reasons = "; ".join(
            f"{len(rows)} with {reason} (rows {rows[:20]}{' ...' if len(rows) > 20 else ''})"
            for reason, rows in dropped.items()
        )
        log.warning("%s: dropped %d of %d row(s) that cannot be scored: %s", subtask.task, total, len(items), reasons)
        dataset = dataset.select([i for i, item in enumerate(items) if item is not None])
        items = [item for item in items if item is not None]
    columns = {
        "pf_question": [it[0] for it in items],
        "pf_options": [it[1] for it in items],
        "pf_gold": [it[2] for it in items],
        "pf_format": [subtask.answer_format] * len(items),
        "pf_subtask": [subtask.subtask] * len(items),
        "pf_category": [subtask.category] * len(items),
        "pf_cluster": _clusters(subtask, dataset),
    }
    for name, values in columns.items():
        if name in dataset.column_names:
            dataset = dataset.remove_columns(name)
        dataset = dataset.add_column(name, values)
    return dataset


def _clusters(subtask: Subtask, dataset: Any) -> list[str | None]:
    """Per row, a short hash of the text it shares with other rows (``Subtask.cluster_field``), else None: the
    record's ``cluster``, so that the bootstrap resamples a story's questions together."""
    if subtask.cluster_field is None:
        return [None] * len(dataset)
    texts = dataset[subtask.cluster_field]
    return [hashlib.sha256(str(text).encode("utf-8")).hexdigest()[:16] for text in texts]


def _instruction(doc: Doc) -> str:
    entry = by_subtask(doc["pf_subtask"])
    return _prompts.instruction(entry.benchmark, entry.name)


def doc_to_text_chat(doc: Doc) -> str:
    return _prompts.render_chat(doc["pf_question"], doc["pf_options"], doc["pf_format"], _instruction(doc))


def doc_to_text_base(doc: Doc) -> str:
    return _prompts.question_block(doc["pf_question"], doc["pf_options"], doc["pf_format"], cot=True)


def doc_to_text_base_direct(doc: Doc) -> str:
    return _prompts.question_block(doc["pf_question"], doc["pf_options"], doc["pf_format"], cot=False)


def doc_to_target(doc: Doc) -> str:
    return doc["pf_gold"]


def fewshot_target_cot(doc: Doc) -> str:
    """An exemplar's reasoning and answer line (lm-eval's few-shot ``doc_to_target``)."""
    return _prompts.exemplar_target(doc["pf_reasoning"], doc["pf_gold"], cot=True)


def _record(doc: Doc, variant: str, answer: str | None, status: str, correct: int, scorer: str) -> dict[str, Any]:
    """The ``postforget`` per-sample record (docs/CONTRACT.md), the same for every variant."""
    options: Sequence[str] = doc["pf_options"]
    return {
        "subtask": doc["pf_subtask"],
        "benchmark": doc["pf_subtask"].split("_", 1)[0],
        "category": doc["pf_category"],
        "variant": variant,
        "k": get_format(doc["pf_format"]).chance_k(len(options)),
        "n_options": len(options),
        "answer": answer,
        "gold": doc["pf_gold"],
        "status": status,
        "correct": correct,
        "extractor": scorer,
        "cluster": doc.get("pf_cluster"),
    }


def _score(doc: Doc, response: str, variant: str) -> dict[str, Any]:
    found = extract_answer(response, doc["pf_options"], doc["pf_format"])
    correct = found.correct(doc["pf_gold"])
    record = _record(doc, variant, found.answer, found.status, correct, EXTRACTOR)
    return {"acc": correct, "answered": int(found.status == "answered"), "postforget": record}


def process_results_chat(doc: Doc, results: list[str]) -> dict[str, Any]:
    return _score(doc, results[0], "chat")


def process_results_base(doc: Doc, results: list[str]) -> dict[str, Any]:
    return _score(doc, results[0], "base")


def process_results_base_direct(doc: Doc, results: list[str]) -> dict[str, Any]:
    """The prompt ended at ``Answer:``, so the generation starts with the answer itself."""
    return _score(doc, "Answer:" + results[0], "base")


def doc_to_text_ll(doc: Doc) -> str:
    return _prompts.cloze(doc["pf_question"], _instruction(doc))


def doc_to_choice(doc: Doc) -> list[str]:
    """The twin's continuations: the option texts themselves, so the score is the knowledge, not a letter."""
    return list(doc["pf_options"])


def doc_to_target_index(doc: Doc) -> int:
    return LETTERS.index(doc["pf_gold"])


def process_results_ll(doc: Doc, results: list[tuple[float, bool]]) -> dict[str, Any]:
    """The option with the highest log-likelihood is the answer (lm-eval's ``acc``: the first of ties)."""
    lls = [float(ll) for ll, _ in results]
    best = max(range(len(lls)), key=lls.__getitem__)
    correct = int(option_letter(best) == doc["pf_gold"])
    record = _record(doc, "ll", option_letter(best), "answered", correct, LOGLIKELIHOOD)
    return {"acc": correct, "postforget": {**record, "option_ll": lls}}


def records_k_eff(records: list[dict[str, Any]]) -> str:
    """Aggregate of the ``postforget`` metric, the per-item record: lm-eval's results table shows every metric,
    so this one says what it is, with the task's k_eff = 1/mean(1/k_i) (docs/method.md)."""
    return f"per-item record, k_eff {k_eff([r['k'] for r in records]):.2f}"


def task_hooks() -> dict[str, Any]:
    """Per-task names for the YAMLs' ``!function utils.<name>`` lines.

    ``process_docs_<task>`` for every catalog entry; for each base task ``fewshot_<task>`` (its
    exemplars, unless they come from a dataset split). ``description_<task>`` is resolved
    separately, on demand, by :func:`description`.
    """
    hooks: dict[str, Any] = {f"process_docs_{s.task}": partial(process_docs, s) for s in SUBTASKS}
    for s in SUBTASKS:
        if s.in_suite and s.fewshot_split is None:
            hooks[f"fewshot_{s.base_task}"] = partial(_exemplars.fewshot_docs, s)
    return hooks


def description(base_task: str) -> str:
    """The base task's lm-eval ``description`` (instruction line and a blank line, or "")."""
    s = by_subtask(base_task.removeprefix("postforget_").removesuffix("_base"))
    return _prompts.base_header(_prompts.instruction(s.benchmark, s.name))
