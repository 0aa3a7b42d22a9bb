"""Each benchmark's published rows turned into one item: question text, option texts, gold answer.

One function per benchmark reads that dataset's own columns (as published on the Hugging Face Hub)
and returns ``(question, options, gold)``, ``None`` when the row's gold answer is not one of its
options, or a string saying why else the row cannot be read. Rows that cannot be scored for other
reasons (a single option, the gold text repeated among the wrong options) are caught after this
step by :func:`unscorable`, the same for every benchmark. The prompt renderers never read a dataset
column directly, only these items.
"""

from __future__ import annotations

import ast
import hashlib
import random
import re
from collections.abc import Callable
from functools import partial
from typing import Any

from postforget_lmeval.scoring import LETTERS, get_format, option_letter
from postforget_lmeval.tasks.catalog import Subtask

# Fixed seed for the per-item option shuffles (TruthfulQA, GPQA): same order for every model and run.
SHUFFLE_SEED = 1234
BBH_NUMBER_OPTIONS = [str(i) for i in range(19)]

Doc = dict[str, Any]
Item = tuple[str, list[str], str]  # question, option texts, gold answer
Normaliser = Callable[[Doc], Item | str | None]


def stable_shuffle(options: list[str], key: str) -> list[str]:
    """Shuffle that depends only on the item's text, never on process state or hash seeds."""
    digest = hashlib.sha256(f"{SHUFFLE_SEED}:{key}".encode()).hexdigest()
    shuffled = list(options)
    random.Random(int(digest[:16], 16)).shuffle(shuffled)
    return shuffled


def _wikihow(text: str | None) -> str:
    """HellaSwag's WikiHow contexts carry ``[title]``/``[header]``/``[step]`` markup: drop it."""
    text = (text or "").strip().replace(" [title]", ". ")
    text = re.sub(r"\[[a-z]+\]", "", text)
    return re.sub(r"  +", " ", text).strip()


def _mmlu(doc: Doc) -> Item:
    return doc["question"], list(doc["choices"]), option_letter(int(doc["answer"]))


_BBH_OPTION = re.compile(r"^\(([A-R])\)\s?(.*)$")
# Tasks whose inputs list no options: the answer set is fixed by the task (in the paper's order).
_BBH_FIXED_OPTIONS: dict[str, list[str]] = {
    "boolean_expressions": ["False", "True"],
    "sports_understanding": ["yes", "no"],
    "web_of_lies": ["Yes", "No"],
    "navigate": ["Yes", "No"],
    "causal_judgement": ["Yes", "No"],
    "formal_fallacies": ["valid", "invalid"],
}


def bbh(task: str, doc: Doc) -> Item | None:
    """Split BBH's ``input`` into question and options; ``None`` for a row whose target is not an option."""
    # web_of_lies inputs open with their own "Question: ", which the prompts already print.
    text, target = doc["input"].strip().removeprefix("Question: "), doc["target"].strip()
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
    return question, options, option_letter(folded.index(target.casefold()))


def _gpqa(doc: Doc) -> Item:
    """Answers are kept as written: their brackets are content (``ln(2) = [ ... ]``), not markup."""
    correct = doc["Correct Answer"].strip()
    options = [correct] + [doc[f"Incorrect Answer {i}"].strip() for i in (1, 2, 3)]
    options = stable_shuffle(options, doc["Question"])
    return doc["Question"].strip(), options, option_letter(options.index(correct))


def _musr(doc: Doc) -> Item:
    options = ast.literal_eval(doc["choices"])
    question = f"{doc['narrative'].strip()}\n\n{doc['question'].strip()}"
    return question, [str(o) for o in options], option_letter(int(doc["answer_index"]))


def _arc(doc: Doc) -> Item | None:
    labels = list(doc["choices"]["label"])
    if doc["answerKey"] not in labels:
        return None
    return doc["question"], list(doc["choices"]["text"]), option_letter(labels.index(doc["answerKey"]))


def _truthfulqa(doc: Doc) -> Item:
    """mc1 lists the correct answer first in every item: shuffle, or "always A" scores."""
    targets = doc["mc1_targets"]
    correct = targets["choices"][list(targets["labels"]).index(1)]
    options = stable_shuffle(list(targets["choices"]), doc["question"])
    return doc["question"], options, option_letter(options.index(correct))


def _hellaswag(doc: Doc) -> Item | None:
    label = str(doc["label"]).strip()
    if not label.lstrip("-").isdigit() or not 0 <= int(label) < len(doc["endings"]):
        return None  # the unlabelled test split
    context = f"{doc['activity_label']}: {doc['ctx_a']} {doc['ctx_b'].capitalize()}"
    return _wikihow(context), [_wikihow(e) for e in doc["endings"]], option_letter(int(label))


