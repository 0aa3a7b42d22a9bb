"""Pairing behaviours where a plausible bug once passed every test, each against hand-counted values.

Every expected number below is counted by hand from the 0/1 strings written into the runs, not taken
from the code: which seed pairs with which, which copy of a duplicated line counts, the agreement
table, the k that wins, the category that wins.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from postforget_lmeval import pair
from postforget_lmeval.cli import main
from tests.helpers.lmeval_runs import ordinary, ours, pf_record, sample_line, write_run


def dirs(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "before", tmp_path / "after"


def _by_seed(result, column: str) -> dict[str, object]:
    return dict(zip(result.subtasks["seed"], result.subtasks[column]))


@pytest.mark.parametrize("mode", ["order", "auto"])
def test_seed_match_order_pairs_by_seed_number_before_with_after(tmp_path, mode):
    """Three seeds a side, none shared; the runs are written (and dated) in an order that is neither the
    numeric (1, 2, 10) nor the string order (1, 10, 2), so pairing by appearance or by text shows."""
    b, a = dirs(tmp_path)
    before = {10: "1000", 2: "1100", 1: "1111"}  # seed -> correctness of items 0..3, in writing order
    after = {30: "1000", 7: "1111", 5: "0000"}
    for root, runs, day in ((b, before, "01"), (a, after, "02")):
        for i, (seed, bits) in enumerate(runs.items()):
            write_run(root, ours("mmlu_x", bits), seed=seed, date=f"2025-01-{day}T00-00-0{i}.000000", model_dir=f"m{i}")
    result = pair(b, a, seed_match=mode)
    # sorted by number on both sides: 1~5, 2~7, 10~30
    assert sorted(zip(result.subtasks["seed_before"], result.subtasks["seed_after"])) == [
        ("1", "5"),
        ("10", "30"),
        ("2", "7"),
    ]
    # 1111 -> 0000: four items forgotten; 1100 -> 1111: two gained; 1000 -> 1000: nothing moves
    assert _by_seed(result, "n_10") == {"1~5": 4, "2~7": 0, "10~30": 0}
    assert _by_seed(result, "n_01") == {"1~5": 0, "2~7": 2, "10~30": 0}
    assert _by_seed(result, "acc_before") == {"1~5": 1.0, "2~7": 0.5, "10~30": 0.25}
    assert result.summary["seed_matching"]["mmlu_x"]["pairs"] == [["1", "5"], ["2", "7"], ["10", "30"]]


def test_the_first_copy_of_a_duplicated_item_line_counts(tmp_path):
    b, a = dirs(tmp_path)
    lines = ours("mmlu_x", "10")["postforget_mmlu_x"]
    # item 0 logged twice in one run: right first, then wrong; item 1 twice: wrong first, then right
    dup0 = sample_line(0, None, record=pf_record("mmlu_x", 0, answer="B"))
    dup1 = sample_line(1, None, record=pf_record("mmlu_x", 1, answer="A"))
    write_run(b, {"postforget_mmlu_x": [lines[0], lines[1], dup0, dup1]})
    write_run(a, ours("mmlu_x", "01"))
    result = pair(b, a)
    row = result.subtasks.iloc[0]
    # first copies: before 1, 0; after 0, 1 -> one 1->0 and one 0->1 (the last copies would give 0->0 and 1->1)
    assert (row["n"], row["n_10"], row["n_01"], row["n_11"], row["n_00"]) == (2, 1, 1, 0, 0)
    assert result.samples.sort_values("doc_id")["answer_before"].tolist() == ["A", "B"]
    assert any("2 duplicate item line(s)" in w and "the first is used" in w for w in result.warnings)


def test_agreement_csv_holds_the_hand_counted_stricter_variant(tmp_path):
    """Two seeds; doc 6 is paired under seed 1 only and must be left out of the agreement table.

    doc   seed 1 (b->a)   seed 2 (b->a)   agrees as
    0     1->0            1->0            1->0
    1     1->0            1->1            -
    2     1->1            1->1            1->1
    3     1->1            0->1            -
    4     0->1            0->1            0->1
    5     1->0            1->0            1->0
    6     1->0            (absent)        left out
    """
    b, a = dirs(tmp_path)
    runs = {(b, 1): "1111011", (a, 1): "0011100", (b, 2): "111001", (a, 2): "011110"}
    for (root, seed), bits in runs.items():
        write_run(root, ours("mmlu_x", bits), seed=seed, date=f"2025-01-0{seed}T00-00-00.000000", model_dir=f"s{seed}")
    out = Path(tmp_path) / "out"
    assert main([str(b), str(a), "-o", str(out), "--no-analyses"]) == 0
    agreement = pd.read_csv(out / "agreement.csv")
    assert len(agreement) == 1
    row = agreement.iloc[0]
    assert (row["subtask"], str(row["seeds"])) == ("mmlu_x", "1,2")
    assert (row["n"], row["n_seeds"], row["n_agree"]) == (6, 2, 4)
    assert (row["n_11"], row["n_10"], row["n_01"], row["n_00"]) == (1, 2, 1, 0)
    assert row["F"] == pytest.approx(2 / 6) and row["BT"] == pytest.approx(1 / 6)
    # accuracy over the 6 complete items and both seeds: before 5+4 of 12, after 3+4 of 12
    assert row["acc_before"] == pytest.approx(9 / 12) and row["acc_after"] == pytest.approx(7 / 12)
    # chance of an agreeing 1->0 with k=4 (docs/method.md): u_b * 4**-2 * u_a * (3/4)**2, u = (1-acc)/(1-1/4)
    u_b, u_a = (1 - 9 / 12) / 0.75, (1 - 7 / 12) / 0.75
    assert row["F_chance"] == pytest.approx(u_b * u_a / 16 * 9 / 16) == pytest.approx(5 / 768)
    assert row["F_true"] == pytest.approx(2 / 6 - 5 / 768)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["totals"]["items_paired"] == 7 + 6


def test_k_option_does_not_override_the_k_our_records_carry(tmp_path):
    """--k is for tasks that log no k; a postforget record's own k (here 4) stays."""
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "1111111100", k=4))
    write_run(a, ours("mmlu_x", "1111110010", k=4))
    row = pair(b, a, k=2).subtasks.iloc[0]
    # acc 0.8 -> 0.7, k 4: F_chance = 0.2 * 0.3 / (4 - 1) = 0.02 (with k 2 it would be 0.06)
    assert row["k"] == 4 and row["F_chance"] == pytest.approx(0.02)
    assert row["F_true"] == pytest.approx(0.2 - 0.02)


