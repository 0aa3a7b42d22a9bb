"""The output tables of a pairing where a plausible slip in pairing/tables.py once passed every test.

Each expected value is counted by hand from the 0/1 strings written into the runs: the unpaired counts of a
sub-benchmark that has none, the rows of a run with more than ten lm-eval repeats (whose seed labels sort
0#r0, 0#r1, 0#r10, 0#r2, ... as text), and the cluster column when only one side's records carry clusters.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from postforget_lmeval import pair
from postforget_lmeval.cli import main
from tests.helpers.lmeval_runs import ordinary, ours, pf_record, sample_line, write_run

_COUNTS = ["n_11", "n_10", "n_01", "n_00"]


def dirs(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "before", tmp_path / "after"


def test_unpaired_counts_are_whole_numbers_and_zero_where_a_row_has_none(tmp_path):
    """mmlu_x: docs 0-3 before, 0-1 after -> 2 only before, none only after. mmlu_y: docs 0-1 before,
    0-2 after -> none only before, 1 only after. Each side has unpaired items in one row and none in the
    other, so the other row must read 0 (not 1, not empty) and subtasks.csv must write 2, not 2.0."""
    b, a = dirs(tmp_path)
    write_run(b, {**ours("mmlu_x", "1100"), **ours("mmlu_y", "10")})
    write_run(a, {**ours("mmlu_x", "10"), **ours("mmlu_y", "011")})
    out = tmp_path / "out"
    assert main([str(b), str(a), "-o", str(out), "--no-analyses"]) == 0
    sub = pd.read_csv(out / "subtasks.csv", dtype=str).set_index("subtask")
    assert sub.loc[["mmlu_x", "mmlu_y"], "n_unpaired_before"].tolist() == ["2", "0"]
    assert sub.loc[["mmlu_x", "mmlu_y"], "n_unpaired_after"].tolist() == ["0", "1"]
    # the paired items still count as usual: mmlu_x 1,1 -> 1,0; mmlu_y 1,0 -> 0,1
    assert sub.loc[["mmlu_x", "mmlu_y"], "n"].tolist() == ["2", "2"]
    assert sub.loc[["mmlu_x", "mmlu_y"], "n_10"].tolist() == ["1", "1"]


def test_eleven_repeats_are_one_seeds_row_with_the_counts_summed_and_the_rates_averaged(tmp_path):
    """lm-eval repeats 11 on both sides: replicates 0..10 of seed 0, one row. Item 0 is right before in every
    replicate and right after only in replicate 10; item 1 is wrong throughout. So every replicate has one
    1->0 and one 0->0, except replicate 10: one 1->1 and one 0->0. Summed: 1, 10, 0, 11 over 22 item-replicates;
    accuracy after is 0.5 in replicate 10 and 0 elsewhere, mean 0.5 / 11."""
    b, a = dirs(tmp_path)
    n_rep = 11
    cfg = {"postforget_mmlu_x": {"repeats": n_rep}}
    after_item0 = [int(r == 10) for r in range(n_rep)]
    for root, item0 in ((b, [1] * n_rep), (a, after_item0)):
        lines = [
            sample_line(i, None, record=[pf_record("mmlu_x", c) for c in bits])
            for i, bits in enumerate([item0, [0] * n_rep])
        ]
        write_run(root, {"postforget_mmlu_x": lines}, configs=cfg)
    subtasks = pair(b, a, analyses=False).subtasks
    assert subtasks["seed"].tolist() == ["0"] and subtasks["replicates"].tolist() == [n_rep]
    assert subtasks[["n", *_COUNTS]].iloc[0].tolist() == [22, 1, 10, 0, 11]
    assert subtasks["acc_after"].iloc[0] == pytest.approx(0.5 / 11) and subtasks["F"].iloc[0] == pytest.approx(5 / 11)


def _clustered(bits: str, clusters: list[str]) -> dict[str, list[str]]:
    """A postforget task on mmlu_x whose records name the text each item shares (MCTest's story, MuSR's narrative)."""
    lines = []
    for i, (bit, cluster) in enumerate(zip(bits, clusters)):
        record = pf_record("mmlu_x", int(bit))
        record["cluster"] = cluster
        lines.append(sample_line(i, None, record=record))
    return {"postforget_mmlu_x": lines}


@pytest.mark.parametrize("clustered_side", ["before", "after"])
def test_samples_carry_the_clusters_of_whichever_side_logs_them(tmp_path, clustered_side):
    """One side is our task, whose records carry clusters s1, s1, s2; the other an ordinary lm-eval task
    on the same items, which logs none. samples.parquet's cluster column holds s1, s1, s2 either way, so the
    bootstrap draws items 0 and 1 together whichever run was ours."""
    b, a = dirs(tmp_path)
    clustered = _clustered("110", ["s1", "s1", "s2"])
    plain = ordinary("mmlu_x", "100")
    write_run(b, clustered if clustered_side == "before" else plain)
    write_run(a, plain if clustered_side == "before" else clustered)
    samples = pair(b, a, analyses=False).samples.sort_values("doc_id")
    assert samples["doc_id"].tolist() == [0, 1, 2]
    assert samples["cluster"].tolist() == ["s1", "s1", "s2"]
