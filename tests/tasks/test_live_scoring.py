"""What a user sees from a live lm-eval run of the shipped tasks: the scored answer and lm-eval's results table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lm_eval
import pytest
from lm_eval.tasks import TaskManager
from lm_eval.utils import make_table

from tests.helpers import scripted_lm
from tests.helpers.taskfixtures import write_overrides

# A base model that starts with one letter and talks its way to another.
DRIFTING = " A, because the group has order 4... so the answer is C"


def respond(kind: str, context: str, arg: Any, seed: int | None) -> str | float:
    if kind == "loglikelihood":
        return -float(len(arg))
    return DRIFTING


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    overrides = tmp_path_factory.mktemp("live")
    tasks = write_overrides(overrides, ["mmlu_abstract_algebra"])
    return lm_eval.simple_evaluate(
        model=scripted_lm.ScriptedLM(fn=f"{__name__}:respond"),
        tasks=tasks,
        task_manager=TaskManager(include_path=str(overrides), include_defaults=False),
        log_samples=True,
    )


def test_base_direct_answer_is_the_first_letter_generated(run: dict[str, Any]) -> None:
    """MMLU's base prompt ends at ``Answer:``: the reply's first letter is the answer, not the one its rambling
    ends on (the hook puts the prompt's ``Answer:`` back before extracting)."""
    records = [s["postforget"] for s in run["samples"]["postforget_mmlu_abstract_algebra_base"]]
    assert [(r["answer"], r["status"]) for r in records] == [("A", "answered")] * 3
    chat = [s["postforget"]["answer"] for s in run["samples"]["postforget_mmlu_abstract_algebra"]]
    assert chat == ["C"] * 3  # the chat prompt asks for reasoning first: the last commitment counts


def test_results_table_shows_the_record_as_a_record(run: dict[str, Any], tmp_path: Path) -> None:
    """lm-eval prints every metric; the per-item record reads as one, with no better/worse arrow."""
    rows = [line for line in make_table(run).splitlines() if "|postforget" in line and "per-item" in line]
    assert len(rows) == 3  # chat, base and the twin
    for row in rows:
        cells = [c.strip() for c in row.split("|")]
        metric = cells.index("postforget")
        assert cells[metric + 1] == "" and cells[metric + 2] == "per-item record, k_eff 4.00"
    assert "postforget|↑" not in make_table(run).replace(" ", "")