def test_before_category_wins_when_the_sides_disagree(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "10", category="Logic"))
    write_run(a, ours("mmlu_x", "00", category="Culture"))
    result = pair(b, a)
    assert result.subtasks["category"].tolist() == ["Logic"]
    assert set(result.samples["category"].astype(str)) == {"Logic"}
    assert any("category differs between the sides (Logic, Culture); using Logic" in w for w in result.warnings)
    reverse = pair(a, b)
    assert reverse.subtasks["category"].tolist() == ["Culture"]


def _statuses(subtask: str, items: list[tuple[int, str]]) -> list[str]:
    """Postforget lines whose items have the given (correct, status)."""
    return [
        sample_line(i, None, record=pf_record(subtask, c, status=s, answer="A" if s == "answered" else None))
        for i, (c, s) in enumerate(items)
    ]


def test_unanswered_items_are_counted_per_side(tmp_path):
    """subtasks.csv's unanswered_* count the logged statuses other than 'answered'; no status logged: empty."""
    b, a = dirs(tmp_path)
    before = {
        "postforget_mmlu_x": _statuses("mmlu_x", [(1, "answered"), (1, "answered"), (0, "no_answer"), (0, "invalid")]),
        "postforget_mmlu_y": _statuses("mmlu_y", [(0, "unfinished")]),
    }
    after = {
        "postforget_mmlu_x": _statuses(
            "mmlu_x", [(0, "answered"), (0, "unfinished"), (1, "answered"), (1, "answered")]
        ),
        "postforget_mmlu_y": _statuses("mmlu_y", [(1, "answered")]),
    }
    write_run(b, before)
    write_run(a, after)
    rows = pair(b, a).subtasks.set_index("subtask")
    assert rows.loc["mmlu_x", ["unanswered_before", "unanswered_after"]].tolist() == [2, 1]
    assert rows.loc["mmlu_y", ["unanswered_before", "unanswered_after"]].tolist() == [1, 0]
    assert str(rows["unanswered_before"].dtype) == "int64"
    write_run(tmp_path / "plain_b", ordinary("t", "10"))
    write_run(tmp_path / "plain_a", ordinary("t", "11"))
    plain = pair(tmp_path / "plain_b", tmp_path / "plain_a").subtasks.iloc[0]
    assert pd.isna(plain["unanswered_before"]) and pd.isna(plain["unanswered_after"])


