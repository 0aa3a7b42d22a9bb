"""Simulations of known truth for replicates under one seed (inspect_ai epochs, lm-eval repeats): the noise floor
that one seed's replicates build is unbiased for an unchanged model when they are independent draws, and the
significance test keeps its level when an item's replicates are copies of one draw (a sampler restarted from the
seed), where McNemar on item-replicates does not."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from postforget_lmeval.analyses import _noise as noise
from postforget_lmeval.analyses import _significance as significance

pytestmark = pytest.mark.slow


def _samples(before: np.ndarray, after: np.ndarray) -> pd.DataFrame:
    """samples of one sub-benchmark 'sim' under seed 0 from 0/1 arrays items x replicates."""
    n, reps = before.shape
    doc, rep = np.repeat(np.arange(n), reps), np.tile(np.arange(reps), n)
    return pd.DataFrame({
        "subtask": "sim", "category": "Sim", "seed": "0", "seed_before": "0", "seed_after": "0", "doc_id": doc,
        "replicate": rep, "k": 4.0, "before": before.ravel().astype(float), "after": after.ravel().astype(float),
    })  # fmt: skip


def test_the_floor_of_one_seeds_independent_replicates_is_unbiased_for_an_unchanged_model() -> None:
    # an unchanged model, p_i ~ U(0, 1), 300 items, one seed a side with 2 independent replicates each: a pair of
    # runs flips an item one way with probability p(1 - p), so E[F_noise] = mean p(1 - p) on either side
    rng = np.random.default_rng(11)
    errors = []
    for _ in range(40):
        p = rng.uniform(size=300)
        before, after = (rng.uniform(size=(300, 2)) < p[:, None] for _ in range(2))
        rows, _, texts = noise.noise_floor(_samples(before, after), n_boot=1)
        assert texts["noise_floor_from"].tolist() == [noise.POOLED]
        errors.append(rows["F_noise"].iloc[0] - np.mean(p * (1 - p)))
    # 40 runs: the mean error is within 3 standard errors of 0 (the floor's sd over runs is about 0.015)
    assert abs(np.mean(errors)) < 3 * np.std(errors) / np.sqrt(len(errors))
    assert abs(np.mean(errors)) < 0.005


def test_copied_replicates_keep_the_significance_level_that_mcnemar_on_item_replicates_loses() -> None:
    # no change: each item is drawn once before and once after (p_i ~ U(0, 1)) and copied into 4 replicates, as a
    # sampler restarted from the seed does. Flips come in groups of 4: McNemar on the 4n item-replicates rejects
    # far more often than 5 %; the sign-flip test over items, exact under no change, at most 5 %.
    rng = np.random.default_rng(12)
    cluster, mcnemar = [], []
    for _ in range(400):
        p = rng.uniform(size=40)
        before, after = (np.repeat((rng.uniform(size=40) < p)[:, None], 4, axis=1) for _ in range(2))
        samples = _samples(before, after)
        n_10 = int(((samples["before"] == 1) & (samples["after"] == 0)).sum())
        n_01 = int(((samples["before"] == 0) & (samples["after"] == 1)).sum())
        subtasks = pd.DataFrame([{"subtask": "sim", "category": "Sim", "seed": "0", "n": 160, "n_10": n_10,
                                  "n_01": n_01}])  # fmt: skip
        row = significance.significance_table(subtasks, samples).iloc[0]
        assert row["test"] == significance.CLUSTER
        cluster.append(row["p_cluster"] < 0.05)
        mcnemar.append(row["p_mcnemar"] < 0.05)
    # 400 runs: a 5 % level has a standard error of about 1.1 %
    assert np.mean(cluster) <= 0.075
    assert np.mean(mcnemar) >= 0.2
