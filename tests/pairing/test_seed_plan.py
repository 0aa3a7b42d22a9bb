"""The seed plan's warnings and errors, the join's order and the unpaired warnings, each written out whole.

Every expected message and order below is worked out by hand from the seeds and 0/1 strings written into
the runs: which seeds pair, which are left without a partner, which are on both sides, and how many
sub-benchmarks share each situation. These pin what mutation testing showed no test looked at.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from postforget_lmeval import pair
from postforget_lmeval.errors import PairingError
from tests.helpers.lmeval_runs import ours, pf_record, sample_line, write_run


def _write(tmp_path: Path, runs: dict[tuple[str, int], dict[str, str]]) -> tuple[Path, Path]:
    """One run per (side, seed), written (and dated) in the order given; each holds the sub-benchmarks named,
    their items 0..n-1 correct per the 0/1 string."""
    roots = {"before": tmp_path / "before", "after": tmp_path / "after"}
    for i, ((side, seed), subs) in enumerate(runs.items()):
        tasks = {task: lines for sub, bits in subs.items() for task, lines in ours(sub, bits).items()}
        write_run(roots[side], tasks, seed=seed, date=f"2025-01-01T00-00-{i:02d}.000000", model_dir=f"m{i:02d}")
    return roots["before"], roots["after"]


SIX = [f"mmlu_{c}" for c in "abcdef"]

SEED_SITUATIONS = {
    # six sub-benchmarks, seeds 1, 2 before and 3, 4 after: none shared, paired in turn; the listing
    # names five and counts the sixth
    "order, no seed shared, six sub-benchmarks": (
        "order",
        {("before", 1): dict.fromkeys(SIX, "1"), ("before", 2): dict.fromkeys(SIX, "1"),
         ("after", 3): dict.fromkeys(SIX, "0"), ("after", 4): dict.fromkeys(SIX, "0")},
        [
            "seeds matched in sorted order (no seed shared; --seed-match order pairs them in turn): "
            "before 1 ~ after 3, before 2 ~ after 4 "
            "(6 sub-benchmark(s): mmlu_a, mmlu_b, mmlu_c, mmlu_d, mmlu_e, ... (1 more))"
        ],
    ),
    # before 1, 2, 3 and after 2, 3: in turn 1~2, 2~3, seed 3 before has no partner; 2 and 3 are on both sides
    "order, seeds 2 and 3 shared, one left over": (
        "order",
        {("before", 1): {"mmlu_x": "1"}, ("before", 2): {"mmlu_x": "1"}, ("before", 3): {"mmlu_x": "1"},
         ("after", 2): {"mmlu_x": "0"}, ("after", 3): {"mmlu_x": "0"}},
        [
            "seeds matched in sorted order (seeds 2, 3 are on both sides, but --seed-match order pairs them in "
            "turn): before 1 ~ after 2, before 2 ~ after 3 (1 sub-benchmark(s): mmlu_x)",
            "seeds without a partner, left out: before ['3'], after - (1 sub-benchmark(s): mmlu_x)",
        ],
    ),
    # the same seeds on both sides, paired in turn: each with itself, nothing to say
    "order, the same seeds": (
        "order",
        {("before", 1): {"mmlu_x": "1"}, ("before", 2): {"mmlu_x": "1"},
         ("after", 1): {"mmlu_x": "1"}, ("after", 2): {"mmlu_x": "1"}},
        [],
    ),
    # exact: mmlu_x has seed 1 before and 2 after (nothing in common, not paired); mmlu_y has 1 before and
    # 1, 2 after (1 pairs, 2 after has no partner)
    "exact, one sub-benchmark without a common seed": (
        "exact",
        {("before", 1): {"mmlu_x": "1", "mmlu_y": "1"},
         ("after", 2): {"mmlu_x": "1", "mmlu_y": "0"}, ("after", 1): {"mmlu_y": "0"}},
        [
            "seeds without a partner, left out: before ['1'], after ['2'] (1 sub-benchmark(s): mmlu_x)",
            "no seed in common: not paired (1 sub-benchmark(s): mmlu_x)",
            "seeds without a partner, left out: before -, after ['2'] (1 sub-benchmark(s): mmlu_y)",
        ],
    ),
}  # fmt: skip


@pytest.mark.parametrize("situation", SEED_SITUATIONS)
def test_each_seed_situation_is_one_whole_warning_naming_its_sub_benchmarks(tmp_path, situation):
    """A user reads these lines to learn which seeds were compared with which and which were dropped:
    the whole list of warnings, word for word, for four hand-made seed layouts."""
    mode, runs, expected = SEED_SITUATIONS[situation]
    before, after = _write(tmp_path, runs)
    assert pair(before, after, seed_match=mode, analyses=False).warnings == expected


def test_seeds_that_do_not_line_up_name_both_sides_and_the_way_out(tmp_path):
    """auto: seeds 1, 2 before and 3, 4, 5 after share none and differ in number, so pairing in turn would
    be a guess: the error names both lists and the option that pairs them anyway."""
    runs = {("before", s): {"mmlu_x": "1"} for s in (1, 2)} | {("after", s): {"mmlu_x": "1"} for s in (3, 4, 5)}
    before, after = _write(tmp_path, runs)
    with pytest.raises(PairingError) as err:
        pair(before, after, analyses=False)
    assert str(err.value) == (
        "seeds of mmlu_x do not line up: before 1, 2, after 3, 4, 5; pass --seed-match order to pair them in "
        "sorted order (unmatched seeds are reported and left out)"
    )


def test_samples_are_ordered_by_sub_benchmark_seed_then_item(tmp_path):
    """Two seeds, three items each, written seed 2 first: samples come sub-benchmark by sub-benchmark, seed
    label by seed label (as text), then by doc_id, not item by item across the seeds."""
    runs = {
        ("before", 2): {"mmlu_y": "10", "mmlu_x": "110"},
        ("before", 1): {"mmlu_y": "01", "mmlu_x": "011"},
        ("after", 2): {"mmlu_y": "11", "mmlu_x": "100"},
        ("after", 1): {"mmlu_y": "00", "mmlu_x": "001"},
    }
    samples = pair(*_write(tmp_path, runs), analyses=False).samples
    got = list(zip(samples["subtask"].astype(str), samples["seed"].astype(str), samples["doc_id"]))
    assert got == [
        ("mmlu_x", "1", 0), ("mmlu_x", "1", 1), ("mmlu_x", "1", 2),
        ("mmlu_x", "2", 0), ("mmlu_x", "2", 1), ("mmlu_x", "2", 2),
        ("mmlu_y", "1", 0), ("mmlu_y", "1", 1), ("mmlu_y", "2", 0), ("mmlu_y", "2", 1),
    ]  # fmt: skip
    # before -> after per item: mmlu_x seed 1 is 011 -> 001 (item 1 forgotten), seed 2 110 -> 100 (item 1)
    assert samples["transition"].astype(str).tolist()[:6] == ["0->0", "1->0", "1->1", "1->1", "1->0", "0->0"]


def test_unpaired_replicates_are_warned_in_seed_label_order_with_none_paired(tmp_path):
    """Before: lm-eval repeats 11 (replicates 0..10 of two items); after: one generation. Replicate 0 pairs,
    replicates 1..10 exist before only: one warning each, seed 0 and the replicate by number, each saying that none
    of its items were paired and that the repeats differ."""
    bits = ["1" * 11, "0" * 11]
    lines = [sample_line(i, None, record=[pf_record("mmlu_x", int(c)) for c in item]) for i, item in enumerate(bits)]
    before, after = Path(tmp_path) / "before", Path(tmp_path) / "after"
    write_run(before, {"postforget_mmlu_x": lines}, configs={"postforget_mmlu_x": {"repeats": 11}})
    write_run(after, ours("mmlu_x", "10"))
    warnings = [w for w in pair(before, after, analyses=False).warnings if "cannot be paired" in w]
    assert warnings == [
        f"mmlu_x seed 0 replicate {r}: 2 item(s) only on the before side (doc_id 0, 1) cannot be paired and are left "
        f"out of the figures (0 paired): replicate {r} exists on the before side only: the sides ran different "
        "numbers of epochs (inspect_ai --epochs) or repeats (lm-eval); run both with the same number"
        for r in range(1, 11)
    ]


def test_seeds_equal_as_numbers_keep_the_order_they_first_appear_in_on_the_side(tmp_path):
    """Seeds are ordered by their number as a float, ties in order of first appearance on the side (the runs
    are read task by task). 2**53 and 2**53 + 1 are the same float, so they tie: 2**53 + 1 shows first (in
    mmlu_a's run, read before mmlu_x's), so it leads mmlu_x's seeds too. Paired in turn with after's 1, 2.
    (Ordering by the exact integer instead would change this expectation, knowingly.)"""
    low, high = 2**53, 2**53 + 1
    before, after = Path(tmp_path) / "before", Path(tmp_path) / "after"
    for i, (seed, sub) in enumerate(((high, "mmlu_a"), (low, "mmlu_x"), (high, "mmlu_x"))):
        write_run(before, ours(sub, "1"), seed=seed, date=f"2025-01-01T00-00-0{i}.000000", model_dir=f"m{i}")
    write_run(after, {**ours("mmlu_x", "0"), **ours("mmlu_a", "0")}, seed=1, date="2025-01-02T00-00-00.000000")
    write_run(after, ours("mmlu_x", "0"), seed=2, date="2025-01-02T00-00-01.000000", model_dir="m1")
    matching = pair(before, after, seed_match="order", analyses=False).summary["seed_matching"]
    assert matching["mmlu_x"]["pairs"] == [[str(high), "1"], [str(low), "2"]]
    assert matching["mmlu_a"]["pairs"] == [[str(high), "1"]]
