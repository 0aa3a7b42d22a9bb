"""Pairings whose two sides differ in what they log, each against values counted by hand.

One side rescored (it has ``correct_logged``) against an ordinary task that is not; one side scored by
log-likelihood (``option_ll``) against a generative one; one side with lm-eval repeats against one without;
a run that logs no seed at all; a side whose records carry no gold; two runs that saw different items.
These were branches no test reached (mutation survivors in the join and in samples.parquet).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from postforget_lmeval import pair
from postforget_lmeval.cli import main
from postforget_lmeval.errors import PairingError
from tests.helpers.lmeval_runs import doc_for, ordinary, ours, pf_record, sample_line, write_run


def dirs(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "before", tmp_path / "after"


def _doc(i: int) -> dict[str, object]:
    return {"pf_question": f"Q{i}?", "pf_options": ["w", "x", "y", "z"], "pf_gold": "B", "pf_format": "letter"}


def _rescorable(responses: list[str], logged: list[int]) -> dict[str, list[str]]:
    """A postforget task on sub-benchmark mmlu_x whose docs let --rescore re-read the responses (gold B)."""
    lines = []
    for i, (response, correct) in enumerate(zip(responses, logged)):
        doc = _doc(i)
        record = pf_record("mmlu_x", correct, answer="B" if correct else None, status="answered")
        record["gold"] = "B"
        lines.append(sample_line(i, None, doc=doc, response=response, record=record))
    return {"postforget_mmlu_x": lines}


@pytest.mark.parametrize("rescored_side", ["before", "after"])
def test_one_rescored_side_against_an_ordinary_task_keeps_both_logged_scores(tmp_path, rescored_side):
    """The postforget side is re-read by --rescore strict; the ordinary task mmlu_x cannot be, so its logged
    score is its score. Responses (gold B): "The answer is (B)." -> B, right; "I think C" -> no marker, wrong;
    "Answer: B" -> B, right. Logged 0, 0, 1, so rescored 1, 0, 1. The ordinary task logs 0, 1, 1."""
    b, a = dirs(tmp_path)
    ours_side = _rescorable(["The answer is (B).", "I think C", "Answer: B"], [0, 0, 1])
    other = {"mmlu_x": [sample_line(i, float(bit), doc=_doc(i)) for i, bit in enumerate("011")]}  # same items
    write_run(b, ours_side if rescored_side == "before" else other)
    write_run(a, other if rescored_side == "before" else ours_side)
    out = tmp_path / "out"
    assert main([str(b), str(a), "-o", str(out), "--rescore", "strict", "--no-analyses"]) == 0
    s = pd.read_parquet(out / "samples.parquet").sort_values("doc_id")
    plain = "after" if rescored_side == "before" else "before"
    assert s[rescored_side].tolist() == [1, 0, 1]
    assert s[f"correct_logged_{rescored_side}"].tolist() == [0, 0, 1]
    assert s[plain].tolist() == [0, 1, 1]
    assert s[f"correct_logged_{plain}"].tolist() == [0, 1, 1]  # not rescored: what it logged
    sub = pd.read_csv(out / "subtasks.csv")
    # before->after per item: rescored before 1,0,1 vs 0,1,1 -> one 1->0, one 0->1, one 1->1
    # (the other direction: 0,1,1 -> 1,0,1 -> one 0->1, one 1->0, one 1->1: the same counts)
    assert sub[["n", "n_11", "n_10", "n_01", "n_00"]].iloc[0].tolist() == [3, 1, 1, 1, 0]


@pytest.mark.parametrize("mc_side", ["before", "after"])
def test_one_log_likelihood_side_against_a_generative_one_keeps_its_option_lls(tmp_path, mc_side):
    """mmlu_y scored by log-likelihood over four options (the helper logs -1 for A, -5 for the rest) on one
    side, generated on the other: samples.parquet carries the option log-likelihoods of the one side."""
    b, a = dirs(tmp_path)
    mc = ordinary("mmlu_y", "10", n_options=4)
    gen = ordinary("mmlu_y", "11")
    mc_cfg = {"mmlu_y": {"output_type": "multiple_choice"}}
    write_run(b, mc if mc_side == "before" else gen, configs=mc_cfg if mc_side == "before" else None)
    write_run(a, gen if mc_side == "before" else mc, configs=mc_cfg if mc_side == "after" else None)
    out = tmp_path / "out"
    assert main([str(b), str(a), "-o", str(out), "--no-analyses"]) == 0
    s = pd.read_parquet(out / "samples.parquet").sort_values("doc_id")
    gen_side = "after" if mc_side == "before" else "before"
    assert [list(v) for v in s[f"option_ll_{mc_side}"]] == [[-1.0, -5.0, -5.0, -5.0]] * 2
    assert s[f"option_ll_{gen_side}"].isna().all()
    assert s[f"answer_{mc_side}"].tolist() == ["A", "A"]  # the highest log-likelihood
    assert s["k"].tolist() == [4.0, 4.0]  # four options, from the log-likelihood side


def test_repeats_on_one_side_only_number_the_replicates(tmp_path):
    """Before: lm-eval repeats 2 (two records per item); after: one generation per item. Replicate 0 pairs;
    replicate 1 exists only before. The row is seed 0 with one replicate paired; replicate 1's items are counted
    as unpaired and named in the warning."""
    b, a = dirs(tmp_path)
    lines = [
        sample_line(i, None, record=[pf_record("mmlu_x", int(r0)), pf_record("mmlu_x", int(r1))])
        for i, (r0, r1) in enumerate(["10", "11", "01"])
    ]
    write_run(b, {"postforget_mmlu_x": lines}, configs={"postforget_mmlu_x": {"repeats": 2}})
    write_run(a, ours("mmlu_x", "011"))
    result = pair(b, a, analyses=False)
    assert result.subtasks["seed"].tolist() == ["0"] and result.subtasks["replicates"].tolist() == [1]
    row = result.subtasks.iloc[0]
    # replicate 0 before 1,1,0 -> after 0,1,1: one 1->0, one 1->1, one 0->1; 3 items unpaired before (r1)
    assert (row["n_10"], row["n_11"], row["n_01"], row["n_00"]) == (1, 1, 1, 0)
    assert (row["n_unpaired_before"], row["n_unpaired_after"]) == (3, 0)
    assert set(result.samples["seed"].astype(str)) == {"0"}
    assert any(w.startswith("mmlu_x seed 0 replicate 1: 3 item(s) only on the before side") for w in result.warnings)


def _without_seed(results: Path) -> None:
    """lm-eval writes null seeds when run with --seed None (random_seed, torch_seed ... all null)."""
    data = json.loads(results.read_text(encoding="utf-8"))
    for key in ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed"):
        data["config"][key] = None
    results.write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_a_run_without_seed_sorts_after_the_numbered_ones(tmp_path):
    """Before: a run without seed written first, then one with seed 5; after: seeds 1 and 3. In order
    (numbered by number, then the unnumbered): before 5, none; after 1, 3 -> 5~1 and none~3."""
    b, a = dirs(tmp_path)
    _without_seed(write_run(b, ours("mmlu_x", "11"), seed=None, date="2025-01-01T00-00-00.000000", model_dir="m0"))
    write_run(b, ours("mmlu_x", "10"), seed=5, date="2025-01-01T00-00-01.000000", model_dir="m1")
    write_run(a, ours("mmlu_x", "00"), seed=1, date="2025-01-02T00-00-00.000000", model_dir="m0")
    write_run(a, ours("mmlu_x", "01"), seed=3, date="2025-01-02T00-00-01.000000", model_dir="m1")
    result = pair(b, a, seed_match="order", analyses=False)
    assert result.summary["seed_matching"]["mmlu_x"]["pairs"] == [["5", "1"], ["none", "3"]]
    n_10 = dict(zip(result.subtasks["seed"], result.subtasks["n_10"]))
    # 5~1: 10 -> 00, one 1->0; none~3: 11 -> 01, one 1->0 (item 0)
    assert n_10 == {"5~1": 1, "none~3": 1}
    n_11 = dict(zip(result.subtasks["seed"], result.subtasks["n_11"]))
    assert n_11 == {"5~1": 0, "none~3": 1}


def test_gold_comes_from_the_after_side_when_the_before_records_carry_none(tmp_path):
    b, a = dirs(tmp_path)
    lines = []
    for i, bit in enumerate("10"):
        record = pf_record("mmlu_x", int(bit))
        del record["gold"]  # a record without gold
        lines.append(sample_line(i, None, record=record))
    write_run(b, {"postforget_mmlu_x": lines})
    write_run(a, ours("mmlu_x", "11"))  # gold "A"
    result = pair(b, a, analyses=False)
    assert result.samples.sort_values("doc_id")["gold"].tolist() == ["A", "A"]


def test_doc_hash_mismatch_names_the_items_per_sub_benchmark(tmp_path):
    """Items 0 and 2 of mmlu_x changed text between the runs; mmlu_z's did not."""
    b, a = dirs(tmp_path)
    changed = {0: doc_for(0, " (new)"), 2: doc_for(2, " (new)")}
    write_run(b, {**ours("mmlu_x", "101"), **ours("mmlu_z", "11")})
    write_run(a, {**ours("mmlu_x", "101", docs=changed), **ours("mmlu_z", "11")})
    with pytest.raises(PairingError) as err:
        pair(b, a, analyses=False)
    message = str(err.value)
    assert message.startswith("doc_hash differs for mmlu_x doc_id 0 (before: task postforget_mmlu_x, after: task ")
    assert "Mismatched items per sub-benchmark: {'mmlu_x': 2}." in message
