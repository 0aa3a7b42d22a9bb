"""The noise floor: a hand-worked pair of runs through ``pair``, and a simulation with known per-item success
probabilities whose floor and beyond-noise figure the intervals must cover at their stated level."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval import pair
from postforget_lmeval.analyses import _noise as noise
from postforget_lmeval.report.analyses_md import noise_frame
from tests.helpers.lmeval_runs import ordinary, ours, write_run


def _runs(root: Path, bits: dict[str, list[str]]) -> None:
    for side, per_seed in bits.items():
        for seed, b in enumerate(per_seed):
            write_run(root / side / f"s{seed}", ours("arc_easy", b, category="Logic"), seed=seed)


def test_floor_by_hand(tmp_path: Path) -> None:
    # before s0 -> s1: 1->0 at items 5, 6, 0->1 at item 8: (0.2 + 0.1) / 2 = 0.15; chance 0.2 * 0.3 / 3 = 0.02,
    # F_true 0.18, BT_true 0.08: 0.13. After: both seeds equal (greedy): 0 and 0, left out of the floor subtracted,
    # which is the before side's (averaging the after side's 0 in would halve it to 0.075).
    _runs(tmp_path, {"before": ["1111111100", "1111100110"], "after": ["1111110010", "1111110010"]})
    result = pair(tmp_path / "before", tmp_path / "after")
    rows = result.subtasks.set_index("seed")
    assert rows["F_noise"].tolist() == pytest.approx([0.15, 0.15])
    assert rows["BT_noise"].tolist() == pytest.approx([0.15, 0.15])
    assert rows["F_true_noise"].tolist() == pytest.approx([0.13, 0.13])
    assert rows["F_noise_before"].tolist() == pytest.approx([0.15, 0.15])
    assert rows["F_true_noise_before"].tolist() == pytest.approx([0.13, 0.13])
    assert rows["F_noise_after"].tolist() == [0.0, 0.0] and rows["F_true_noise_after"].tolist() == [0.0, 0.0]
    # seed 0: F 0.2, F_true 0.18; seed 1 (1111100110 -> 1111110010): F 0.1, BT 0.1, chance 0.03, F_true 0.07
    assert rows["F_beyond_noise"].tolist() == pytest.approx([0.05, -0.05])
    assert rows["F_true_beyond_noise"].tolist() == pytest.approx([0.05, -0.06])
    assert rows["BT_true_beyond_noise"].tolist() == pytest.approx([0.08 - 0.13, 0.07 - 0.13])
    assert set(rows["noise_note"]) == {noise.greedy_note("after", "before")}
    assert set(rows["noise_floor_from"]) == {"before"} and set(rows["noise_seeds"]) == {"seeds: before 2, after 2"}
    assert not rows["noise_shared_seed"].any()  # a greedy side draws no random numbers: sharing seeds is harmless
    overall = result.categories.query("average == 'macro' and category == 'OVERALL'").iloc[0]
    assert overall["F_true_beyond_noise_mean"] == pytest.approx(-0.005)
    assert overall["F_true_beyond_noise_lo"] <= -0.005 <= overall["F_true_beyond_noise_hi"]
    assert overall["noise_floor_from"] == "before" and overall["noise_note"] == noise.greedy_note("after", "before")


def test_one_seed_says_the_floor_needs_two(tmp_path: Path) -> None:
    _runs(tmp_path, {"before": ["1111111100"], "after": ["1111110010"]})
    result = pair(tmp_path / "before", tmp_path / "after")
    assert result.subtasks["noise_note"].tolist() == [noise.NEEDS_TWO]
    assert result.subtasks["F_noise"].isna().all() and result.subtasks["F_true_beyond_noise"].isna().all()
    overall = result.categories.query("average == 'macro' and category == 'OVERALL'").iloc[0]
    assert overall["noise_note"] == noise.NEEDS_TWO


def _frame(rows: list[dict[str, object]]) -> pd.DataFrame:
    """A samples table of one sub-benchmark 'sim' (category 'Sim'), k 4 unless a row says otherwise."""
    return pd.DataFrame([{"subtask": "sim", "category": "Sim", "replicate": 0, "k": 4.0, **r} for r in rows])


def _paired(bits: dict[str, dict[str, str]], k: list[float] | None = None) -> pd.DataFrame:
    """samples of 'sim' from {seed label: {side: 0/1 string ('.': not paired), 'seeds': 'b~a' seeds}}."""
    rows = []
    for label, per in bits.items():
        seed_before, seed_after = per.get("seeds", f"{label}~{label}").split("~")
        for i, (b, a) in enumerate(zip(per["before"], per["after"])):
            if "." in (b, a):
                continue
            rows.append(
                {"doc_id": i, "seed": label, "seed_before": seed_before, "seed_after": seed_after,
                 "before": float(b), "after": float(a), "k": (k or [4.0] * len(per["before"]))[i]}
            )  # fmt: skip
    return _frame(rows)


def _unmatched(side: str, seeds: dict[str, str]) -> pd.DataFrame:
    """PairResult.unmatched rows of 'sim': one side's seeds without a partner, {seed: 0/1 string}."""
    rows = [
        {"side": side, "subtask": "sim", "seed": seed, "replicate": 0, "doc_id": i, "correct": int(b), "k": 4.0,
         "cluster": None}
        for seed, bits in seeds.items() for i, b in enumerate(bits)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_one_seed_before_three_after_reads_the_unmatched_after_seeds(tmp_path: Path) -> None:
    # after s0 1111100000, s1 1111010000, s2 1100110000: pairs (0,1) F 0.1 BT 0.1, (0,2) F 0.2 BT 0.1, (1,2) F 0.2
    # BT 0.1: floor (0.1 + 0.15 + 0.15) / 3 = 0.4 / 3, the after side's. Headline s0 ~ s0: F 0.3.
    after = ["1111100000", "1111010000", "1100110000"]
    _runs(tmp_path, {"before": ["1111111100"], "after": after})
    result = pair(tmp_path / "before", tmp_path / "after")  # auto: seed 0 matches, after seeds 1 and 2 are unmatched
    row = result.subtasks.iloc[0]
    assert result.summary["seed_matching"]["arc_easy"]["unmatched_after"] == ["1", "2"]
    assert sorted(result.unmatched["seed"].unique()) == ["1", "2"] and set(result.unmatched["side"]) == {"after"}
    assert result.summary["analyses"]["noise_floor"]["unmatched_seed_runs_read"] == 2
    assert row["noise_floor_from"] == "after" and row["noise_seeds"] == "seeds: before 1, after 3"
    assert row["F_noise"] == pytest.approx(0.4 / 3) and row["F_noise_after"] == pytest.approx(0.4 / 3)
    assert np.isnan(row["F_noise_before"]) and np.isnan(row["F_true_noise_before"])
    assert row["F_beyond_noise"] == pytest.approx(0.3 - 0.4 / 3)
    assert row["F"] == pytest.approx(0.3) and row["n"] == 10  # the headline still pairs seed 0 alone
    # before seed 0 ~ after seed 0: one random stream for both, and the before side may sample: flagged
    assert bool(row["noise_shared_seed"]) and noise.SHARED in row["noise_note"]


TWO_SEEDS = {
    "0": {"before": "1110", "after": "1110", "seeds": "0~7"},
    "1": {"before": "1101", "after": "1101", "seeds": "1~8"},
}
"""Two paired seeds (0~7, 1~8), each side 1110 then 1101 on items 0-3: F 1/4, BT 1/4, accuracies 3/4."""


def test_an_unmatched_seed_without_a_number_and_an_item_only_it_logged_count_for_the_floor() -> None:
    # paired seeds 0~7 and 1~8, each side 1110 then 1101 on items 0-3; after also a run without a seed ("none",
    # unmatched): 1101 and item 4, which no paired run logged. Each pair reads the items both runs logged (0-3).
    # Before: F 1/4, BT 1/4: 1/4. After: (7, 8) 1/4, (7, none) 1/4, (8, none) 0: 1/6. Pooled 5/24. F_true (k 4,
    # accuracies 3/4, chance 1/48): after (11/48 + 11/48 + 0) / 3 = 11/72; item 4 is read too (its k is known:
    # the chance baseline needs every item's), in no pair
    bits = TWO_SEEDS
    unmatched = _unmatched("after", {"none": "11011"})
    rows, _, texts = noise.noise_floor(_paired(bits), n_boot=10, unmatched=unmatched)
    assert rows["F_noise_before"].tolist() == pytest.approx([0.25] * 2)
    assert rows["F_noise_after"].tolist() == pytest.approx([1 / 6] * 2)
    assert rows["F_noise"].tolist() == pytest.approx([5 / 24] * 2)
    assert rows["F_true_noise_after"].tolist() == pytest.approx([11 / 72] * 2)
    assert texts.to_dict("records") == [
        {"subtask": "sim", "noise_seeds": "seeds: before 2, after 3", "noise_floor_from": "pooled", "noise_note": ""}
    ]


def test_order_matching_keeps_the_unmatched_seeds_for_the_floor(tmp_path: Path) -> None:
    for seed, bits in ((5, "1111111100"),):
        write_run(tmp_path / "before" / f"s{seed}", ours("arc_easy", bits, category="Logic"), seed=seed)
    for seed, bits in enumerate(["1111100000", "1111010000", "1100110000"]):
        write_run(tmp_path / "after" / f"s{seed}", ours("arc_easy", bits, category="Logic"), seed=seed)
    result = pair(tmp_path / "before", tmp_path / "after", seed_match="order")
    row = result.subtasks.iloc[0]
    assert row["seed"] == "5~0" and row["noise_floor_from"] == "after"
    assert row["F_noise"] == pytest.approx(0.4 / 3) and not row["noise_shared_seed"]
    assert noise.SHARED not in row["noise_note"]


def test_both_sides_sampling_pool_their_floors() -> None:
    # before s0 ~ s1: F 0.1 BT 0.1 (0.1); after s0 ~ s1: F 0.2 BT 0.1 (0.15): pooled 0.125
    samples = _paired(
        {"0": {"before": "1111100000", "after": "1111100000", "seeds": "0~7"},
         "1": {"before": "1111010000", "after": "1100110000", "seeds": "1~8"}}
    )  # fmt: skip
    rows, cats, texts = noise.noise_floor(samples, n_boot=20)
    assert rows["F_noise_before"].tolist() == pytest.approx([0.1, 0.1])
    assert rows["F_noise_after"].tolist() == pytest.approx([0.15, 0.15])
    assert rows["F_noise"].tolist() == pytest.approx([0.125, 0.125])
    # headlines: seed 0 F 0, BT 0; seed 1 (1111010000 -> 1100110000) F 0.2, BT 0.1
    assert rows["F_beyond_noise"].tolist() == pytest.approx([-0.125, 0.075])
    assert rows["BT_beyond_noise"].tolist() == pytest.approx([-0.125, -0.025])
    assert texts["noise_floor_from"].tolist() == [noise.POOLED] and texts["noise_note"].tolist() == [""]
    assert not rows[noise.SHARED_COLUMN].any()  # 0 ~ 7 and 1 ~ 8: different seeds per side
    assert cats.set_index("category")[noise.SHARED_COLUMN].to_dict() == {"Sim": False, "OVERALL": False}


def test_the_rule_of_whose_floor_is_subtracted() -> None:
    # items x seeds per side with two or more seeds: "agree" reads the same under every seed (an item logged under
    # no seed agrees too), "sample" differs on an item
    agree, sample = np.array([[1.0, 1.0], [0.0, 0.0], [np.nan, np.nan]]), np.array([[1.0, 0.0], [0.0, 0.0]])
    assert noise.floor_rule(True, {"before": sample}) == ([], "log-likelihood", noise.LOGLIKELIHOOD)
    assert noise.floor_rule(False, {}) == ([], "", noise.NEEDS_TWO)
    assert noise.floor_rule(False, {"before": agree, "after": agree}) == (["before", "after"], noise.POOLED, noise.SAME)
    assert noise.floor_rule(False, {"after": agree}) == (["after"], "after", noise.SAME)
    assert noise.floor_rule(False, {"before": sample, "after": sample}) == (["before", "after"], noise.POOLED, "")
    assert noise.floor_rule(False, {"after": sample}) == (["after"], "after", "")
    greedy_after = noise.greedy_note("after", "before")
    assert noise.floor_rule(False, {"before": sample, "after": agree}) == (["before"], "before", greedy_after)
    greedy_before = noise.greedy_note("before", "after")
    assert noise.floor_rule(False, {"before": agree, "after": sample}) == (["after"], "after", greedy_before)


def test_a_table_without_replicates_or_each_sides_seed_reads_the_seed_label_as_both_sides_seed() -> None:
    # a hand-built samples table (as the simulations build): no replicate column, no seed_before/seed_after. Each
    # side: s0 1110, s1 1101: floor 1/4, pooled; the same label on both sides is a shared sampling seed
    samples = pd.DataFrame(
        [{"subtask": "sim", "category": "Sim", "seed": seed, "doc_id": i, "before": float(b), "after": float(b),
          "k": 4.0} for seed, bits in (("0", "1110"), ("1", "1101")) for i, b in enumerate(bits)]
    )  # fmt: skip
    rows, _, texts = noise.noise_floor(samples, n_boot=10)
    assert rows["seed"].tolist() == ["0", "1"] and rows["F_noise"].tolist() == pytest.approx([0.25, 0.25])
    assert rows[noise.SHARED_COLUMN].tolist() == [True, True]
    assert texts["noise_seeds"].tolist() == ["seeds: before 2, after 2"]
    assert texts["noise_floor_from"].tolist() == [noise.POOLED]


def test_each_sub_benchmark_reads_its_own_k_when_categories_sort_otherwise_than_sub_benchmarks() -> None:
    # a_task (category Z, 2 options) and z_task (category A, 4 options), each side s0 1110, s1 1101: F 1/4, BT 1/4,
    # accuracies 3/4. F_true floor: a_task 1/4 - 1/16 = 3/16, z_task 1/4 - 1/48 = 11/48 (swapped if k were read
    # in sub-benchmark order against items in category order). m_task (category A, first in order) has one seed:
    # no floor, and the sub-benchmarks after it still have theirs
    two = TWO_SEEDS
    frames = [
        _paired(bits, k=[k] * 4).assign(subtask=name, category=category)
        for name, category, k, bits in (
            ("a_task", "Z", 2.0, two), ("z_task", "A", 4.0, two), ("m_task", "A", 4.0, {"0": two["0"]})
        )
    ]  # fmt: skip
    rows, _, texts = noise.noise_floor(pd.concat(frames, ignore_index=True), n_boot=10)
    floor = rows.groupby("subtask")["F_true_noise"].first()
    assert floor.to_dict() == pytest.approx({"a_task": 3 / 16, "z_task": 11 / 48})
    assert texts.set_index("subtask")["noise_note"].to_dict() == {"m_task": noise.NEEDS_TWO, "z_task": "", "a_task": ""}


def test_the_shared_seed_flag_is_each_rows_own_in_every_sub_benchmark() -> None:
    # x: seed 0 on both sides (shared) and 1~8; y: 1~8 and 2~9 (none shared). Both sides sample in both.
    one, other = {"before": "1110", "after": "1101"}, {"before": "1101", "after": "1011"}
    x = _paired({"0": {**one, "seeds": "0~0"}, "1~8": {**other, "seeds": "1~8"}})
    y = _paired({"1~8": {**one, "seeds": "1~8"}, "2~9": {**other, "seeds": "2~9"}})
    samples = pd.concat([x.assign(subtask="x"), y.assign(subtask="y")], ignore_index=True)
    rows, cats, _ = noise.noise_floor(samples, n_boot=10)
    flags = rows.set_index(["subtask", "seed"])[noise.SHARED_COLUMN].to_dict()
    assert flags == {("x", "0"): True, ("x", "1~8"): False, ("y", "1~8"): False, ("y", "2~9"): False}
    assert cats.set_index("category")[noise.SHARED_COLUMN].to_dict() == {"Sim": True, "OVERALL": True}


def test_an_item_missing_under_one_seed_leaves_the_chance_baseline_of_the_items_logged_under_both() -> None:
    # before s0 11001, s1 1010. (item 4, k 2, not logged under s1). On items 0-3 (k 4): F 0.25, BT 0.25, accuracy
    # 0.5 and 0.5, k_eff 4, chance 0.5 * 0.5 / 3: F_true floor 0.25 - 1/12 = 1/6. With item 4 counted (k_eff 10/3 or
    # the accuracies over 5 items) it would not be.
    samples = _paired(
        {"0": {"before": "11001", "after": "11001", "seeds": "0~7"}, "1": {"before": "1010.", "after": "1010.",
                                                                           "seeds": "1~8"}},
        k=[4.0, 4.0, 4.0, 4.0, 2.0],
    )  # fmt: skip
    rows, _, _ = noise.noise_floor(samples, n_boot=10)
    assert rows["F_true_noise_before"].tolist() == pytest.approx([1 / 6, 1 / 6])


def test_a_replicate_without_an_item_logged_under_both_seeds_has_no_floor_and_warns_nothing() -> None:
    # both sides: seed 0 logs item 0 right and item 1 wrong, seed 1 item 0 wrong only. Each side's pair of seeds
    # reads item 0 alone (F 1, BT 0): floor 1/2. A replicate that draws item 1 twice holds no item of the pair:
    # its floor is undefined (0/0), NaN without a warning, and so is seed 1's headline.
    samples = _paired(
        {"0": {"before": "10", "after": "10", "seeds": "0~7"}, "1": {"before": "0.", "after": "0.", "seeds": "1~8"}}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reps, _ = noise.replicates(samples, n_boot=50, seed=0)
    f = reps.pivot(index="replicate", columns="seed", values="F_noise").astype(float)
    assert f.loc[-1].tolist() == [0.5, 0.5]
    assert set(f["0"].dropna()) == {0.5} and f["0"].isna().any()
    assert f["0"].isna().tolist() == f["1"].isna().tolist()


def test_the_floor_true_needs_two_or_more_options_on_every_item() -> None:
    # each side: s0 1110, s1 1101: F 1/4, BT 1/4, accuracies 3/4. Two options (k_eff 2): chance 1/16 / 1, F_true
    # floor 3/16. One item of one option, or of no known k: no chance baseline, no F_true floor; F's stays 1/4.
    bits = TWO_SEEDS
    rows, _, _ = noise.noise_floor(_paired(bits, k=[2.0] * 4), n_boot=10)
    assert rows["F_true_noise_before"].tolist() == pytest.approx([3 / 16] * 2)
    assert rows["F_true_noise"].tolist() == pytest.approx([3 / 16] * 2)
    for k in ([4.0, 4.0, 4.0, 1.0], [4.0, np.nan, 4.0, 4.0]):
        rows, _, _ = noise.noise_floor(_paired(bits, k=k), n_boot=10)
        assert rows["F_noise"].tolist() == pytest.approx([0.25] * 2)
        assert rows["F_true_noise"].isna().all() and rows["F_true_headline"].isna().all()


def test_the_floor_pairs_every_run_of_a_side_the_replicates_of_a_seed_among_them() -> None:
    # two seeds a side, two replicates (epochs, repeats) each: runs 1100, 1111 under seed 0 and 1010, 1111 under
    # seed 1. Of the six pairs of runs five differ on two items, one way or both ((F + BT) / 2 = 1/4), and one
    # (1111, 1111) on none: floor 5/24. Reading only each seed's first replicate it was 1/4.
    rows = []
    for seed, (rep0, rep1) in {"0": ("1100", "1111"), "1": ("1010", "1111")}.items():
        for rep, bits in ((0, rep0), (1, rep1)):
            for i, b in enumerate(bits):
                rows.append({"doc_id": i, "seed": seed, "replicate": rep, "seed_before": seed, "seed_after": seed,
                             "before": float(b), "after": float(b)})  # fmt: skip
    out, _, texts = noise.noise_floor(_frame(rows), n_boot=10)
    assert out["seed"].tolist() == ["0", "1"]  # one row per seed, not per replicate
    assert out["F_noise_before"].tolist() == pytest.approx([5 / 24] * 2)
    assert out["F_noise"].tolist() == pytest.approx([5 / 24] * 2)
    assert out["F_beyond_noise"].tolist() == pytest.approx([-5 / 24] * 2)  # before = after in every run: F 0
    assert texts["noise_seeds"].tolist() == ["seeds: before 2 x replicates (4 runs), after 2 x replicates (4 runs)"]


def test_the_replicates_of_one_seed_build_a_floor_where_they_differ_and_are_named_where_they_agree() -> None:
    # one seed a side, two replicates: before 1100 / 1010 differ on two items ((1/4 + 1/4) / 2 = 1/4), after 1111
    # twice agrees. The before side's replicates are draws of the model: floor 1/4. When the before side's agree
    # too, neither side's replicates say anything about sampling noise: no floor, and the note says why.
    def frame(before: tuple[str, str], after: tuple[str, str]) -> pd.DataFrame:
        rows = [
            {"doc_id": i, "seed": "0", "replicate": rep, "seed_before": "0", "seed_after": "0",
             "before": float(b), "after": float(a)}
            for rep in (0, 1) for i, (b, a) in enumerate(zip(before[rep], after[rep]))
        ]  # fmt: skip
        return _frame(rows)

    out, _, texts = noise.noise_floor(frame(("1100", "1010"), ("1111", "1111")), n_boot=10)
    assert out["F_noise_before"].tolist() == pytest.approx([0.25]) and out["F_noise"].tolist() == pytest.approx([0.25])
    assert np.isnan(out["F_noise_after"].iloc[0])  # after's replicates agree: it is left out of the floor
    assert texts["noise_floor_from"].tolist() == ["before"]
    out, _, texts = noise.noise_floor(frame(("1100", "1100"), ("1111", "1111")), n_boot=10)
    assert out.empty and texts["noise_note"].tolist() == [noise.REPLICATES_AGREE]
    assert "run the task under a second seed" in noise.REPLICATES_AGREE


def test_the_intervals_are_the_stated_quantiles_of_the_replicates() -> None:
    rng = np.random.default_rng(3)
    samples = _simulated(rng, CHANGED, 60, 2).assign(seed_before=lambda d: d["seed"], seed_after="9")
    samples["seed_after"] = samples["seed"].map({"0": "7", "1": "8"})
    reps, _ = noise.replicates(samples, n_boot=50, seed=4)
    rows, cats, _ = noise.noise_floor(samples, n_boot=50, seed=4, level=0.8)
    drawn = reps[(reps["replicate"] >= 0) & (reps["seed"] == "0")]
    row = rows.set_index("seed").loc["0"]
    for column in ("F_noise", "F_true_beyond_noise", "F_noise_before"):
        values = drawn[column].astype(float)
        assert row[f"{column}_lo"] == pytest.approx(values.quantile(0.1))
        assert row[f"{column}_hi"] == pytest.approx(values.quantile(0.9))


def test_the_floor_draws_whole_stories_where_items_share_one() -> None:
    # two stories of 10 questions: a replicate holds story A twice, A and B, or B twice, so the floor takes at most
    # three values over the replicates (drawn item by item it would take many)
    samples = _paired(
        {"0": {"before": "11110000001111100000", "after": "11110000001111100000", "seeds": "0~7"},
         "1": {"before": "11000000001010101010", "after": "11000000001010101010", "seeds": "1~8"}}
    ).assign(cluster=lambda d: np.where(d["doc_id"] < 10, "story A", "story B"))  # fmt: skip
    reps, _ = noise.replicates(samples, n_boot=200, seed=5)
    drawn = reps[(reps["replicate"] >= 0) & (reps["seed"] == "0")]
    assert drawn["F_noise_before"].round(12).nunique() <= 3
    assert drawn["F_beyond_noise"].round(12).nunique() <= 3


def test_log_likelihood_scoring_has_floor_0_and_beyond_the_figure_itself(tmp_path: Path) -> None:
    mc = {"mc_task": {"output_type": "multiple_choice"}}
    write_run(tmp_path / "before", ordinary("mc_task", "1111100000", n_options=4), configs=mc)
    write_run(tmp_path / "after", ordinary("mc_task", "1110000011", n_options=4), configs=mc)
    result = pair(tmp_path / "before", tmp_path / "after")
    row = result.subtasks.iloc[0]
    assert row["noise_note"] == noise.LOGLIKELIHOOD and row["noise_floor_from"] == "log-likelihood"
    assert row["F_noise"] == 0.0 and row["F_true_noise"] == 0.0
    assert row["F_true_beyond_noise"] == pytest.approx(row["F_true"]) and row["F_true"] > 0
    assert row["BT_true_beyond_noise"] == pytest.approx(row["BT_true"])
    overall = result.categories.query("average == 'macro' and category == 'OVERALL'").iloc[0]
    assert overall["F_true_beyond_noise_mean"] == pytest.approx(row["F_true"])
    frame = noise_frame(result).set_index("category")
    assert frame.loc["OVERALL", "F_true floor"] == "0.0%"  # a number, not a sentence


def test_the_noise_table_averages_F_true_over_the_rows_with_a_floor(tmp_path: Path) -> None:
    # arc_easy: two seeds a side, each sampling; piqa_main: seed 0 only, so no floor
    for side, per_seed in {"before": ["1111111100", "1111100110"], "after": ["1111110010", "1111110011"]}.items():
        for seed, bits in enumerate(per_seed):
            tasks = ours("arc_easy", bits, category="Logic")
            if seed == 0:
                tasks |= ours("piqa_main", "1111111111" if side == "before" else "0000000000", category="Logic")
            write_run(tmp_path / side / f"s{seed}", tasks, seed=seed)
    result = pair(tmp_path / "before", tmp_path / "after")
    sub = result.subtasks
    arc = sub[sub["subtask"] == "arc_easy"]
    logic = result.categories.query("average == 'macro' and category == 'Logic'").iloc[0]
    assert logic["noise_rows"] == 1
    assert logic["F_true_headline_mean"] == pytest.approx(arc["F_true"].mean())
    assert logic["F_true_headline_mean"] - logic["F_true_noise_mean"] == pytest.approx(
        logic["F_true_beyond_noise_mean"]
    )
    frame = noise_frame(result).set_index("category")
    assert frame.loc["Logic", "F_true"] == f"{100 * arc['F_true'].mean():.1f}%"
    assert frame.loc["Logic", "sub-benchmarks"] == "1 of 2"
    # arc_easy's seeds 0 and 1 are on both sides, and both sides sample: the shared-seed flag
    assert logic["noise_note"] == f"1 of 3 rows without a floor; {noise.SHARED}"


# item types (p before, q after), drawn with equal probability: the population's figures are their means
CHANGED = [(0.9, 0.9), (0.6, 0.3), (0.3, 0.3), (0.95, 0.5), (0.5, 0.7)]
UNCHANGED = [(p, p) for p, _ in CHANGED]


def _known(types: list[tuple[float, float]]) -> tuple[float, float]:
    """(floor, F beyond it) of the population: E[p(1-p) + q(1-q)] / 2 and E[p(1-q)] minus that."""
    floor = float(np.mean([(p * (1 - p) + q * (1 - q)) / 2 for p, q in types]))
    return floor, float(np.mean([p * (1 - q) for p, q in types])) - floor


def _simulated(rng: np.random.Generator, types: list[tuple[float, float]], n: int, seeds: int) -> pd.DataFrame:
    kind = rng.integers(0, len(types), n)
    p, q = (np.array([t[i] for t in types])[kind] for i in (0, 1))
    parts = [
        pd.DataFrame(
            {
                "subtask": "sim",
                "category": "Sim",
                "doc_id": np.arange(n),
                "seed": str(s),
                "replicate": 0,
                "before": (rng.random(n) < p).astype(np.int8),
                "after": (rng.random(n) < q).astype(np.int8),
                "k": 4.0,
            }
        )  # fmt: skip
        for s in range(seeds)
    ]
    return pd.concat(parts, ignore_index=True)


@pytest.mark.slow
@pytest.mark.parametrize("types", [CHANGED, UNCHANGED], ids=["changed", "unchanged"])
def test_floor_and_beyond_noise_cover_the_known_values(types: list[tuple[float, float]]) -> None:
    """95% intervals of the floor and of F beyond it, 200 simulated pairs of 300 items with 3 seeds a side: the
    known population values must fall inside 90-99% of the time (binomial spread of 200 trials around 95%)."""
    floor, beyond = _known(types)
    rng = np.random.default_rng(21)
    hits = {"floor": 0, "beyond": 0}
    trials = 200
    for trial in range(trials):
        _, cats, _ = noise.noise_floor(_simulated(rng, types, 300, 3), n_boot=200, seed=trial)
        row = cats.set_index("category").loc["OVERALL"]
        hits["floor"] += row["F_noise_lo"] <= floor <= row["F_noise_hi"]
        hits["beyond"] += row["F_beyond_noise_lo"] <= beyond <= row["F_beyond_noise_hi"]
    for name, hit in hits.items():
        assert 0.90 <= hit / trials <= 0.99, f"{name}: {hit}/{trials} intervals cover the known value"
    if types is UNCHANGED:
        assert beyond == 0.0
