"""Planning a forgetting study from a pilot pairing: how wide are the intervals now, and what would make them ±2.

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


def plan(samples: pd.DataFrame, target: float = TARGET, n_boot: int = bootstrap.N_BOOT, seed: int = 0) -> pd.DataFrame:
    """Per sub-benchmark, category and OVERALL (``level``): items, seeds, F_true and BT_true with their pilot
    half-widths, the smallest forgetting detectable at 80% power, the share of F's variance that is seed noise,
    the items needed for ``target`` at each seed count of :data:`SEEDS`, and the mean reply length."""
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
    z = stats.norm.ppf(1.0 - tail)
    detect = (z + stats.norm.ppf(POWER)) / z

    def row(
        level: str, name: str, category: str, est: pd.Series, h: pd.Series, terms: pd.DataFrame, chars: float
    ) -> dict:
        n = int(terms["n"].sum())
        s = int(terms["S"].max())
        j = len(terms)
        tau2, sigma2 = (terms["tau2"] / terms["n"]).sum() / j**2, (terms["sigma2"] / terms["n"]).sum() / j**2
        out = {
            "level": level,
            "category": category,
            "name": name,
            "items": n,
            "seeds": s,
            "F_true": est["F_true"],
            "F_true_halfwidth": h["F_true"],
            "BT_true": est["BT_true"],
            "BT_true_halfwidth": h["BT_true"],
            "F_detectable_80": detect * h["F_true"],
            "seed_share": (sigma2 / s) / (tau2 + sigma2 / s) if s > 1 and tau2 + sigma2 / s > 0 else math.nan,
        }
        for s_new in SEEDS:
            factor = _seed_factor(tau2, sigma2, s, s_new) if s > 1 else (1.0 if s_new == s else math.nan)
            need = n * factor * (h["F_true"] / target) ** 2 if h["F_true"] > 0 else math.nan
            out[f"items_for_target_{s_new}_seeds"] = math.ceil(need) if math.isfinite(need) else math.nan
        out["reply_chars"] = chars
        return out

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
