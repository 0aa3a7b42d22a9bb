"""Planning a forgetting study from a pilot pairing, or a before-run and assumed rates: how wide are the intervals,
and what would make them ±2.

The bootstrap half-width h of F_true (and BT_true) per sub-benchmark and category is the pilot's
(``_bootstrap``: items, or clusters, resampled; every seed kept). Two things change it:

* **items**: the items (or clusters) are the resampling unit, so h scales as 1/sqrt(n): n' items give
  h * sqrt(n / n');
* **seeds**: an item's figure averaged over S seeds has variance tau^2 + sigma^2 / S, tau^2 between items,
  sigma^2 the seed-to-seed variance of one item. Both are estimated from the pilot's 1->0 (0->1) flags per
  item and seed: sigma^2 the mean over items of the variance across seeds, tau^2 the variance of the items'
  means less sigma^2 / S. S' seeds give h * sqrt((tau^2 + sigma^2 / S') / (tau^2 + sigma^2 / S)). With one
  seed sigma^2 is not seen; the plan then says so and scales items only.

A category's figure is the mean of its sub-benchmarks' (the macro structure), so its variance is the mean of
theirs over the number of them, squared; scaling every sub-benchmark's items by one factor scales it by
that factor, and its seed terms add up the same way.

The smallest forgetting detectable at 80% power (two-sided 5%) is (z_0.975 + z_0.8) * h / z_0.975 = 1.43 h:
the distance at which a figure with standard error h / 1.96 is flagged four times in five.

From a before-run alone (``plan_before``) there is no after-run to measure, so one is simulated under assumed
rates and the paper's guessing model, and each simulated pair is measured as a pilot (:func:`measure`; the
half-widths averaged as variances over :data:`RUNS` simulated after-runs from one fixed seed) and scaled by the same
:func:`scale`. The model, per sub-benchmark: an item is answered from knowledge or by guessing, right by chance
with probability g = 1/k (0 without a usable k: a generative answer is not guessed); the known share is the
paper's K = (accuracy - 1/k_eff) / (1 - 1/k_eff). An item right under all its S runs (seeds and replicates) before
is known with probability K / (K + (1 - K) g^S) (Bayes under that model), any other item is not. After: a known
item is forgotten with probability ``forgetting`` (the assumed rate: a share of what the model knew) and then
guesses, else stays right; an unknown item is learnt with probability ``bt`` and is then right, else it guesses
(right with probability g in each run, independently of the before-run: another model's guess) or, where the
before-run's seeds disagree on it, stays as right as they show (its share of right runs, each run drawn anew).
So the simulated pair has the flips by chance that a real one has, and the seed noise the before-run's seeds show;
with one seed it has none to show, and the seed columns stay empty. Items of one text are forgotten independently
in the simulation (a real checkpoint may forget a story whole), so the prediction for clustered sub-benchmarks
(whose bootstrap still draws whole clusters) is a lower bound.

Cost: what the evaluation of the after-model would generate, items x seeds x the pilot's mean reply length
(characters, as logged; about four characters a token for English text). Log-likelihood runs generate
nothing: their cost is one forward pass per option.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from postforget_lmeval import metrics
from postforget_lmeval.analyses import _bootstrap as bootstrap

TARGET = 0.02
"""The default target half-width: ±2 percentage points."""
POWER = 0.8
SEEDS = (1, 2, 3, 5)
"""The seed counts the plan prices."""
RATE_COLUMNS = ("F_true", "F_true_halfwidth", "BT_true", "BT_true_halfwidth")


def _flags(samples: pd.DataFrame) -> pd.DataFrame:
    """Per (category, subtask, doc_id) and seed label: the 1->0 and 0->1 flags (an item's first replicate)."""
    rows = samples.sort_values("replicate", kind="stable").drop_duplicates(["category", "subtask", "doc_id", "seed"])
    before, after = rows["before"].astype(int), rows["after"].astype(int)
    return rows.assign(
        F=((before == 1) & (after == 0)).astype(float), BT=((before == 0) & (after == 1)).astype(float)
    ).astype({"category": str, "subtask": str, "seed": str})


def variance_parts(flags: pd.DataFrame, rate: str) -> pd.DataFrame:
    """Per (category, subtask): n (items), S (seeds), tau2 and sigma2 of ``rate``'s flag (docs above); sigma2 NaN
    with one seed."""
    wide = flags.pivot_table(index=["category", "subtask", "doc_id"], columns="seed", values=rate, observed=True)
    out = []
    for (category, subtask), block in wide.groupby(level=["category", "subtask"], sort=True):
        values = block.dropna(axis=1, how="all").to_numpy(dtype=float)
        n, s = values.shape
        means = np.nanmean(values, axis=1)
        v_mean = float(np.var(means, ddof=1)) if n > 1 else math.nan
        sigma2 = float(np.nanmean(np.nanvar(values, axis=1, ddof=1))) if s > 1 else math.nan
        tau2 = max(v_mean - sigma2 / s, 0.0) if s > 1 else v_mean
        out.append({"category": category, "subtask": subtask, "n": n, "S": s, "tau2": tau2, "sigma2": sigma2})
    return pd.DataFrame(out)


def _seed_factor(tau2: float, sigma2: float, s: int, s_new: int) -> float:
    """How the variance of an item's figure changes from s to s_new seeds (1 where sigma2 is not seen)."""
    if not math.isfinite(sigma2) or tau2 + sigma2 / s <= 0:
        return 1.0 if s_new == s else math.nan
    return (tau2 + sigma2 / s_new) / (tau2 + sigma2 / s)


def measure(samples: pd.DataFrame, n_boot: int = bootstrap.N_BOOT, seed: int = 0) -> pd.DataFrame:
    """What a pairing shows per sub-benchmark, category and OVERALL (``level``): items, seeds, F_true and BT_true with
    their bootstrap half-widths, ``tau2`` and ``sigma2`` of the row's figure (between items and seed to seed, of F's
    flags, over the items; NaN with one seed) and the mean reply length after. :func:`scale` turns it into a plan."""
    reps = bootstrap.replicates(samples, n_boot, seed)
    observed, drawn = reps[reps["replicate"] == -1], reps[reps["replicate"] >= 0]
    tail = (1.0 - bootstrap.LEVEL) / 2.0

    def half_width(values: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
        grouped = values.groupby(keys, sort=True)[list(bootstrap.RATES)]
        return (grouped.quantile(1.0 - tail) - grouped.quantile(tail)) / 2.0

    # a sub-benchmark's figure and interval are the mean over its seeds, as the category rows average them
    per_sub_rep = drawn.groupby(["category", "subtask", "replicate"], sort=True)[list(bootstrap.RATES)].mean()
    sub_h = half_width(per_sub_rep.reset_index(), ["category", "subtask"])
    sub_est = observed.groupby(["category", "subtask"], sort=True)[list(bootstrap.RATES)].mean()
    macro = metrics.macro_means(drawn, bootstrap.RATES, by=["replicate"]).reset_index()
    cat_h = half_width(macro, ["category"])
    cat_est = metrics.macro_means(observed, bootstrap.RATES)

    parts = variance_parts(_flags(samples), "F").set_index(["category", "subtask"])
    replies = samples.get("response_chars_after", pd.Series(np.nan, index=samples.index)).astype(float)
    by_category = samples["category"].astype(str)

    def row(
        level: str, name: str, category: str, est: pd.Series, h: pd.Series, terms: pd.DataFrame, chars: float
    ) -> dict:
        j = len(terms)
        return {
            "level": level,
            "category": category,
            "name": name,
            "items": int(terms["n"].sum()),
            "seeds": int(terms["S"].max()),
            "F_true": est["F_true"],
            "F_true_halfwidth": h["F_true"],
            "BT_true": est["BT_true"],
            "BT_true_halfwidth": h["BT_true"],
            "tau2": (terms["tau2"] / terms["n"]).sum() / j**2,
            "sigma2": (terms["sigma2"] / terms["n"]).sum() / j**2,
            "reply_chars": chars,
        }

    rows = []
    for (category, subtask), h in sub_h.iterrows():
        terms = parts.loc[[(category, subtask)]]
        chars = replies[(by_category == category) & (samples["subtask"].astype(str) == subtask)].mean()
        rows.append(row("sub-benchmark", subtask, category, sub_est.loc[(category, subtask)], h, terms, chars))
    for category, h in cat_h.loc[[*(c for c in cat_h.index if c != metrics.OVERALL), metrics.OVERALL]].iterrows():
        terms = parts if category == metrics.OVERALL else parts.loc[[category]]
        if category == metrics.OVERALL:  # the mean of the categories: each category's terms over their number
            cats = terms.groupby(level="category")
            per_cat = pd.DataFrame(
                {
                    "n": cats["n"].sum(),
                    "S": cats["S"].max(),
                    "tau2": cats.apply(lambda t: (t["tau2"] / t["n"]).sum() / len(t) ** 2),
                    "sigma2": cats.apply(lambda t: (t["sigma2"] / t["n"]).sum() / len(t) ** 2),
                }
            )
            terms = per_cat.assign(tau2=per_cat["tau2"] * per_cat["n"], sigma2=per_cat["sigma2"] * per_cat["n"])
        chars = replies.mean() if category == metrics.OVERALL else replies[by_category == category].mean()
        rows.append(row("category", category, category, cat_est.loc[category], h, terms, chars))
    return pd.DataFrame(rows)


def scale(measured: pd.DataFrame, target: float = TARGET) -> pd.DataFrame:
    """The plan of a :func:`measure` table: the smallest forgetting detectable at 80% power, the share of F's
    variance that is seed noise, and the items needed for ``target`` at each seed count of :data:`SEEDS`."""
    detect = (bootstrap.Z + stats.norm.ppf(POWER)) / bootstrap.Z
    out = []
    for r in measured.to_dict("records"):
        n, s, h, tau2, sigma2 = r["items"], r["seeds"], r["F_true_halfwidth"], r["tau2"], r["sigma2"]
        row = {c: r[c] for c in ("level", "category", "name", "items", "seeds", *RATE_COLUMNS)}
        row["F_detectable_80"] = detect * h
        row["seed_share"] = (sigma2 / s) / (tau2 + sigma2 / s) if s > 1 and tau2 + sigma2 / s > 0 else math.nan
        for s_new in SEEDS:
            factor = _seed_factor(tau2, sigma2, s, s_new) if s > 1 else (1.0 if s_new == s else math.nan)
            need = n * factor * (h / target) ** 2 if h > 0 else math.nan
            row[f"items_for_target_{s_new}_seeds"] = math.ceil(need) if math.isfinite(need) else math.nan
        row["reply_chars"] = r["reply_chars"]
        out.append(row)
    return pd.DataFrame(out)


def plan(samples: pd.DataFrame, target: float = TARGET, n_boot: int = bootstrap.N_BOOT, seed: int = 0) -> pd.DataFrame:
    """Per sub-benchmark, category and OVERALL (``level``): items, seeds, F_true and BT_true with their pilot
    half-widths, the smallest forgetting detectable at 80% power, the share of F's variance that is seed noise,
    the items needed for ``target`` at each seed count of :data:`SEEDS`, and the mean reply length."""
    return scale(measure(samples, n_boot, seed), target)


RUNS = 5
"""Simulated after-runs a plan from a before-run alone averages over."""


def simulate(before: pd.DataFrame, forgetting: float, bt: float, rng: np.random.Generator) -> pd.DataFrame:
    """One after-run drawn from the before-run ``before`` (a samples table of the run paired with itself: ``before``
    per item, seed and replicate) under the assumed rates and the paper's guessing model (the module's docs);
    ``after`` is replaced and the reply length after is the before-run's."""
    out = before.copy()
    keys = ["category", "subtask", "doc_id"]
    items = out.groupby(keys, observed=True, sort=False)
    item = items.ngroup().to_numpy()
    p = items["before"].transform("mean").to_numpy(dtype=float)
    runs = items["before"].transform("size").to_numpy(dtype=float)
    k = items["k"].transform("first").to_numpy(dtype=float)
    guess, known = np.zeros(len(out)), np.zeros(len(out))
    for rows in out.groupby(["category", "subtask"], observed=True, sort=False).indices.values():
        usable = bootstrap.usable_k(k[rows])
        guess[rows] = 0.0 if np.isnan(usable).any() else 1.0 / usable
        g = guess[rows].mean()  # 1 / k_eff
        known[rows] = np.clip((out["before"].to_numpy()[rows].mean() - g) / (1.0 - g), 0.0, 1.0)  # the paper's K
    with np.errstate(invalid="ignore", divide="ignore"):
        p_known = np.where(p == 1, np.nan_to_num(known / (known + (1.0 - known) * guess**runs), nan=1.0), 0.0)
    u = rng.random((3, item.max() + 1 if len(item) else 0))[:, item]  # one draw per item: known, forgotten, learnt
    is_known = u[0] < p_known
    forgotten, learnt = is_known & (u[1] < forgetting), ~is_known & (u[2] < bt)
    unknown = np.where((p > 0) & (p < 1), p, guess)  # a mixed item keeps its share right, the others guess
    p_after = np.select([learnt, forgotten, is_known], [1.0, guess, 1.0], unknown)
    out["after"] = (rng.random(len(out)) < p_after).astype(out["before"].dtype)
    if "response_chars_before" in out:
        out["response_chars_after"] = out["response_chars_before"]
    return out


def plan_before(
    before: pd.DataFrame,
    forgetting: float,
    bt: float = 0.0,
    target: float = TARGET,
    n_boot: int = bootstrap.N_BOOT,
    seed: int = 0,
    runs: int = RUNS,
) -> pd.DataFrame:
    """:func:`plan` for a before-run alone (``before``: the run paired with itself) under assumed rates: ``runs``
    after-runs simulated (:func:`simulate`, one generator seeded with ``seed``), each measured as a pilot; the
    half-widths are averaged as variances, the figures and variance parts as means, then scaled as a pilot's."""
    if not (0 <= forgetting <= 1 and 0 <= bt <= 1):
        raise ValueError(f"assumed rates {forgetting:g} and {bt:g}: give shares from 0 to 1")
    rng = np.random.default_rng(seed)
    measured = pd.concat([measure(simulate(before, forgetting, bt, rng), n_boot, seed + m) for m in range(runs)])
    widths = [f"{r}_halfwidth" for r in bootstrap.RATES]
    measured[widths] = measured[widths] ** 2
    keys = ["level", "category", "name"]
    mean = measured.groupby(keys, sort=False).mean(numeric_only=True)
    mean[widths] = np.sqrt(mean[widths])
    first = measured.groupby(keys, sort=False)[["items", "seeds"]].first()
    return scale(mean.assign(**first).reset_index(), target)
