"""Hooks named by the postforget task YAMLs (``!function utils.<name>``).

lm-eval loads this file by path, next to the YAMLs; the logic lives in the installed package.
"""

from postforget_lmeval.tasks.hooks import (
    description,
    doc_to_choice,
    doc_to_target,
    doc_to_target_index,
    doc_to_text_base,
    doc_to_text_base_direct,
    doc_to_text_chat,
    doc_to_text_ll,
    fewshot_target_cot,
    process_results_base,
    process_results_base_direct,
    process_results_chat,
    process_results_ll,
    records_k_eff,
    task_hooks,
)

__all__ = [
    "doc_to_choice",
    "doc_to_target",
    "doc_to_target_index",
    "doc_to_text_base",
    "doc_to_text_base_direct",
    "doc_to_text_chat",
    "doc_to_text_ll",
    "fewshot_target_cot",
    "load_demo_world",
    "process_results_base",
    "process_results_base_direct",
    "process_results_chat",
    "process_results_ll",
    "records_k_eff",
]


def load_demo_world(**metadata: object) -> object:
    """``postforget demo``'s facts as lm-eval's ``custom_dataset`` hook wants them; imported here, when a demo task
    loads, because they need the [demo] extra."""
    from postforget_lmeval.demo.world import questions_dataset

    return questions_dataset(**metadata)


# process_docs_<task> for every catalog entry and fewshot_<base task> (its exemplars), bound to
# their sub-benchmark.
globals().update(task_hooks())


def __getattr__(name: str) -> str:
    """``description_<base task>``: the instruction line above the exemplars, as lm-eval's task
    ``description``. lm-eval's ``!function`` tag returns whatever the named attribute holds, and a
    description must be text, so this is a string resolved when lm-eval loads the task (BBH's comes
    from the installed lm-eval's own BBH configs)."""
    if name.startswith("description_"):
        return description(name.removeprefix("description_"))
    raise AttributeError(name)
