"""Planning from a pilot: the variance parts by hand, the scaling rules, and the predictions against realised
bootstrap half-widths on real logs (items) and in a simulation (seeds)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval import pair
from postforget_lmeval.analyses._plan import _seed_factor, plan, plan_before, simulate, variance_parts
from postforget_lmeval.api import pair_with_itself
from postforget_lmeval.cli import main
from tests.helpers.paths import REFERENCE

MMLU = REFERENCE / "lmeval_logs" / "mayflower_mmlu_stem"


def _samples(before: dict[str, str], after: dict[str, str], subtask: str = "s", k: float = 4.0) -> pd.DataFrame:
    """One sub-benchmark; per seed label a 0/1 string before and after."""
    frames = []
    for seed in before:
        n = len(before[seed])
        frames.append(
            pd.DataFrame(
                {
                    "category": "c",
                    "subtask": subtask,
                    "doc_id": np.arange(n),
                    "seed": seed,
                    "replicate": 0,
                    "before": [int(x) for x in before[seed]],
                    "after": [int(x) for x in after[seed]],
                    "k": k,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def test_variance_parts_by_hand():
    # item 0 forgotten under seed 0 only, item 1 under both: means 0.5 and 1
    flags = pd.DataFrame(
        {
            "category": "c",
            "subtask": "s",
            "doc_id": [0, 0, 1, 1],
            "seed": ["0", "1", "0", "1"],
            "F": [1.0, 0.0, 1.0, 1.0],
        }
    )
    (row,) = variance_parts(flags, "F").to_dict("records")
    # var of the means (ddof 1) 0.125; sigma2 the mean of the items' variances (0.5, 0) = 0.25; tau2 0.125 - 0.25/2
    assert (row["n"], row["S"]) == (2, 2)
    assert row["sigma2"] == pytest.approx(0.25) and row["tau2"] == pytest.approx(0.0)
    one = variance_parts(flags[flags["seed"] == "0"].assign(F=[1.0, 0.0]), "F").iloc[0]
    assert one["S"] == 1 and math.isnan(one["sigma2"]) and one["tau2"] == pytest.approx(0.5)


def test_seed_factor():
    assert _seed_factor(0.1, 0.2, 2, 1) == pytest.approx(1.5)  # (0.1 + 0.2) / (0.1 + 0.1)
    assert _seed_factor(0.1, 0.2, 2, 4) == pytest.approx(0.75)  # (0.1 + 0.05) / 0.2
    assert _seed_factor(0.1, math.nan, 1, 1) == 1.0 and math.isnan(_seed_factor(0.1, math.nan, 1, 3))


def test_items_for_the_target_scale_with_the_square_of_the_half_width():
    s = _samples({"0": "1111111111" * 4}, {"0": "1111100000" * 4})
    (row, *_) = plan(s, target=0.02, n_boot=300).to_dict("records")
    assert row["items"] == 40 and row["seeds"] == 1
    assert row["items_for_target_1_seeds"] == math.ceil(40 * (row["F_true_halfwidth"] / 0.02) ** 2)
    assert math.isnan(row["items_for_target_3_seeds"])  # one seed: seed noise not measured
    assert row["F_detectable_80"] == pytest.approx(row["F_true_halfwidth"] * (1.959964 + 0.841621) / 1.959964)


def test_the_cli_on_an_output_folder_and_on_two_run_folders(tmp_path, capsys):
    if not MMLU.is_dir():
        pytest.skip("the shared reference logs are not beside the repository")
    out = tmp_path / "pilot"
    assert main([str(MMLU / "before"), str(MMLU / "after"), "-o", str(out), "-q", "--no-plot", "--no-analyses"]) == 0
    assert main(["plan", str(out), "--csv", str(tmp_path / "plan.csv")]) == 0
    printed = capsys.readouterr().out
    assert "OVERALL" in printed and "3,153" in printed
    table = pd.read_csv(tmp_path / "plan.csv")
    assert len(table) == 19 + 2  # the sub-benchmarks, the category, OVERALL
    assert main(["plan", str(MMLU / "before"), str(MMLU / "after"), "--csv", str(tmp_path / "direct.csv")]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "direct.csv"), table)
    assert main(["plan", str(tmp_path)]) == 1
    assert "no samples.parquet" in capsys.readouterr().err


@pytest.mark.slow
def test_predicted_half_widths_match_realised_ones_on_real_logs():
    """Subsample a quarter of the items of the real MMLU-STEM pair: the half-width the full pilot predicts for
    that many items is within 20% of the realised bootstrap half-width, on average over draws."""
    if not MMLU.is_dir():
        pytest.skip("the shared reference logs are not beside the repository")
    samples = pair(MMLU / "before", MMLU / "after", analyses=False).samples
    full = plan(samples, n_boot=1000).set_index(["level", "name"]).loc[("category", "OVERALL")]
    rng = np.random.default_rng(11)
    ratios = {"F_true": [], "BT_true": []}
    for t in range(8):
        keep = samples.groupby("subtask", observed=True)["doc_id"].transform(lambda d: rng.random(len(d)) < 0.25)
        sub = plan(samples[keep], n_boot=500, seed=t).set_index(["level", "name"]).loc[("category", "OVERALL")]
        for rate in ratios:
            predicted = full[f"{rate}_halfwidth"] * math.sqrt(full["items"] / sub["items"])
            ratios[rate].append(sub[f"{rate}_halfwidth"] / predicted)
    for rate, values in ratios.items():
        assert 0.8 <= np.mean(values) <= 1.2, (rate, values)


@pytest.mark.slow
def test_predicted_seed_effect_matches_a_simulation():
    """Items with their own chance of being forgotten, three seeds in the pilot: the half-width the plan predicts
    for one seed matches, on average, the realised half-width of the first seed alone."""
    rng = np.random.default_rng(5)
    ratios = []
    for t in range(10):
        n = 300
        p_forget = rng.beta(0.5, 2.0, n)  # some items are fragile, most are not
        before = {str(s): "1" * n for s in range(3)}
        after = {str(s): "".join("0" if x else "1" for x in rng.random(n) < p_forget) for s in range(3)}
        pilot = _samples(before, after)
        predicted = plan(pilot, n_boot=500, seed=t).iloc[-1]
        one_seed = plan(pilot[pilot["seed"] == "0"], n_boot=500, seed=t).iloc[-1]
        h3, h1 = predicted["F_true_halfwidth"], one_seed["F_true_halfwidth"]
        factor = predicted["items_for_target_1_seeds"] / predicted["items_for_target_3_seeds"]
        ratios.append(h1 / (h3 * math.sqrt(factor)))
    assert 0.8 <= np.mean(ratios) <= 1.2, ratios


def _before(pattern: dict[str, str], k: float = 4.0) -> pd.DataFrame:
    """A before-run paired with itself: per seed label a 0/1 string."""
    return _samples(pattern, pattern, k=k)


def test_a_before_run_that_nothing_changes_plans_zero_exactly():
    # every item right: K = 1, every item known; nothing forgotten or learnt, so the after-run is the before-run
    table = plan_before(_before({"0": "1" * 50}), 0.0, 0.0, n_boot=200)
    assert (table["F_true"] == 0).all() and (table["F_true_halfwidth"] == 0).all()
    assert (table["BT_true_halfwidth"] == 0).all() and table["items_for_target_1_seeds"].isna().all()


def test_the_simulated_after_run_by_hand():
    rng = np.random.default_rng(0)
    # no usable k: nothing is guessed; right items are known (K = 1 of them), forgotten at rate 1: all wrong after
    run = _before({"0": "1100", "1": "1000"}, k=math.nan)
    out = simulate(run, 1.0, 0.0, rng)
    # items 0 (right twice: known) and 3 (never right) are decided; item 1 (mixed) keeps its share 1/2 per run
    assert out.loc[out["doc_id"] == 0, "after"].tolist() == [0, 0]
    assert out.loc[out["doc_id"].isin([2, 3]), "after"].tolist() == [0, 0, 0, 0]
    learnt = simulate(run, 0.0, 1.0, rng)  # every unknown item learnt: right under every seed
    assert learnt["after"].tolist() == [1] * 8
    # k = 4: a never-right item guesses after, right a quarter of the time, and the chance baseline absorbs it
    wrong = simulate(_before({"0": "0" * 4000}), 0.0, 0.0, rng)
    assert wrong["after"].mean() == pytest.approx(0.25, abs=3 * math.sqrt(0.25 * 0.75 / 4000))
    # with k = 2 and one seed, a right item is known with probability K / (K + (1 - K) / 2), K = (0.75 - 0.5) / 0.5
    right = simulate(_before({"0": "1110" * 1000}, k=2.0), 1.0, 0.0, rng)
    known = 0.5 / (0.5 + 0.5 * 0.5)  # forgotten (then guessing) or a guess: right after half the time either way
    assert right.loc[right["before"] == 1, "after"].mean() == pytest.approx(0.5, abs=0.03)
    kept = simulate(_before({"0": "1110" * 1000}, k=2.0), 0.0, 0.0, rng)  # known ones stay right, guesses guess
    assert kept.loc[kept["before"] == 1, "after"].mean() == pytest.approx(known + (1 - known) * 0.5, abs=0.03)


def test_a_sub_benchmark_with_an_item_of_one_option_guesses_nowhere():
    # k = 1 is no usable option count (> 1): the sub-benchmark has no chance baseline, so a never-right item stays
    # wrong after (a guess among one option would make it right every time)
    out = simulate(_before({"0": "0000"}, k=1.0), 0.0, 0.0, np.random.default_rng(0))
    assert out["after"].tolist() == [0, 0, 0, 0]


def test_a_before_run_plan_matches_the_binomial_half_width():
    # 400 items right before (k = 4, K = 1): a fifth forgotten, then right by chance a quarter of the time, so
    # F ~ Binomial(400, 0.15) / 400, the chance baseline is 0 (accuracy 1 before) and F_true = F
    table = plan_before(_before({"0": "1" * 400}), 0.2, 0.0, n_boot=1000, runs=8).iloc[-1]
    h = 1.959964 * math.sqrt(0.15 * 0.85 / 400)
    assert table["F_true_halfwidth"] == pytest.approx(h, rel=0.08)
    assert table["F_true"] == pytest.approx(0.15, abs=3 * math.sqrt(0.15 * 0.85 / 400 / 8))
    # the same scaling as a pilot's: items for ±2 points from this half-width
    assert table["items_for_target_1_seeds"] == math.ceil(400 * (table["F_true_halfwidth"] / 0.02) ** 2)


def test_a_before_run_with_seeds_prices_seeds():
    # 3 seeds: 200 items right under every seed, 100 that the seeds split on (right under seed 0 only); the mixed
    # items are drawn anew after (right a third of the time), so the simulated pair has seed noise and prices seeds
    pattern = {str(s): "1" * 200 + ("1" if s == 0 else "0") * 100 for s in range(3)}
    row = plan_before(_before(pattern), 0.1, 0.0, n_boot=300).iloc[-1]
    assert row["seeds"] == 3 and 0 < row["seed_share"] < 1
    needs = [row[f"items_for_target_{s}_seeds"] for s in (1, 2, 3, 5)]
    assert needs == sorted(needs, reverse=True) and needs[0] > needs[-1]
    assert needs[2] == math.ceil(300 * (row["F_true_halfwidth"] / 0.02) ** 2)


def test_the_cli_from_a_before_run_alone(tmp_path, capsys):
    if not MMLU.is_dir():
        pytest.skip("the shared reference logs are not beside the repository")
    before = str(MMLU / "before")  # written by the real lm_eval CLI
    assert main(["plan", "--before", before, "--assume-forgetting", "5", "--csv", str(tmp_path / "p.csv")]) == 0
    printed = capsys.readouterr().out
    assert "if 5% of known items are forgotten, 0% of the others learnt" in printed and "3,153" in printed
    table = pd.read_csv(tmp_path / "p.csv")
    assert len(table) == 19 + 2 and (table["items"].iloc[-1], table["seeds"].iloc[-1]) == (3153, 1)
    assert table["F_true_halfwidth"].iloc[-1] > 0
    for argv, said in (
        (["plan"], "plan what?"),
        (["plan", str(tmp_path), "--before", before, "--assume-forgetting", "5"], "not both"),
        (["plan", "--before", before], "--before needs --assume-forgetting"),
        (["plan", str(tmp_path), "--assume-forgetting", "5"], "give --before RUN_DIR with it"),
        (["plan", "--before", before, "--assume-forgetting", "120"], "--assume-forgetting 120: give a percentage"),
        (["plan", "--before", str(tmp_path / "none"), "--assume-forgetting", "5"], "not a folder"),
    ):
        assert main(argv) == 1
        assert said in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["plan", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "from a before-run alone" in shown and "95% interval" in shown and "%%" not in shown


@pytest.mark.slow
def test_a_before_run_plan_predicts_the_real_after_runs_half_width():
    """The real MMLU-STEM before-run alone, with rates near the real after-run's (nothing forgotten beyond chance,
    a fifth of the unknown items learnt): the predicted half-widths are within 20% of the real pair's bootstrap
    half-widths."""
    if not MMLU.is_dir():
        pytest.skip("the shared reference logs are not beside the repository")
    real = plan(pair(MMLU / "before", MMLU / "after", analyses=False).samples).iloc[-1]
    predicted = plan_before(pair_with_itself(MMLU / "before").samples, 0.0, 0.20).iloc[-1]
    for rate in ("F_true", "BT_true"):
        ratio = predicted[f"{rate}_halfwidth"] / real[f"{rate}_halfwidth"]
        print(rate, predicted[f"{rate}_halfwidth"], real[f"{rate}_halfwidth"], ratio)
        assert 0.8 <= ratio <= 1.2, (rate, ratio)


@pytest.mark.slow
def test_a_before_run_plan_predicts_simulated_after_runs():
    """After-runs with a known forgetting rate r drawn from the real MMLU-STEM before-run, on a quarter of its items,
    by the paper's guessing model written out here (a subject's known share K = (acc - 1/4) / (3/4); a right item
    known with probability K / (K + (1 - K) / 4), forgotten with probability r; every unknown or forgotten item
    right a quarter of the time after): the half-width the full before-run's plan predicts for that many items is
    within 20% of the realised bootstrap half-widths, on average over draws."""
    if not MMLU.is_dir():
        pytest.skip("the shared reference logs are not beside the repository")
    before = pair_with_itself(MMLU / "before").samples
    rng = np.random.default_rng(3)
    for r in (0.05, 0.2):
        full = plan_before(before, r, 0.0, n_boot=500).iloc[-1]
        predicted, realised = {"F_true": [], "BT_true": []}, {"F_true": [], "BT_true": []}
        for t in range(6):
            quarter = before[rng.random(len(before)) < 0.25]
            right = quarter["before"].to_numpy() == 1
            acc = quarter.groupby("subtask", observed=True)["before"].transform("mean").to_numpy()
            k_share = np.clip((acc - 0.25) / 0.75, 0, 1)
            known = right & (rng.random(len(quarter)) < k_share / (k_share + (1 - k_share) / 4))
            kept = known & (rng.random(len(quarter)) >= r)
            pilot = quarter.assign(after=np.where(kept | (rng.random(len(quarter)) < 0.25), 1, 0))
            row = plan(pilot, n_boot=500, seed=t).iloc[-1]
            for rate in realised:
                realised[rate].append(row[f"{rate}_halfwidth"])
                predicted[rate].append(full[f"{rate}_halfwidth"] * math.sqrt(full["items"] / row["items"]))
        for rate, values in realised.items():
            ratio = np.mean(predicted[rate]) / np.mean(values)
            print(r, rate, np.mean(predicted[rate]), np.mean(values), ratio)
            assert 0.8 <= ratio <= 1.2, (r, rate, ratio)
