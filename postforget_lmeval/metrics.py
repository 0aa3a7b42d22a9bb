"""Transition metrics and their aggregation (paper §2 and Appendix E; stated in docs/method.md §1–2).

Pure functions on 0/1 correctness arrays and on the per-sub-benchmark table they produce; no I/O,
so the pairing code, the CLI and the tests share one definition of every number.

Everything that cannot be computed (no items, no known option count, nothing correct before) is
NaN rather than an error or a warning: a report over ~100 sub-benchmarks must not stop or spam
because one of them has no chance baseline.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

_COUNTS = ("n_11", "n_10", "n_01", "n_00")
_RATES = ("acc_before", "acc_after", "F", "BT", "F_chance", "BT_chance", "F_true", "BT_true")

METRIC_COLUMNS: tuple[str, ...] = ("k", "n", *_COUNTS, *_RATES, "F_max", "BT_max", "F_rel")
"""Keys of :func:`transition_metrics`, in report order."""

RATE_METRICS: tuple[str, ...] = tuple(m for m in (*_RATES, "F_max", "BT_max", "F_rel") if m != "BT_chance")
"""Metrics that are averaged across sub-benchmarks and seeds (BT_chance equals F_chance)."""

SEED_AGREEMENT_COLUMNS: tuple[str, ...] = ("k", "n", "n_seeds", "n_agree", *_COUNTS, *_RATES)
"""Keys of :func:`seed_agreement_metrics`."""

OVERALL = "OVERALL"
"""The ``category`` of the row that averages over all categories."""

_KEYS = ("category", "subtask", "seed")
_NAN = float("nan")


def _ratio(num: float, den: float) -> float:
    """num/den, NaN for an empty denominator (an empty set has no rate, not a zero rate)."""
    return num / den if den else _NAN


def _clip0(x: float) -> float:
    """max(x, 0) that keeps NaN (Python's max(nan, 0) depends on argument order)."""
    return _NAN if math.isnan(x) else max(x, 0.0)


def _rates(acc_b: float, acc_a: float, f: float, bt: float, chance: float) -> dict[str, float]:
    """The rates of :data:`_RATES` from the accuracies, the raw F and BT and the chance baseline (shared by
    F and BT): what both the single-seed and the seed-agreement variants report."""
    rates = (acc_b, acc_a, f, bt, chance, chance, _clip0(f - chance), _clip0(bt - chance))
    return dict(zip(_RATES, rates))


def binary(values: ArrayLike, name: str, ndim: int) -> np.ndarray:
    """Validate a 0/1 correctness array and return it as bool.

    A score in (0, 1) or a missing value is not a transition (docs/method.md §1), so it is rejected here
    instead of being silently rounded.
    """
    arr = np.asarray(values)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array of 0/1 values, got shape {arr.shape}")
    valid = np.isin(arr, (0, 1))
    if not valid.all():
        bad = np.unique(arr[~valid])[:5]
        raise ValueError(
            f"{name} must contain only 0/1 (or True/False) per-item correctness; "
            f"found {bad.tolist()} (scores in (0,1) are not transitions: binarise them first)"
        )
    return arr.astype(bool)


def _item_ks(k: ArrayLike | float | None, n: int) -> np.ndarray | None:
    """Per-item option counts as a float array of length n, or None when k is unknown."""
    if k is None:
        return None
    ks = np.asarray(k, dtype=float)
    if ks.ndim == 0:
        return np.full(n, float(ks))
    ks = ks.ravel()
    if ks.size != n:
        raise ValueError(f"k has {ks.size} entries but there are {n} items; give one k per item or a constant")
    return ks


def k_eff(ks: ArrayLike | float | None) -> float:
    """Effective option count ``1 / mean(1/k_i)``; NaN if unknown, empty, or any k_i is missing or <= 1.

    The harmonic mean is what makes the chance formulas exact for mixed k: the expected accuracy of
    a model that knows a fraction t and guesses the rest is ``t + (1-t) * mean(1/k_i)``. A single
    k_i <= 1 (or missing) means some item has no guessing model, so no baseline is reported at all.
    """
    if ks is None:
        return _NAN
    arr = np.asarray(ks, dtype=float).ravel()
    if arr.size == 0 or not np.all(np.isfinite(arr) & (arr > 1)):
        return _NAN
    return float(1.0 / np.mean(1.0 / arr))


def chance_rate(acc_before: ArrayLike, acc_after: ArrayLike, k_eff: ArrayLike) -> ArrayLike:
    """The one-seed chance baseline ``F_chance = BT_chance``; works elementwise on arrays, so the
    bootstrap in ``analyses`` computes its replicates with this same formula."""
    return (1.0 - acc_before) * (1.0 - acc_after) / (k_eff - 1.0)


def transition_metrics(before: ArrayLike, after: ArrayLike, k: ArrayLike | float | None = None) -> dict[str, float]:
    """Counts of the four transitions and the rates of docs/method.md §1 for one sub-benchmark and one seed.

    ``before``/``after``: 0/1 per item, same length and order. ``k``: option count per item, a
    constant, or None. Returns exactly :data:`METRIC_COLUMNS` (``k`` is :func:`k_eff`; counts are
    ints). Without a usable k (None, missing, <= 1) the chance, chance-adjusted and ceiling columns
    are NaN and the raw F/BT are still reported; with no items every rate is NaN.

    The chance product is written ``(1-acc_b)*(1-acc_a)/(k-1)`` so that it is bit-for-bit symmetric
    in before/after (F_chance == BT_chance, and swapping the runs swaps F_true and BT_true exactly).
    """
    b = binary(before, "before", 1)
    a = binary(after, "after", 1)
    if b.shape != a.shape:
        raise ValueError(f"before and after must list the same items: {b.size} vs {a.size} entries")
    n = int(b.size)
    ks = _item_ks(k, n)
    keff = k_eff(k) if np.ndim(k) == 0 else k_eff(ks)

    n_11 = int(np.count_nonzero(b & a))
    n_10 = int(np.count_nonzero(b & ~a))
    n_01 = int(np.count_nonzero(~b & a))
    return counts_metrics(n_11, n_10, n_01, n - n_11 - n_10 - n_01, keff)


def counts_metrics(n_11: int, n_10: int, n_01: int, n_00: int, keff: float) -> dict[str, float]:
    """:func:`transition_metrics` from the four transition counts and :func:`k_eff` of the items' k, for callers
    that have counted the transitions already (the pairing counts all sub-benchmarks at once)."""
    n = n_11 + n_10 + n_01 + n_00
    acc_b = _ratio(n_11 + n_10, n)
    acc_a = _ratio(n_11 + n_01, n)
    f = _ratio(n_10, n)
    bt = _ratio(n_01, n)

    if math.isnan(keff):
        chance = f_max = bt_max = _NAN
    else:
        chance = chance_rate(acc_b, acc_a, keff)
        f_max = _clip0((keff * acc_b - 1.0) / (keff - 1.0))
        bt_max = _clip0((keff * acc_a - 1.0) / (keff - 1.0))

    return {
        "k": keff,
        "n": n,
        **dict(zip(_COUNTS, (n_11, n_10, n_01, n_00))),
        **_rates(acc_b, acc_a, f, bt, chance),
        "F_max": f_max,
        "BT_max": bt_max,
        "F_rel": _ratio(n_10, n_11 + n_10),
    }


FLIP_METRICS: tuple[str, ...] = ("NFR", "NFI", "PFR", "PFI")
"""Keys of :func:`flip_metrics`: the model-update literature's names for the flips (docs/method.md §6)."""


def flip_metrics(n_11: int, n_10: int, n_01: int, n_00: int) -> dict[str, float]:
    """Negative and positive flip rate and impact (Yan et al., CVPR 2021, "Positive-Congruent Training").

    The rates share the paper's denominator (NFR is F, PFR is BT); the impacts divide by the after model's
    errors (NFI: what share of its mistakes are regressions) and by its correct answers (PFI: what share of
    them are new). People who compare with the model-update literature look for these names.
    """
    n = n_11 + n_10 + n_01 + n_00
    return {
        "NFR": _ratio(n_10, n),
        "NFI": _ratio(n_10, n_10 + n_00),
        "PFR": _ratio(n_01, n),
        "PFI": _ratio(n_01, n_11 + n_01),
    }


def seed_agreement_metrics(before: ArrayLike, after: ArrayLike, k: ArrayLike | float | None = None) -> dict[str, float]:
    """The paper's stricter variant: an item counts only if it makes the same transition under every seed.

    ``before``/``after``: 0/1 arrays of shape (n_items, n_seeds); column s of ``before`` is paired
    with column s of ``after``. ``k`` as in :func:`transition_metrics`. Returns
    :data:`SEED_AGREEMENT_COLUMNS`.

    Choices:

    * Denominator: ``F = n_10 / n`` and ``BT = n_01 / n`` over *all* n items, not over the
      ``n_agree`` items whose transition is identical across seeds. Disagreeing items are dropped
      from the numerators only, so the figure is on the same scale as the single-seed F (never
      larger than any seed's F) and the chance baseline below, a probability per item, can be
      subtracted from it. ``n_agree`` is returned so the other rate can be derived.
    * ``n_11 .. n_00`` count agreeing items only; they sum to ``n_agree``.
    * ``acc_before``/``acc_after``: mean over all items and seeds (per-seed accuracies averaged).
    * Chance baseline: the response model of docs/method.md §1 (an item is either known, hence always right, or
      guessed uniformly among its k_i options; before and after independent) with guesses also
      independent across the S seeds. Let ``m = mean(1/k_i)`` and ``u = (1-acc)/(1-m)`` the
      fraction of items not known. Then the chance of an agreeing 1->0 transition is
      ``P(lucky before in all S) * P(wrong after in all S) = u_b*mean(k_i**-S) * u_a*mean((1-1/k_i)**S)``,
      and the 0->1 chance is the same product, so ``F_chance == BT_chance``. For S = 1 it reduces
      to the single-seed formula ``(1-acc_b)*(1-acc_a)/(k_eff-1)``. Independent guessing across
      seeds is an idealisation: a sampled model that repeats its guesses agrees by chance more
      often, and then this baseline is too low and F_true too high. The derivation is this
      project's, not the paper's. Without a usable k the chance columns are NaN.
    """
    b = binary(before, "before", 2)
    a = binary(after, "after", 2)
    if b.shape != a.shape:
        raise ValueError(f"before and after must have the same (n_items, n_seeds) shape: {b.shape} vs {a.shape}")
    n, n_seeds = (int(d) for d in b.shape)
    if n_seeds == 0:
        raise ValueError("seed_agreement_metrics needs at least one seed column")
    ks = _item_ks(k, n)
    keff = k_eff(k) if np.ndim(k) == 0 else k_eff(ks)

    code = 2 * b.astype(np.int8) + a.astype(np.int8)  # 3: 1->1, 2: 1->0, 1: 0->1, 0: 0->0
    agree = (code == code[:, :1]).all(axis=1)
    counts = np.bincount(code[agree, 0], minlength=4)  # four zeros when there are no items
    n_00, n_01, n_10, n_11 = (int(c) for c in counts)
    acc_b = _ratio(int(np.count_nonzero(b)), b.size)
    acc_a = _ratio(int(np.count_nonzero(a)), a.size)
    f = _ratio(n_10, n)
    bt = _ratio(n_01, n)

    if math.isnan(keff) or not n:
        chance = _NAN
    else:
        inv = 1.0 / ks
        unknown = (1.0 - acc_b) * (1.0 - acc_a) / (1.0 - inv.mean()) ** 2
        chance = float(unknown * np.mean(inv**n_seeds) * np.mean((1.0 - inv) ** n_seeds))

    return {
        "k": keff,
        "n": n,
        "n_seeds": n_seeds,
        "n_agree": int(np.count_nonzero(agree)),
        **dict(zip(_COUNTS, (n_11, n_10, n_01, n_00))),
        **_rates(acc_b, acc_a, f, bt, chance),
    }


def _validated(subtasks: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """Check the per-subtask table before averaging: a duplicate row would silently double its weight."""
    missing = [c for c in (*_KEYS, *columns) if c not in subtasks.columns]
    if missing:
        raise ValueError(f"subtask table lacks columns {missing}")
    if subtasks.empty:
        raise ValueError("subtask table is empty: nothing to aggregate")
    if (subtasks["category"] == OVERALL).any():
        raise ValueError(f"{OVERALL!r} is reserved for the overall row and cannot be a category name")
    dup = subtasks.duplicated(list(_KEYS), keep=False)
    if dup.any():
        rows = subtasks.loc[dup, list(_KEYS)].drop_duplicates().head(5).to_dict("records")
        raise ValueError(f"subtask table has several rows for the same (category, subtask, seed): {rows}")
    return subtasks


def macro_per_seed(
    rows: pd.DataFrame, columns: Sequence[str], by: Sequence[str] = ()
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The macro structure of the headline figures before the seeds are averaged, the one definition that the
    paper's rates, the analyses' columns and their bootstrap replicates share.

    ``rows``: one row per (category, subtask, seed[, *by]) with ``columns``; ``by``: extra keys kept apart
    throughout (the bootstrap's replicate). Returns the unweighted mean over a category's sub-benchmarks per
    (*by, category, seed), and the unweighted mean over those categories per (*by, seed). A NaN value is
    left out of its column's means only.
    """
    keys = list(by)
    per_cat = rows.groupby([*keys, "category", "seed"], sort=True, dropna=False, observed=True)[list(columns)].mean()
    overall = per_cat.groupby(level=[*keys, "seed"], sort=True, dropna=False).mean()
    return per_cat, overall


def macro_means(rows: pd.DataFrame, columns: Sequence[str], by: Sequence[str] = ()) -> pd.DataFrame:
    """:func:`macro_per_seed` averaged over seeds: indexed by (*by, category), the categories sorted by name,
    then the OVERALL rows."""
    per_cat, overall = macro_per_seed(rows, columns, by)
    levels = [*by, "category"]
    overall = overall.assign(category=OVERALL).set_index("category", append=True)
    return pd.concat([frame.groupby(level=levels, sort=True, dropna=False).mean() for frame in (per_cat, overall)])


def _across_seeds(subtasks: pd.DataFrame, per_cat: pd.DataFrame, overall: pd.DataFrame, average: str) -> pd.DataFrame:
    """Mean and sample std (ddof=1) over seeds of per-seed category and overall figures.

    ``per_cat`` is indexed by (category, seed), ``overall`` by seed. pandas skips NaN in both, and
    the std of a single value is NaN, as docs/method.md §2 asks for one seed.
    """
    stats = pd.concat(
        [
            per_cat.groupby(level="category", sort=True).agg(["mean", "std"]),
            overall.agg(["mean", "std"]).unstack().to_frame(OVERALL).T,
        ]
    )
    stats.columns = [f"{metric}_{stat}" for metric, stat in stats.columns]

    by_cat = subtasks.groupby("category", sort=True)
    n_subtasks, n_seeds = by_cat["subtask"].nunique(), by_cat["seed"].nunique(dropna=False)
    sizes = pd.DataFrame(
        {
            "n_subtasks": [*n_subtasks, len(subtasks[["category", "subtask"]].drop_duplicates())],
            "n_seeds": [*n_seeds, subtasks["seed"].nunique(dropna=False)],
        },
        index=[*n_subtasks.index, OVERALL],
    )
    out = pd.concat([sizes, stats], axis=1)
    out.insert(0, "average", average)
    return out.rename_axis("category").reset_index()


def aggregate(subtasks: pd.DataFrame) -> pd.DataFrame:
    """Macro averages (the paper's headline figure), per category and OVERALL, mean ± std over seeds.

    Input: one row per (category, subtask, seed) with :data:`METRIC_COLUMNS`. The macro structure is
    :func:`macro_per_seed`'s: per category and seed the unweighted mean over the category's sub-benchmarks
    (those present for that seed), OVERALL per seed the unweighted mean over categories; then mean and
    ddof=1 std across seeds. A NaN metric (e.g. F_true without k) is left out of that metric's means only.

    Output columns: category, average ('macro'), n_subtasks, n_seeds, then ``M_mean``, ``M_std``
    for each M in :data:`RATE_METRICS`; categories sorted by name, OVERALL last.
    """
    df = _validated(subtasks, METRIC_COLUMNS)
    per_cat, overall = macro_per_seed(df, RATE_METRICS)
    return _across_seeds(df, per_cat, overall, "macro")


def _pooled(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Item-weighted mean of every rate metric per group, skipping NaN values and their weights.

    Weighting F_j by n_j (and F_rel_j by #correct-before) reproduces exactly the rate of the pooled
    counts; weighting F_chance_j by n_j gives the expected number of chance transitions summed over
    sub-benchmarks per pooled item, which is the right baseline because the response model holds
    within a sub-benchmark (with its own accuracy and k), not across the pool.
    """
    values = df[list(RATE_METRICS)].astype(float)
    weights = pd.DataFrame({m: df["n"] for m in RATE_METRICS}, dtype=float)
    weights["F_rel"] = (df["n_11"] + df["n_10"]).astype(float)
    weights = weights.where(values.notna(), 0.0)
    groups = [df[key] for key in keys]
    num = (values.fillna(0.0) * weights).groupby(groups, sort=True, dropna=False).sum()
    den = weights.groupby(groups, sort=True, dropna=False).sum()
    return num / den.where(den > 0)


def aggregate_micro(subtasks: pd.DataFrame) -> pd.DataFrame:
    """Micro (item-weighted) counterpart of :func:`aggregate`, a labelled extra (average='micro').

    Per category and seed, and OVERALL per seed over all sub-benchmarks' items, the rates are those
    of the pooled counts (see :func:`_pooled` for the chance columns); then mean and ddof=1 std over
    seeds. Same output shape as :func:`aggregate`.
    """
    df = _validated(subtasks, METRIC_COLUMNS)
    per_cat = _pooled(df, ["category", "seed"])
    overall = _pooled(df, ["seed"])
    return _across_seeds(df, per_cat, overall, "micro")
