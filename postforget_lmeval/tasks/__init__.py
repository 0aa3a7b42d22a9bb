"""The postforget task suite for lm-eval: which sub-benchmarks exist (``catalog``), how their rows
become items (``_rows.py``), the prompts and exemplars (``_prompts.py``, ``_exemplars.py``,
``_bbh_cot.py``), the functions lm-eval calls (``hooks``) and the writer of ``task_configs/``
(``generate``). Answers are read by :mod:`postforget_lmeval.scoring`, which knows nothing of tasks.
"""

from postforget_lmeval.tasks._prompts import render_chat
from postforget_lmeval.tasks._rows import stable_shuffle, unscorable
from postforget_lmeval.tasks.catalog import (
    BENCHMARKS,
    CATEGORIES,
    DEMO,
    SUBTASKS,
    Subtask,
    by_subtask,
    category_slug,
    suite,
)

__all__ = [
    "BENCHMARKS",
    "CATEGORIES",
    "DEMO",
    "SUBTASKS",
    "Subtask",
    "by_subtask",
    "category_slug",
    "render_chat",
    "stable_shuffle",
    "suite",
    "unscorable",
]
