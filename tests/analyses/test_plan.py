"""Planning from a pilot: the variance parts by hand, the scaling rules, and the predictions against realised
bootstrap half-widths on real logs (items) and in a simulation (seeds)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval import pair
from postforget_lmeval.analyses._plan import _seed_factor, plan, variance_parts
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
