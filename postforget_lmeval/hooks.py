"""The functions lm-eval calls for a postforget task (through ``task_configs/utils.py``).

``process_docs`` turns each benchmark's published rows into one normalised item (question text,
option texts, gold answer, sub-benchmark and category); the prompt renderers and
``process_results`` only ever read those ``pf_*`` fields. Because the chat and base variants of a
sub-benchmark share ``process_docs``, lm-eval logs the same ``doc`` and ``doc_hash`` for both.
"""

from __future__ import annotations

import ast
import hashlib
import logging
import random
import re
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from postforget_lmeval import prompts
from postforget_lmeval.catalog import SUBTASKS, Subtask
from postforget_lmeval.extraction import extract_answer
from postforget_lmeval.metrics import k_eff

log = logging.getLogger("postforget_lmeval")

LETTERS = prompts.LETTERS
# Fixed seed for the per-item option shuffles (TruthfulQA, GPQA): same order for every model and run.
SHUFFLE_SEED = 1234
BBH_NUMBER_OPTIONS = [str(i) for i in range(19)]

Doc = dict[str, Any]
Item = tuple[str, list[str], str]  # question, option texts, gold answer
Normaliser = Callable[[Doc], Item | None]


def stable_shuffle(options: list[str], key: str) -> list[str]:
    """Shuffle that depends only on the item's text, never on process state or hash seeds."""
    digest = hashlib.sha256(f"{SHUFFLE_SEED}:{key}".encode()).hexdigest()
    shuffled = list(options)
    random.Random(int(digest[:16], 16)).shuffle(shuffled)
    return shuffled


def _clean(text: str | None) -> str:
    """HellaSwag/GPQA artefacts: WikiHow ``[title]`` markers and bracketed tags, doubled spaces."""
    text = (text or "").strip().replace(" [title]", ". ")
    text = re.sub(r"\[.*?\]", "", text)
    return re.sub(r"  +", " ", text)


def _mmlu(doc: Doc) -> Item:
    return doc["question"], list(doc["choices"]), LETTERS[int(doc["answer"])]


_BBH_OPTION = re.compile(r"^\(([A-R])\)\s?(.*)$")
# Tasks whose inputs list no options: the answer set is fixed by the task.
_BBH_FIXED_OPTIONS: dict[str, list[str]] = {
    "boolean_expressions": ["True", "False"],
    "sports_understanding": ["yes", "no"],
    "web_of_lies": ["Yes", "No"],
    "navigate": ["Yes", "No"],
    "causal_judgement": ["Yes", "No"],
    "formal_fallacies": ["valid", "invalid"],
}


def _bbh(task: str, doc: Doc) -> Item | None:
    """Split BBH's ``input`` into question and options; ``None`` for a row whose target is not an option."""
    text, target = doc["input"].strip(), doc["target"].strip()
    if task == "object_counting":
        return text, BBH_NUMBER_OPTIONS, target if target in BBH_NUMBER_OPTIONS else None
    question, sep, block = text.partition("\nOptions:\n")
    options: list[str] = []
    if sep:
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        lettered = [_BBH_OPTION.match(line) for line in lines]
        if all(lettered):
            options = [m.group(2).strip() for m in lettered if m]
            letters = [m.group(1) for m in lettered if m]
            if letters != list(LETTERS[: len(letters)]):
                return None
            gold = target.strip("()")
            return (question, options, gold) if gold in letters else None
        options = [line.lstrip("- ").strip() for line in lines]
    else:
        question = text
    options = options or _BBH_FIXED_OPTIONS.get(task, [])
    folded = [o.casefold() for o in options]
    if target.casefold() not in folded:
        return None
    return question, options, LETTERS[folded.index(target.casefold())]


def _gpqa(doc: Doc) -> Item:
    correct = _clean(doc["Correct Answer"])
    options = [correct] + [_clean(doc[f"Incorrect Answer {i}"]) for i in (1, 2, 3)]
    options = stable_shuffle(options, doc["Question"])
    return doc["Question"].strip(), options, LETTERS[options.index(correct)]


