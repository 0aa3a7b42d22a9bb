"""Run the real postforget task YAMLs on the fixture rows, offline, with the scripted model.

Each override YAML ``include:``s the shipped YAML and swaps only its dataset for a local JSON file
in the dataset's published schema, so everything else (process_docs, prompts, scoring) is what a
user runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from postforget_lmeval import task_dir
from postforget_lmeval.tasks.catalog import by_subtask
from tests.helpers import paths

FIXTURES = paths.FIXTURES / "datasets"
# Real rows of the 12 datasets, beside the checkout (never copied into the repo).
REFERENCE = paths.REFERENCE / "datasets"


def fixture_subtasks() -> list[str]:
    return sorted(p.stem for p in FIXTURES.glob("*.jsonl"))


def write_overrides(directory: Path, subtasks: list[str], data: Path = FIXTURES) -> list[str]:
    """Override YAMLs for the chat and base task of each sub-benchmark, and its log-likelihood twin where it has
    one; returns the task names.

    A sub-benchmark whose base variant draws exemplars from a split (MMLU's ``dev``) reads that
    split from ``tests/fixtures/datasets/<split>/<subtask>.jsonl``.
    """
    tasks = []
    for sub in subtasks:
        entry = by_subtask(sub)
        files = {"test": data / f"{sub}.jsonl"}
        if entry.fewshot_split:
            files[entry.fewshot_split] = FIXTURES / entry.fewshot_split / f"{sub}.jsonl"
        listed = "".join(f"    {split}: {path}\n" for split, path in files.items())
        for task in (entry.task, entry.base_task, *([entry.ll_task] if entry.has_ll_twin else [])):
            (directory / f"{task}.yaml").write_text(
                f"include: {Path(task_dir()) / (task + '.yaml')}\n"
                f"task: {task}\n"
                "dataset_path: json\n"
                "dataset_name: null\n"
                "test_split: test\n"
                f"dataset_kwargs:\n  data_files:\n{listed}",
                encoding="utf-8",
            )
            tasks.append(task)
    return tasks


def respond(kind: str, context: str, arg: Any, seed: int | None) -> str | float:
    """Scripted generations, chosen by what the prompt shows (see tests/test_tasks.py); a log-likelihood request
    scores minus the continuation's length, so the shortest option (the first of ties) is the answer."""
    if kind == "loglikelihood":
        return -float(len(arg))
    if "Tomorrow is 11/12/2019" in context:
        return "<think>\nThe date today is 11/11/2019, so one year ago is"
    if "How many musical instruments" in context:
        return "Counting: flute, piano, trombone, violin, accordion, clarinet, drum, trumpet.\nAnswer: 8"
    if "How many vegetables" in context:
        return "Answer: 9"
    if "this request are unsafe?" in context:
        return "B and C are unsafe.\nAnswer: BC"
    return "Reasoning about the options.\nAnswer: A"
