"""End to end: the real ``lm_eval`` CLI run twice with the scripted model, then ``postforget-pair``.

The expected transition counts are computed here from the sample logs lm-eval wrote (full json
parse), so the test checks the pairing against lm-eval's own files, not against our writer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from postforget_lmeval.cli import main
from tests.helpers import paths

pytestmark = pytest.mark.slow

ITEMS = [  # question, options, gold index
    ("What is 2+2?", ["3", "4", "5"], 1),
    ("Capital of France?", ["Paris", "Rome", "Oslo", "Bern"], 0),
    ("Colour of the sky?", ["green", "blue"], 1),
    ("Largest planet?", ["Mars", "Venus", "Jupiter", "Earth", "Pluto"], 2),
    ("Opposite of hot?", ["cold", "warm", "tepid"], 0),
    ("Legs of a spider?", ["six", "eight", "ten", "four"], 1),
]
# which items each model gets right, per task
RIGHT = {"before": {"mc": {0, 1, 2, 3}, "gen": {0, 2, 4}}, "after": {"mc": {0, 2, 4, 5}, "gen": {0, 1, 4, 5}}}

TASK_MC = """task: tiny_mc
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: multiple_choice
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: label
metric_list:
  - metric: acc
"""
TASK_GEN = """task: tiny_gen
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_target: answer
generation_kwargs:
  until: ["\\n\\n"]
  do_sample: false
filter_list:
  - name: strict-match
    filter:
      - function: regex
        regex_pattern: "The answer is (\\\\w+)"
      - function: take_first
  - name: flexible-extract
    filter:
      - function: regex
        regex_pattern: "(\\\\w+)$"
      - function: take_first
metric_list:
  - metric: exact_match
"""
GROUP = "group: tiny_suite\ntask: [tiny_mc, tiny_gen]\n"


def script(side: str) -> dict:
    gens, choices = [], []
    for i, (question, options, gold) in enumerate(ITEMS):
        wrong = options[(gold + 1) % len(options)]
        answer = options[gold] if i in RIGHT[side]["gen"] else wrong
        gens.append({"contains": question, "response": f"Reasoning about it at length.\nThe answer is {answer}"})
        pick = options[gold] if i in RIGHT[side]["mc"] else wrong
        choices.append({"contains": question, "continuation": f" {pick}"})
    return {"generations": gens, "choices": choices, "default_generation": ""}


def run_lm_eval(tmp_path: Path, side: str) -> Path:
    script_path = tmp_path / f"{side}.json"
    script_path.write_text(json.dumps(script(side)))
    out = tmp_path / side
    cmd = [
        sys.executable,
        "-c",
        "import tests.helpers.scripted_lm; from lm_eval.__main__ import cli_evaluate; cli_evaluate()",
        "--model",
        "postforget-scripted",
        "--model_args",
        f"script={script_path},seed=11",
        "--tasks",
        "tiny_suite",
        "--include_path",
        str(tmp_path / "tasks"),
        "--output_path",
        str(out),
        "--log_samples",
    ]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(paths.ROOT), os.environ.get("PYTHONPATH", "")]),
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
    }
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def logged(out: Path, task: str, metric: str, filter_: str) -> dict[int, int]:
    (path,) = out.rglob(f"samples_{task}_*.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {r["doc_id"]: int(r[metric]) for r in rows if r["filter"] == filter_}


def counts(before: dict[int, int], after: dict[int, int]) -> tuple[int, int, int, int]:
    pairs = [(before[d], after[d]) for d in before]
    return tuple(pairs.count(t) for t in ((1, 1), (1, 0), (0, 1), (0, 0)))


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path, Path]:
    tmp = tmp_path_factory.mktemp("e2e")
    data = tmp / "items.jsonl"
    data.write_text(
        "".join(json.dumps({"question": q, "choices": o, "label": g, "answer": o[g]}) + "\n" for q, o, g in ITEMS)
    )
    tasks = tmp / "tasks"
    tasks.mkdir()
    (tasks / "tiny_mc.yaml").write_text(TASK_MC.format(data=data))
    (tasks / "tiny_gen.yaml").write_text(TASK_GEN.format(data=data))
    (tasks / "tiny_suite.yaml").write_text(GROUP)
    return tmp, run_lm_eval(tmp, "before"), run_lm_eval(tmp, "after")


def test_real_lm_eval_runs_pair_to_the_logged_counts(runs, capsys):
    tmp, before, after = runs
    out = tmp / "paired"
    assert main([str(before), str(after), "-o", str(out)]) == 0
    sub = pd.read_csv(out / "subtasks.csv").set_index("subtask")
    for task, metric, filter_ in (("tiny_mc", "acc", "none"), ("tiny_gen", "exact_match", "strict-match")):
        expected = counts(logged(before, task, metric, filter_), logged(after, task, metric, filter_))
        row = sub.loc[task]
        assert tuple(int(row[c]) for c in ("n_11", "n_10", "n_01", "n_00")) == expected, task
        assert row["category"] == "tiny_suite" and str(row["seed"]) == "11"
    # the scripted right/wrong pattern made it through lm-eval unchanged
    assert counts(logged(before, "tiny_mc", "acc", "none"), logged(after, "tiny_mc", "acc", "none")) == (2, 2, 2, 0)
    mc_k = 1 / sum(1 / len(o) for _, o, _ in ITEMS) * len(ITEMS)
    assert sub.loc["tiny_mc", "k"] == pytest.approx(mc_k)
    assert pd.isna(sub.loc["tiny_gen", "k"]) and pd.isna(sub.loc["tiny_gen", "F_chance"])
    summary = json.loads((out / "summary.json").read_text())
    assert {r["filter"] for r in summary["runs"]["before"]} == {"none", "strict-match"}
    assert summary["runs"]["before"][0]["seed_source"] == "model_args seed"
    assert summary["runs"]["before"][0]["bytes"] > 0
    assert "using 'strict-match'" in capsys.readouterr().err

    flexible = tmp / "paired_flexible"
    assert (
        main([str(before), str(after), "-o", str(flexible), "--filter", "flexible-extract", "--k", "4", "--no-plot"])
        == 0
    )
    row = pd.read_csv(flexible / "subtasks.csv").set_index("subtask").loc["tiny_gen"]
    expected = counts(
        logged(before, "tiny_gen", "exact_match", "flexible-extract"),
        logged(after, "tiny_gen", "exact_match", "flexible-extract"),
    )
    assert tuple(int(row[c]) for c in ("n_11", "n_10", "n_01", "n_00")) == expected and row["k"] == 4

    capsys.readouterr()
    assert main(["show", str(out), "--subtask", "tiny_mc"]) == 0
    shown = capsys.readouterr().out
    assert "2 forgotten item(s)" in shown and "Capital of France?" in shown and "Largest planet?" in shown