def test_agreement_rows_per_sub_benchmark_skip_one_seed_ones(tmp_path):
    """mmlu_a has one seed (no agreement row); mmlu_b and mmlu_c two, counted by hand, each on its own items."""
    b, a = dirs(tmp_path)
    runs = {  # (side, seed) -> sub-benchmark -> correctness of its items
        (b, 1): {"mmlu_a": "1", "mmlu_b": "10", "mmlu_c": "111"},
        (a, 1): {"mmlu_a": "0", "mmlu_b": "00", "mmlu_c": "111"},
        (b, 2): {"mmlu_b": "10", "mmlu_c": "111"},
        (a, 2): {"mmlu_b": "01", "mmlu_c": "111"},
    }
    for (root, seed), subs in runs.items():
        tasks = {task: lines for sub, bits in subs.items() for task, lines in ours(sub, bits).items()}
        write_run(root, tasks, seed=seed, date=f"2025-01-0{seed}T00-00-00.000000", model_dir=f"s{seed}")
    agreement = pair(b, a).agreement.set_index("subtask")
    assert agreement.index.tolist() == ["mmlu_b", "mmlu_c"]
    # mmlu_b: item 0 1->0 under both seeds, item 1 0->0 then 0->1 (disagrees); mmlu_c: 1->1 three times
    assert agreement.loc["mmlu_b", ["n", "n_agree", "n_10", "n_00", "n_01"]].tolist() == [2, 1, 1, 0, 0]
    assert agreement.loc["mmlu_c", ["n", "n_agree", "n_11"]].tolist() == [3, 3, 3]


def test_samples_of_items_paired_after_unpaired_ones_keep_their_transition(tmp_path):
    """Items 0 and 1 are on the before side only; 2 and 3 pair and keep their own transitions."""
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "1100"))
    write_run(
        a, {"postforget_mmlu_x": [sample_line(i, None, record=pf_record("mmlu_x", c)) for i, c in ((2, 0), (3, 1))]}
    )
    samples = pair(b, a).samples
    assert samples[["doc_id", "transition"]].astype({"transition": str}).values.tolist() == [[2, "0->0"], [3, "0->1"]]
    assert list(samples.index) == [0, 1] and "index" not in samples.columns


def test_the_unpaired_warning_names_both_sides_their_items_and_the_paired_count(tmp_path):
    b, a = dirs(tmp_path)
    write_run(b, ours("mmlu_x", "1" * 12))  # doc_id 0..11
    write_run(a, {"postforget_mmlu_x": [sample_line(i, None, record=pf_record("mmlu_x", 1)) for i in (10, 11, 12)]})
    warnings = [w for w in pair(b, a).warnings if "cannot be paired" in w]
    assert warnings == [
        "mmlu_x seed 0: 10 item(s) only on the before side (doc_id 0, 1, 2, 3, 4, 5, 6, 7, ... (2 more)) and "
        "1 item(s) only on the after side (doc_id 12) cannot be paired and are left out of the figures (2 paired): "
        "run both sides on the same items (same --limit)"
    ]
