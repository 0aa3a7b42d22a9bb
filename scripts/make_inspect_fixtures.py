"""Write inspect_ai evaluation logs for the inspect source's tests, with inspect_ai's own ``eval()``.

Two multiple-choice tasks (``multiple_choice()`` solver, ``choice()`` scorer) are run against a
``mockllm`` model whose replies are scripted per side, question and epoch (the PATTERNS table), so the
tests can work every transition out by hand:

* ``synth_capitals``: integer sample ids, one epoch;
* ``mmlu_reasoning_letter:abstract_algebra_5_shots``: string ids, two epochs, named as LightEval's
  inspect backend names a 5-shot task (its config name plus ``_5_shots``).

Directories written under the target (replaced):

* ``before_eval``, ``before_json``: the base model, seed 0 from ``eval(seed=0)`` (``plan.config.seed``),
  as ``.eval`` and ``.json`` logs;
* ``after_eval``, ``after_json``: the post-trained model, seed 0 from the model's own
  ``GenerateConfig(seed=0)`` (``eval.model_generate_config.seed``); ``after_eval`` is an ``eval_set``
  folder (with its ``logs.json``, ``eval-set.json`` and ``.eval-set-id``);
* ``bad/no_samples``: a run with ``log_samples=False``; ``bad/no_binary_scorer``: a task whose only
  scorer gives a number in [0, 1], not correct/incorrect.

Re-run (from the repository root, with the ``inspect`` extra installed)::

    python scripts/make_inspect_fixtures.py tests/fixtures/inspect
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from inspect_ai import Task, eval, eval_set
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Target, choice, mean, scorer
from inspect_ai.solver import TaskState, multiple_choice
from inspect_ai.solver._task_state import sample_state

LETTERS = "ABCDEFGHIJ"
CAPITALS = "synth_capitals"
ALGEBRA = "mmlu_reasoning_letter:abstract_algebra_5_shots"

# task -> [(id, question, options, gold index)]
ITEMS: dict[str, list[tuple[int | str, str, list[str], int]]] = {
    CAPITALS: [
        (1, "What is the capital of Broutregoth?", ["Vell", "Sarn", "Ilo"], 0),
        (2, "What is the capital of Maxtrandia?", ["Pell", "Quorn", "Ust"], 2),
        (3, "What is the capital of Oskelan?", ["Dirn", "Ferro", "Gath"], 1),
        (4, "What is the capital of Tyrvale?", ["Hoss", "Kell", "Marn"], 0),
        (5, "What is the capital of Quenmark?", ["Olt", "Pirr", "Sabe"], 1),
        (6, "What is the capital of Ardovia?", ["Tem", "Uro", "Wex"], 2),
    ],
    ALGEBRA: [
        ("aa-1", "Find the order of the element 2 in Z_5 under addition.", ["1", "2", "5", "10"], 2),
        ("aa-2", "How many elements does the symmetric group S_3 have?", ["3", "6", "9", "12"], 1),
        ("aa-3", "Is every cyclic group abelian?", ["Yes", "No", "Only if finite", "Only if infinite"], 0),
        ("aa-4", "How many generators does Z_8 have?", ["2", "4", "6", "8"], 1),
    ],
}
EPOCHS = {CAPITALS: 1, ALGEBRA: 2}

# (side, task, epoch) -> one reply pattern per item, in ITEMS order. "right"/"wrong": an ANSWER line with
# the gold / another letter; "none": a reply with no ANSWER line (scored I); "empty": no reply (scored N).
PATTERNS = {
    ("before", CAPITALS, 1): ["right", "right", "right", "wrong", "right", "none"],
    ("after", CAPITALS, 1): ["right", "wrong", "empty", "right", "right", "right"],
    ("before", ALGEBRA, 1): ["right", "right", "wrong", "right"],
    ("before", ALGEBRA, 2): ["right", "wrong", "wrong", "right"],
    ("after", ALGEBRA, 1): ["wrong", "right", "right", "right"],
    ("after", ALGEBRA, 2): ["right", "right", "wrong", "empty"],
}


def reply(pattern: str, options: list[str], gold: int) -> str:
    if pattern == "empty":
        return ""
    if pattern == "none":
        return "I am not sure which one it is."
    letter = LETTERS[gold if pattern == "right" else (gold + 1) % len(options)]
    return f"Let me think about each option in turn.\n\nANSWER: {letter}"


def scripted(side: str):
    """The mockllm's outputs: the reply PATTERNS give this side for the question and epoch being run."""
    by_question = {
        question: (task, i, options, gold)
        for task, items in ITEMS.items()
        for i, (_, question, options, gold) in enumerate(items)
    }

    def output(messages, tools, tool_choice, config) -> ModelOutput:
        state = sample_state()
        prompt = messages[-1].text
        task, i, options, gold = next(v for q, v in by_question.items() if q in prompt)
        pattern = PATTERNS[(side, task, state.epoch)][i]
        out = ModelOutput.from_content(model="mockllm", content=reply(pattern, options, gold))
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # mockllm would count with tiktoken
        return out

    return output


def task(name: str) -> Task:
    samples = [
        Sample(id=sid, input=question, choices=options, target=LETTERS[gold])
        for sid, question, options, gold in ITEMS[name]
    ]
    return Task(
        dataset=MemoryDataset(samples, name=name),
        solver=multiple_choice(),
        scorer=choice(),
        name=name,
        epochs=EPOCHS[name],
    )


@scorer(metrics=[mean()])
def overlap():
    """A graded scorer (a number, not correct/incorrect): what the inspect source refuses to pair."""

    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=0.5)

    return score


def main(target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    common = {"display": "none", "log_level": "warning", "max_samples": 1}
    tasks = [task(CAPITALS), task(ALGEBRA)]
    for fmt in ("eval", "json"):
        before = get_model("mockllm/base", custom_outputs=scripted("before"))
        eval(tasks, model=before, log_dir=str(target / f"before_{fmt}"), log_format=fmt, seed=0, **common)
    after = get_model("mockllm/instruct", custom_outputs=scripted("after"), config=GenerateConfig(seed=0))
    eval(tasks, model=after, log_dir=str(target / "after_json"), log_format="json", **common)
    after = get_model("mockllm/instruct", custom_outputs=scripted("after"), config=GenerateConfig(seed=0))
    ok, _ = eval_set(tasks, model=after, log_dir=str(target / "after_eval"), log_format="eval", **common)
    if not ok:
        raise SystemExit("eval_set did not complete")

    before = get_model("mockllm/base", custom_outputs=scripted("before"))
    eval(task(CAPITALS), model=before, log_dir=str(target / "bad" / "no_samples"), log_samples=False, seed=0, **common)
    graded = Task(dataset=task(CAPITALS).dataset, solver=multiple_choice(), scorer=overlap(), name=CAPITALS)
    eval(graded, model=before, log_dir=str(target / "bad" / "no_binary_scorer"), seed=0, **common)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