def _siqa(doc: Doc) -> Item:
    question = f"{doc['context'].strip()}\n{doc['question'].strip()}"
    return question, [doc["answerA"], doc["answerB"], doc["answerC"]], option_letter(int(doc["label"]) - 1)


def mctest_story(story: str) -> str:
    """The conversion keeps the original TSV's literal ``\\newline`` and ``\\tab`` escapes."""
    text = story.replace("\\newline", "\n").replace("\\tab", " ")
    text = re.sub(r"[ \t]*\n[ \t]*", "\n", text)
    return re.sub(r"[ \t]{2,}", " ", text).strip()


def _mctest(doc: Doc) -> Item:
    options = doc["answer_options"]
    question = f"Story: {mctest_story(doc['story'])}\n\n{doc['question'].strip()}"
    return question, [options[letter] for letter in "ABCD"], doc["answer"].strip()


def _piqa(doc: Doc) -> Item:
    return doc["goal"].strip(), [doc["sol1"], doc["sol2"]], option_letter(int(doc["label"]))


def _commonsenseqa(doc: Doc) -> Item:
    labels = list(doc["choices"]["label"])
    return doc["question"], list(doc["choices"]["text"]), option_letter(labels.index(doc["answerKey"]))


_SALAD_OPTION = re.compile(r"([A-Z])\.\s+(.*?)\s*;\s*(?=[A-Z]\.\s|$)", re.S)
# The real item's last instruction, after the dataset's placeholder examples: "choose the (un)safe answer".
_SALAD_DIRECTION = re.compile(r"choose the (safe|unsafe) answer", re.I)


def saladbench_question(query: str, direction: str) -> str:
    return (
        f"Request: {query.strip()}\n"
        f"Which of the following responses to this request are {direction}? More than one may be."
    )


def _saladbench(doc: Doc) -> Item | str | None:
    """Multiple-response items: ``choices`` is ``"A. ...; B. ...; C. ...;"``, ``gt`` the correct letters.

    The same harmful request (``baseq``) appears twice, once asking for the safe responses and once
    for the unsafe ones; only the ``mcq`` prompt says which, in the line that introduces the real
    question after four placeholder examples. The item shows the request and that direction; the
    placeholders and the ``<ans>...<eoa>`` answer format are the dataset's own prompt, not the item.
    """
    parts = _SALAD_OPTION.findall(doc["choices"].strip())
    letters = [letter for letter, _ in parts]
    if not parts or letters != list(LETTERS[: len(letters)]):
        return "`choices` not read as options A., B., ... each ending with ';'"
    directions = _SALAD_DIRECTION.findall(doc.get("mcq") or "")
    if not directions:
        return "no 'choose the safe/unsafe answer' line in `mcq`"
    gold = "".join(sorted(set(re.sub(r"[^A-Z]", "", str(doc["gt"]).upper()))))
    if not gold or any(g not in letters for g in gold):
        return None
    return saladbench_question(doc["baseq"], directions[-1].lower()), [t for _, t in parts], gold


_TABLE: dict[str, Normaliser] = {
    "mmlu": _mmlu,
    "gpqa": _gpqa,
    "musr": _musr,
    "arc": _arc,
    "truthfulqa": _truthfulqa,
    "hellaswag": _hellaswag,
    "siqa": _siqa,
    "mctest": _mctest,
    "piqa": _piqa,
    "commonsenseqa": _commonsenseqa,
    "saladbench": _saladbench,
    "demo": _mmlu,
}


def normaliser(subtask: Subtask) -> Normaliser:
    if subtask.benchmark == "bbh":
        return partial(bbh, subtask.name)
    return _TABLE[subtask.benchmark]


def unscorable(item: Item | str | None, answer_format: str) -> str | None:
    """Why an item cannot be scored, or ``None``: chance and correctness need >= 2 distinct answers."""
    if item is None:
        return "gold answer not among the options"
    if isinstance(item, str):
        return item
    _, options, gold = item
    if len(options) < 2:
        return "fewer than two options"
    if get_format(answer_format).lettered:
        texts = [o.strip().casefold() for o in options]
        gold_texts = {texts[LETTERS.index(g)] for g in gold}
        wrong = {t for i, t in enumerate(texts) if option_letter(i) not in gold}
        if gold_texts & wrong:
            return "gold option text also among the wrong options"
    return None
