"""Which input wins when an inspect_ai log offers several: the run's seed over the model's, ``choice`` over other
correct/incorrect scorers.

On inspect_ai's own logs (``tests/fixtures/inspect/before_eval``: seed 0 set with ``eval(seed=0)``, scored by
``choice()``) with zip members changed: the model's ``GenerateConfig`` seed set to another value, and a second
C/I scorer, listed first, that disagrees with ``choice`` on every sample.
"""

from __future__ import annotations

import pytest

from tests.sources.inspect_logs import CAPITALS_LOG, copy_side, edit_json, read_task, rewrite, task_run

pytest.importorskip("inspect_ai.log", reason="the inspect extra is not installed")


def test_the_runs_seed_wins_over_the_models_seed(tmp_path):
    folder = copy_side("before_eval", tmp_path / "before")
    rewrite(next(folder.glob(CAPITALS_LOG)),
            {"header.json": edit_json(lambda d: d["eval"]["model_generate_config"].update(seed=7))})  # fmt: skip
    run = task_run(folder)
    assert (run.seed, run.seed_source) == (0, "plan.config.seed")


def test_a_run_with_neither_seed_logged_has_no_seed_and_says_where_it_looked(tmp_path):
    folder = copy_side("before_eval", tmp_path / "before")

    def unseeded(header: dict) -> None:
        header["plan"]["config"]["seed"] = header["eval"]["model_generate_config"]["seed"] = None

    rewrite(next(folder.glob(CAPITALS_LOG)), {"header.json": edit_json(unseeded)})
    run = task_run(folder)
    assert (run.seed, run.seed_source) == (
        None,
        "none logged (neither plan.config.seed nor eval.model_generate_config.seed)",
    )


def test_choice_wins_over_a_correct_incorrect_scorer_listed_before_it(tmp_path):
    folder = copy_side("before_eval", tmp_path / "before")
    _, logged = read_task(folder)

    def disagree(sample: dict) -> None:
        choice = sample["scores"]["choice"]
        other = dict(choice, value="I" if choice["value"] == "C" else "C")
        sample["scores"] = {"exact": other, "choice": choice}

    rewrite(next(folder.glob(CAPITALS_LOG)), {f"samples/{i}_epoch_1.json": edit_json(disagree) for i in range(1, 7)})
    _, read = read_task(folder)
    assert read.info["metric"] == "choice"
    assert read.rows.columns["correct"] == logged.rows.columns["correct"] == [1, 1, 1, 0, 1, 0]


@pytest.mark.parametrize(("plan", "model", "budget"), [(None, 512, 512), (256, 512, 256), (256, None, 256)])
def test_the_runs_generation_budget_wins_over_the_models(tmp_path, plan, model, budget):
    folder = copy_side("before_eval", tmp_path / "before")

    def budgets(header: dict) -> None:
        header["plan"]["config"]["max_tokens"] = plan
        header["eval"]["model_generate_config"]["max_tokens"] = model

    rewrite(next(folder.glob(CAPITALS_LOG)), {"header.json": edit_json(budgets)})
    assert task_run(folder).max_gen_toks == budget


def test_without_choice_the_first_scorer_whose_every_value_is_correct_incorrect_is_read(tmp_path):
    folder = copy_side("before_eval", tmp_path / "before")

    def renamed(sample: dict) -> None:
        choice = sample["scores"]["choice"]
        sample["scores"] = {"overlap": dict(choice, value=0.5), "exact": choice}

    rewrite(next(folder.glob(CAPITALS_LOG)), {f"samples/{i}_epoch_1.json": edit_json(renamed) for i in range(1, 7)})
    _, read = read_task(folder)
    assert (read.info["metric"], read.rows.columns["correct"], read.problems) == ("exact", [1, 1, 1, 0, 1, 0], [])
