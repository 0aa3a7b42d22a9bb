"""BIG-Bench Hard's own task descriptions and chain-of-thought exemplars, read from installed lm-eval.

The paper prompts each BBH task with the benchmark's task description and, for base models, its
three published CoT exemplars. lm-eval ships them in its ``bbh/cot_fewshot`` task configs; this
module reads them there at run time (nothing of them is copied into this project), so the prompt
follows the installed lm-eval.

BBH's own CoT prompts answer each exemplar with "A: Let's think step by step." and then the
reasoning; the paper's exemplars keep that opening sentence in the reasoning. lm-eval keeps it in
``doc_to_text`` (after ``A:``), not in the target, so it is read from there and put back in front
of each exemplar's reasoning.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

# The last sentence of every BBH CoT exemplar: "... So the answer is (B)."
_FINAL = re.compile(r"\s*So the answer is (.+?)\.?\s*$", re.S)
# What lm-eval's doc_to_text puts after "A:" ("Let's think step by step.")
_OPENING = re.compile(r"\nA:[ \t]*(\S.*?)\s*$", re.S)


@dataclass(frozen=True)
class Exemplar:
    input: str
    reasoning: str
    target: str


def config_path(task: str) -> Path:
    # Located without importing lm-eval (pairing and extraction import this module's users).
    spec = importlib.util.find_spec("lm_eval")
    if spec is None or spec.origin is None:
        raise RuntimeError("BBH prompts need lm-eval installed: pip install 'lm-eval>=0.4.13,<0.5'")
    return Path(spec.origin).parent / "tasks" / "bbh" / "cot_fewshot" / f"{task}.yaml"


@cache
def _config(task: str) -> dict:
    path = config_path(task)
    try:
        with path.open(encoding="utf-8") as fh:
            config = yaml.safe_load(fh)
    except FileNotFoundError:
        raise RuntimeError(
            f"BBH task {task!r}: the installed lm-eval has no {path}; postforget's BBH prompts read "
            "the task description and CoT exemplars from lm-eval's bbh/cot_fewshot configs "
            "(lm-eval >= 0.4.13 ships them). Reinstall lm-eval or run the chat variant."
        ) from None
    if not isinstance(config, dict) or "description" not in config:
        raise RuntimeError(f"BBH task {task!r}: {path} has no `description`; is it a BBH cot_fewshot config?")
    return config


def description(task: str) -> str:
    """The task's one-paragraph description, e.g. "Evaluate the result of a random Boolean expression."."""
    return str(_config(task)["description"]).strip()


def opening(task: str) -> str:
    """The sentence BBH's CoT prompts open every answer with ("Let's think step by step.")."""
    found = _OPENING.search(str(_config(task).get("doc_to_text") or ""))
    if not found:
        raise RuntimeError(
            f"BBH task {task!r}: the doc_to_text of {config_path(task)} has no 'A: ...' opening to put "
            "before the exemplars' reasoning; is it a BBH cot_fewshot config?"
        )
    return found.group(1)


def exemplars(task: str) -> list[Exemplar]:
    """The task's CoT exemplars, each split into its reasoning (opened as BBH's prompts open it) and the final
    answer it states."""
    path = config_path(task)
    samples = (_config(task).get("fewshot_config") or {}).get("samples") or []
    out = []
    for i, sample in enumerate(samples):
        found = _FINAL.search(sample["target"])
        if not found:
            raise RuntimeError(
                f"BBH task {task!r}: exemplar {i} in {path} does not end with "
                "'So the answer is ...'; cannot read its answer."
            )
        reasoning = f"{opening(task)}\n{sample['target'][: found.start()].strip()}"
        out.append(Exemplar(sample["input"], reasoning, found.group(1).strip()))
    if not out:
        raise RuntimeError(f"BBH task {task!r}: {path} lists no fewshot_config samples.")
    return out
