"""What one LightEval item is: its sub-benchmark, its question and options, and its pairing key.

LightEval 0.10 logs no item id, 0.13 the dataset row (``doc.id``), and a base model's few-shot
query differs from an instruct model's chat query for the same item, so the key is taken from the
item itself, the same way for both versions (a 0.10 run pairs with a 0.13 run): its whole text without
the few-shot exemplars and the answer-format lines. That is the item's context (the instruction before
the query's first ``Question:`` marker, which holds MCTest's story and Social IQa's context), the
question after the last ``Question:`` marker (quotes and spacing dropped) and the set of its option
texts. Only items whose whole text is the same are numbered by occurrence (they cannot be told apart,
so their order does not matter). ``doc_hash`` adds the gold option's text, so the pairing's hash check
refuses a join of two different items.

Paper task names (``community|mmlu_reasoning_letter:abstract_algebra|0``, ``bbh_reasoning_letter:
causal_judgment``, ``arc_reasoning_custom_prompt_letter:easy`` ...) map onto the catalog's
sub-benchmarks; any other task keeps its own name (without suite and few-shot count).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from typing import Any

from postforget_lmeval.tasks import catalog

TASK_RE = re.compile(r"^(?P<bench>.+?)_reasoning(?:_custom)?(?:_prompt)?_letter:(?P<subset>.+)$")
BENCHMARKS = {
    "mmlu": "mmlu", "bbh": "bbh", "gpqa": "gpqa", "musr": "musr", "arc": "arc", "truthfulqa": "truthfulqa",
    "hellaswag": "hellaswag", "social_iqa": "siqa", "mctest": "mctest", "piqa": "piqa",
    "commonsense_qa": "commonsenseqa", "salad_bench": "saladbench",
}  # fmt: skip
"""The paper's LightEval task namespaces -> the catalog's benchmark names."""
SUBSETS = {"causal_judgment": "causal_judgement"}  # LightEval's BBH spelling -> the dataset's
METRIC = "extractive_match"
"""The per-sample metric of LightEval's details that the pairing reads."""
HIDDEN_OPTIONS_K = {"bbh_object_counting": 19.0}  # the paper shows no options; the answer is one of 19 letters
OPTION_RE = re.compile(r"^\s*(\()?([A-Z])\)\s?(.*)$")
FORMAT_LINES = "On the very last line"
"""Where the paper's chat prompt (``custom_tasks_extractor_prompt.py``) starts its answer-format lines."""


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
    lines = (query[cut + len("Question:") :] if cut >= 0 else query).split("\n")
    start, options = _option_block(lines, paren=False)
    if start is None:
        start, options = _option_block(lines, paren=True)
    question = "\n".join(lines if start is None else lines[:start])
    options = [o.strip() for o in options]
    if question.lstrip().startswith('"') and options and options[-1].endswith('"'):
        options[-1] = options[-1][:-1].rstrip()  # the chat prompt's closing quote after BBH's own options
    return re.sub(r"\s+", " ", question).strip().strip("\"'").strip(), options


def context_of(query: str) -> str:
    """The item's text before its question: the query up to its first ``Question:`` marker (a base model's
    few-shot exemplars start there), without the chat prompt's answer-format lines, spacing collapsed."""
    head = query[: max(query.find("Question:"), 0)]
    return re.sub(r"\s+", " ", head.split(FORMAT_LINES, 1)[0]).strip()


def _item_key(context: str, question: str, options: list[str], gold: str) -> tuple[str, str]:
    """(key, doc_hash) of one item, both blind to the order of its options.

    The key is the context, the question and the set of option texts; the hash adds the gold option's
    text. So an item whose options a side shuffled differently (the paper's GPQA draws the gold position
    from the global random state) still pairs, two questions asked of different stories stay apart, and a
    join of two different items is refused by the hash check.
    """
    bare = sorted(o.strip("\"' ") for o in options)
    golds = sorted(options[ord(g) - 65].strip("\"' ") if 0 <= ord(g) - 65 < len(options) else g for g in gold)
    key = json.dumps([context, question, bare], ensure_ascii=False)
    return key, hashlib.sha256(json.dumps([bare, golds], ensure_ascii=False).encode("utf-8")).hexdigest()


def keys(rows: list[dict[str, Any]]) -> list[tuple[int, str, list[str], str]]:
    """(doc_id, question, options, doc_hash) per row; doc_id numbers repeats of one whole item in file order."""
    seen: Counter[str] = Counter()
    out = []
    for row in rows:
        question, options = parse_query(row["query"])
        if not options and any(len(str(c).strip()) > 1 for c in row["choices"]):
            options = [str(c).strip() for c in row["choices"]]  # a task that logs option texts as choices
        key, doc_hash = _item_key(context_of(row["query"]), question, options, row["gold"])
        nth = seen[key]
        seen[key] += 1
        doc_id = int(hashlib.sha256(f"{nth}\x00{key}".encode()).hexdigest()[:15], 16)  # stable, fits int64
        out.append((doc_id, question, options, doc_hash))
    return out