def _musr(doc: Doc) -> Item:
    options = ast.literal_eval(doc["choices"])
    question = f"{doc['narrative'].strip()}\n\n{doc['question'].strip()}"
    return question, [str(o) for o in options], LETTERS[int(doc["answer_index"])]


def _arc(doc: Doc) -> Item | None:
    labels = list(doc["choices"]["label"])
    if doc["answerKey"] not in labels:
        return None
    return doc["question"], list(doc["choices"]["text"]), LETTERS[labels.index(doc["answerKey"])]


def _truthfulqa(doc: Doc) -> Item:
    """mc1 lists the correct answer first in every item (SPEC §4): shuffle, or "always A" wins."""
    targets = doc["mc1_targets"]
    correct = targets["choices"][list(targets["labels"]).index(1)]
    options = stable_shuffle(list(targets["choices"]), doc["question"])
    return doc["question"], options, LETTERS[options.index(correct)]


def _hellaswag(doc: Doc) -> Item | None:
    label = str(doc["label"]).strip()
    if not label.lstrip("-").isdigit() or not 0 <= int(label) < len(doc["endings"]):
        return None  # the unlabelled test split
    context = f"{doc['activity_label']}: {doc['ctx_a']} {doc['ctx_b'].capitalize()}"
    question = f"Which ending is the most likely continuation of this text?\n{_clean(context)}"
    return question, [_clean(e) for e in doc["endings"]], LETTERS[int(label)]


def _siqa(doc: Doc) -> Item:
    question = f"{doc['context'].strip()}\n{doc['question'].strip()}"
    return question, [doc["answerA"], doc["answerB"], doc["answerC"]], LETTERS[int(doc["label"]) - 1]


def _mctest(doc: Doc) -> Item:
    options = doc["answer_options"]
    story = doc["story"].replace("\\newline", "\n").strip()
    question = f"{story}\n\n{doc['question'].strip()}"
    return question, [options[letter] for letter in "ABCD"], doc["answer"].strip()


def _piqa(doc: Doc) -> Item:
    question = f"Which solution achieves the goal?\nGoal: {doc['goal'].strip()}"
    return question, [doc["sol1"], doc["sol2"]], LETTERS[int(doc["label"])]


def _commonsenseqa(doc: Doc) -> Item:
    labels = list(doc["choices"]["label"])
    return doc["question"], list(doc["choices"]["text"]), LETTERS[labels.index(doc["answerKey"])]


_SALAD_OPTION = re.compile(r"([A-Z])\.\s+(.*?)\s*;\s*(?=[A-Z]\.\s|$)", re.S)
_SALAD_FORMAT_LINE = re.compile(r"^.*(<ans>|<eoa>).*$\n?", re.M)


def _saladbench(doc: Doc) -> Item | None:
    """Multiple-response items: ``choices`` is ``"A. ...; B. ...; C. ...;"``, ``gt`` the correct letters.

    The same harmful ``baseq`` appears under different questions (which responses are safe, which
    are not), and only ``mcq`` says which: the question is ``mcq`` up to its first option, without
    its own answer-format line (ours replaces it).
    """
    parts = _SALAD_OPTION.findall(doc["choices"].strip())
    letters = [letter for letter, _ in parts]
    if not parts or letters != list(LETTERS[: len(letters)]):
        return None
    gold = "".join(sorted(set(re.sub(r"[^A-Z]", "", str(doc["gt"]).upper()))))
    if not gold or any(g not in letters for g in gold):
        return None
    mcq = doc.get("mcq") or doc["baseq"]
    first = mcq.find(f"A. {parts[0][1][:40]}")
    stem = _SALAD_FORMAT_LINE.sub("", mcq[:first] if first > 0 else mcq).strip()
    return stem, [text for _, text in parts], gold


def _normaliser(subtask: Subtask) -> Normaliser:
    if subtask.benchmark == "bbh":
        return partial(_bbh, subtask.name)
    table: dict[str, Normaliser] = {
        "mmlu": _mmlu, "gpqa": _gpqa, "musr": _musr, "arc": _arc, "truthfulqa": _truthfulqa,
        "hellaswag": _hellaswag, "siqa": _siqa, "mctest": _mctest, "piqa": _piqa,
        "commonsenseqa": _commonsenseqa, "saladbench": _saladbench, "demo": _mmlu,
    }
    return table[subtask.benchmark]


def chance_k(n_options: int, answer_format: str) -> float:
    """Equally likely guesses: the option count, or every non-empty subset for multi-answer items."""
    return float(2**n_options - 1) if answer_format == "letters" else float(n_options)


def process_docs(subtask: Subtask, dataset: Any) -> Any:
    """Normalise a ``datasets.Dataset``; malformed rows are dropped deterministically and logged."""
    normalise = _normaliser(subtask)
    items = [normalise(doc) for doc in dataset]
    bad = [i for i, item in enumerate(items) if item is None]
    if bad:
        log.warning(
            "%s: dropped %d malformed row(s) whose gold answer is not one of the options "
            "(dataset row indices %s)", subtask.task, len(bad), bad[:20],
        )
        dataset = dataset.select([i for i, item in enumerate(items) if item is not None])
        items = [item for item in items if item is not None]
    columns = {
        "pf_question": [it[0] for it in items],
        "pf_options": [it[1] for it in items],
        "pf_gold": [it[2] for it in items],
        "pf_format": [subtask.answer_format] * len(items),
        "pf_subtask": [subtask.subtask] * len(items),
        "pf_category": [subtask.category] * len(items),
    }
    for name, values in columns.items():
        if name in dataset.column_names:
            dataset = dataset.remove_columns(name)
        dataset = dataset.add_column(name, values)
    return dataset


def process_docs_functions() -> dict[str, Callable[[Any], Any]]:
    """``process_docs_<task>`` for every catalog entry, for the YAMLs' ``!function`` lines."""
    return {f"process_docs_{s.task}": partial(process_docs, s) for s in SUBTASKS}


def doc_to_text_chat(doc: Doc) -> str:
    return prompts.render_chat(doc["pf_question"], doc["pf_options"], doc["pf_format"])


def doc_to_text_base(doc: Doc) -> str:
    return prompts.render_base(doc["pf_question"], doc["pf_options"], doc["pf_format"], cot=True)


def doc_to_text_base_direct(doc: Doc) -> str:
    return prompts.render_base(doc["pf_question"], doc["pf_options"], doc["pf_format"], cot=False)


def doc_to_target(doc: Doc) -> str:
    return doc["pf_gold"]


def _score(doc: Doc, response: str, variant: str) -> dict[str, Any]:
    options: Sequence[str] = doc["pf_options"]
    found = extract_answer(response, options, doc["pf_format"])
    correct = int(found.status == "answered" and found.answer == doc["pf_gold"])
    record = {
        "subtask": doc["pf_subtask"],
        "benchmark": doc["pf_subtask"].split("_", 1)[0],
        "category": doc["pf_category"],
        "variant": variant,
        "k": chance_k(len(options), doc["pf_format"]),
        "n_options": len(options),
        "answer": found.answer,
        "gold": doc["pf_gold"],
        "status": found.status,
        "correct": correct,
    }
    return {"acc": correct, "answered": int(found.status == "answered"), "postforget": record}


def process_results_chat(doc: Doc, results: list[str]) -> dict[str, Any]:
    return _score(doc, results[0], "chat")


def process_results_base(doc: Doc, results: list[str]) -> dict[str, Any]:
    return _score(doc, results[0], "base")


def process_results_base_direct(doc: Doc, results: list[str]) -> dict[str, Any]:
    """The prompt ended at ``Answer:``, so the generation starts with the answer itself."""
    return _score(doc, "Answer:" + results[0], "base")


def records_k_eff(records: list[dict[str, Any]]) -> float:
    """Aggregate of the ``postforget`` metric: the task's k_eff = 1/mean(1/k_i) (SPEC §2)."""
    return k_eff([r["k"] for r in records])
