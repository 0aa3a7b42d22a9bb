"""The analyses added to a :class:`PairResult` once its items are paired: columns of ``subtasks`` (per
sub-benchmark and seed), their macro averages on the macro rows of ``categories``, and named tables in
``result.tables`` (written as ``<name>.csv``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from postforget_lmeval import metrics
from postforget_lmeval.analyses import _bootstrap as bootstrap
from postforget_lmeval.analyses import _drift as drift
from postforget_lmeval.analyses import _failure_modes as failure_modes
from postforget_lmeval.analyses import _knowledge as knowledge
from postforget_lmeval.analyses import _noise as noise
from postforget_lmeval.analyses import _overall as overall
from postforget_lmeval.analyses import _significance as significance
from postforget_lmeval.pairing.results import PairResult
from postforget_lmeval.pairing.run_plan import SIDES

BEHAVIOUR_COLUMNS = (
    "F_format_share",
    "BT_format_share",
    "answered_before",
    "answered_after",
    "median_chars_before",
    "median_chars_after",
)
SUBTASK_DRIFT_COLUMNS = ("dp_gold_median_11", "at_risk_share", "drift_share")
DRIFT_COLUMNS = ("at_risk_share", "drift_share")
KEYS = ["subtask", "seed"]
"""The key of a row of ``subtasks`` and of the analyses' per-row tables, compared as text."""
ABOVE_MAX = {"F_true_above_max": ("F_true", "F_max"), "BT_true_above_max": ("BT_true", "BT_max")}
"""Flags of subtasks.csv: the chance-adjusted figure exceeds the share of items known before (after) under the
guessing model, which it can (docs/method.md §1): not an error, a sign of sampling noise or of worse-than-chance
answers."""
ABOVE_MAX_NOTE = (
    "F_max / BT_max are the shares of items known before / after under the paper's guessing model (its 'max "
    "possible forgetting / improvement', the chance-adjusted accuracy), not a bound: F_true exceeds F_max when "
    "sampling noise flips items the model knew or guessed right, or when answers worse than chance (accuracy "
    "below 1/k, so F_max = 0) still flip 1->0; likewise BT_true and BT_max"
)
"""Why a row is flagged, for the reports."""
TERMINAL_COLUMNS = ("format", "significant", "noise_floor", "F_beyond_noise", "BT_beyond_noise")
"""Columns of :func:`terminal_columns`, for the category table on the terminal."""


def _set_columns(frame: pd.DataFrame, extra: pd.DataFrame, rows: np.ndarray | None = None) -> None:
    """Set ``extra``'s columns on ``frame`` in place, row ``i`` of ``extra`` on row ``i`` of ``frame``; only on
    ``rows`` (a mask) if given, NaN elsewhere."""
    for col in extra.columns:
        values = extra[col].to_numpy()
        frame[col] = values if rows is None else np.where(rows, values, np.nan)


def _aligned(keys: pd.DataFrame, table: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """``table``'s ``columns`` on the rows of ``keys`` (the key columns, as text), NaN where it has no row."""
    on = list(keys.columns)
    right = table[[*on, *columns]].astype(dict.fromkeys(on, str))
    return keys.merge(right, on=on, how="left", validate="many_to_one")[list(columns)]


def _max_gen_toks(summary: Mapping[str, Any]) -> dict[str, int | None]:
    """samples file -> the generation budget its run recorded (``summary['runs']``), under the path as the run
    names it and as resolved (the samples table may hold either)."""
    out: dict[str, int | None] = {}
    for runs in (summary.get("runs") or {}).values():
        for run in runs or ():
            path = run.get("samples") or run.get("file")
            if path:
                out[str(path)] = out[str(Path(path).resolve())] = run.get("max_gen_toks")
    return out


def annotate(
    result: PairResult,
    load_item: failure_modes.LoadItem | None = None,
    *,
    n_boot: int = bootstrap.N_BOOT,
    seed: int = 0,
) -> None:
    """Add the analyses to ``result`` in place.

    ``load_item`` reads back a logged item; it is called only for the unanswered items of 1->0 and
    0->1 transitions (to look for refusals), never for every item. ``n_boot``/``seed``: bootstrap
    replicates and the seed of their random draws.
    """
    subtasks, categories, samples = result.subtasks, result.categories, result.samples
    macro = (categories["average"] == "macro").to_numpy() if "average" in categories else np.ones(len(categories), bool)
    keys = subtasks[KEYS].astype(str).reset_index(drop=True)
    category_keys = categories[["category"]].astype(str).reset_index(drop=True)

    for flag, (rate, known) in ABOVE_MAX.items():
        subtasks[flag] = (subtasks[rate] - subtasks[known] > 1e-12).to_numpy()  # NaN (no k) compares False

    sig = significance.significance_table(subtasks, samples)
    _set_columns(subtasks, sig[list(significance.COLUMNS)])
    result.tables["significance"] = sig

    per_row, per_cat = bootstrap.intervals(samples, n_boot=n_boot, seed=seed)
    _set_columns(subtasks, _aligned(keys, per_row, bootstrap.COLUMNS))
    _set_columns(categories, _aligned(category_keys, per_cat, bootstrap.COLUMNS), macro)
    _noise_floor(result, macro, n_boot=n_boot, seed=seed)
    counts = subtasks[["n_11", "n_10", "n_01", "n_00"]].astype(int).itertuples(index=False)
    _set_columns(subtasks, pd.DataFrame([metrics.flip_metrics(*c) for c in counts], columns=metrics.FLIP_METRICS))

    _knowledge(result, n_boot=n_boot, seed=seed)  # first: the failure modes split by its labels
    modes = failure_modes.item_modes(samples, _max_gen_toks(result.summary), load_item)
    if modes.attrs["unreadable"]:
        result.warnings.append(
            f"{modes.attrs['unreadable']} unanswered item(s) could not be read back from their samples file "
            "(moved or changed since pairing?): counted as no_answer, not checked for a refusal"
        )
    counts = failure_modes.mode_counts(modes, keys)
    _set_columns(subtasks, counts[["F_format_share", "BT_format_share"]])
    _set_columns(subtasks, failure_modes.behaviour(samples, keys))
    counts_of = (
        subtasks[["subtask", "category", "seed", "n_11", "n_10", "n_01"]]
        .astype({"subtask": str, "seed": str})
        .reset_index(drop=True)
    )
    result.tables["failure_modes"] = pd.concat([counts_of.drop(columns="n_11"), counts], axis=1)

    items = drift.item_drift(samples)
    if not items.empty:
        per_row = drift.drift_summary(items)
        _set_columns(subtasks, _aligned(keys, per_row, SUBTASK_DRIFT_COLUMNS))
        result.tables["drift"] = counts_of.drop(columns="n_01").merge(per_row, on=KEYS)
        result.tables["drift_items"] = items
    else:
        for col in SUBTASK_DRIFT_COLUMNS:
            subtasks[col] = float("nan")

    columns = (*BEHAVIOUR_COLUMNS, *DRIFT_COLUMNS, *metrics.FLIP_METRICS)
    means = metrics.macro_means(subtasks, columns).add_suffix("_mean").reset_index()
    _set_columns(categories, _aligned(category_keys, means, tuple(f"{c}_mean" for c in columns)), macro)
    result.summary.setdefault("analyses", {}).update(
        {
            "significance": {
                "test": "exact McNemar (two-sided binomial on n_10, n_01)",
                "family": "all sub-benchmark x seed rows of this pair",
                "clustered": f"{significance.CLUSTER} test on the clusters (exact randomization over each cluster's "
                "net flip n_10 - n_01) for the sub-benchmarks whose items share a text; their q uses it",
                "fdr": significance.ALPHA,
            },
            "overall_test": overall.overall_test(samples),
            "bootstrap": {
                "replicates": n_boot,
                "seed": seed,
                "level": bootstrap.LEVEL,
                "unit": bootstrap.UNIT,
                "clustered_subtasks": sorted(map(str, samples.loc[samples["cluster"].notna(), "subtask"].unique()))
                if "cluster" in samples
                else [],
            },
            "noise_floor": {
                "estimator": "each side's seeds (all it logged, matched or not) paired with each other, both "
                "directions, averaged over seed pairs: F_noise_before, F_noise_after (docs/method.md)",
                "rule": "the floor subtracted pools both sides when both sample with two or more seeds, else is the "
                "one side that does (noise_floor_from); a greedy side (seeds agree on every item) is left out; "
                "log-likelihood scoring: 0",
                "subtasks_with_floor": int(subtasks["F_noise"].notna().groupby(subtasks["subtask"]).any().sum()),
                "floor_from": {
                    str(k): v for k, v in subtasks.groupby("subtask")["noise_floor_from"].first().items() if v
                },
                "shared_seed": _shared_summary(subtasks),
                "unmatched_seed_runs_read": int(
                    len(result.unmatched[["side", "subtask", "seed"]].drop_duplicates()) if len(result.unmatched) else 0
                ),
            },
            "failure_modes": {
                "cut_chars_per_token": failure_modes.CUT_CHARS_PER_TOKEN,
                "items_read_back": modes.attrs["loaded"],
                "unreadable": modes.attrs["unreadable"],
            },
            "drift": (
                {"items": len(items), "at_risk_drop": drift.AT_RISK_DROP, "drift_share": drift.DRIFT_SHARE}
                if not items.empty
                else {"items": 0, "why": "no item logs option log-likelihoods on both sides (generative tasks)"}
            )
            | {"left_out": items.attrs.get("left_out", 0)},
        }
    )


def _knowledge(result: PairResult, **boot: int) -> None:
    """Each flipped item's knowledge label (samples' ``knowledge``) and knowledge.csv, where log-likelihood twins
    ran beside the generative tasks."""
    if result.twins.empty:
        return
    samples = result.samples
    samples["knowledge"] = knowledge.item_labels(samples, result.twins)
    with_twins = samples[samples["subtask"].astype(str).isin(set(result.twins["subtask"]))]
    table = knowledge.knowledge_table(with_twins, **boot)
    result.tables["knowledge"] = table
    overall = table[table["level"] == "overall"].iloc[0]
    result.summary.setdefault("analyses", {})["knowledge"] = {
        "twin_items": len(result.twins),
        **{c: int(overall[c]) for c in knowledge.COUNTS},
        **{c: None if pd.isna(overall[c]) else float(overall[c]) for c in knowledge.SHARES},
    }


def _noise_floor(result: PairResult, macro: np.ndarray, **boot: int) -> None:
    """The noise floor's columns on ``subtasks`` and on the macro rows of ``categories``, with ``noise_floor_from``
    (whose floor is subtracted) and ``noise_note``: why a row has no floor, that a side's seeds never differed, or
    that the row shares a sampling seed across the sides (:data:`noise.SHARED`), for the renderers to say."""
    subtasks, categories = result.subtasks, result.categories
    per_row, per_cat, texts = noise.noise_floor(result.samples, unmatched=result.unmatched, **boot)
    keys = subtasks[KEYS].astype(str).reset_index(drop=True)
    _set_columns(subtasks, _aligned(keys, per_row, (*noise.COLUMNS, *noise.INTERVALS)))
    shared = _aligned(keys, per_row, (noise.SHARED_COLUMN,))[noise.SHARED_COLUMN].fillna(False).astype(bool)
    subtasks[noise.SHARED_COLUMN] = shared.to_numpy()
    text = _aligned(keys[["subtask"]], texts, noise.TEXT)
    for col in noise.TEXT:
        subtasks[col] = text[col].fillna("").to_numpy(dtype=object)
    subtasks["noise_note"] = [_joined([n, noise.SHARED if s else ""]) for n, s in zip(subtasks["noise_note"], shared)]
    wanted = (*(f"{c}_mean" for c in noise.COLUMNS), "noise_rows", noise.SHARED_COLUMN, *noise.INTERVALS)
    category_keys = categories[["category"]].astype(str).reset_index(drop=True)
    _set_columns(categories, _aligned(category_keys, per_cat, wanted), macro)
    for col, agg in (("noise_floor_from", _category_from), ("noise_note", _category_note)):
        per = subtasks.groupby("category")[col].agg(agg)
        per[metrics.OVERALL] = agg(subtasks[col])
        categories[col] = np.where(macro, categories["category"].astype(str).map(per).fillna(""), "")


def _joined(notes: list[str]) -> str:
    """Notes of a row, in order, without the empty ones and without repeats."""
    return "; ".join(dict.fromkeys(n for n in notes if n))


def _category_from(froms: pd.Series) -> str:
    """Whose floor a category subtracts: its sub-benchmarks' one rule, else 'mixed'."""
    distinct = set(froms) - {""}
    return next(iter(distinct)) if len(distinct) == 1 else ("mixed" if distinct else "")


def _category_note(notes: pd.Series) -> str:
    """A category's note: its sub-benchmarks' notes when they share them, else how many rows have no floor; the
    shared-seed flag when any row has it."""
    parts = [set(str(n).split("; ")) - {""} for n in notes]
    shared = noise.SHARED if any(noise.SHARED in p for p in parts) else ""
    rest = {frozenset(p - {noise.SHARED}) for p in parts}
    if len(rest) == 1:
        return _joined([*sorted(next(iter(rest))), shared])
    missing = sum(any(n in p for n in noise.NO_FLOOR) for p in parts)
    return _joined([f"{missing} of {len(notes)} rows without a floor" if missing else "", shared])


def _flagged(value: object) -> bool:
    """Whether a cell of a flag column is set (NaN on rows the flag does not cover)."""
    return not pd.isna(value) and bool(value)


def short_note(note: str) -> str:
    """A note as the terminal's narrow cells say it."""
    return "; ".join(noise.SHORT.get(n, n) for n in note.split("; ") if n)


def _floor_text(row: pd.Series, rows: int) -> tuple[str, str, str]:
    """The terminal's cells of a macro row: the floor of F_true (= that of BT_true), whose it is, and over how many
    of the category's ``rows`` sub-benchmarks where not all, then F_true and BT_true beyond it with their
    intervals, in %; the reason in a few words where there is no floor."""
    note = str(row.get("noise_note") or "")
    if pd.isna(row.get("F_true_noise_mean")):
        return short_note(note) or "–", "–", "–"

    def beyond(metric: str) -> str:
        lo, hi = row[f"{metric}_beyond_noise_lo"], row[f"{metric}_beyond_noise_hi"]
        flag = " (shared seed!)" if _flagged(row.get(noise.SHARED_COLUMN)) else ""
        return f"{100 * row[f'{metric}_beyond_noise_mean']:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]{flag}"

    floor = f"{100 * row['F_true_noise_mean']:.1f}"
    said = [f"from {row['noise_floor_from']}" if row.get("noise_floor_from") in SIDES else ""]  # pooled: unsaid
    said += [n for n in short_note(note).split("; ") if n and n != noise.SHORT[noise.SHARED]]
    if int(row["noise_rows"]) < rows:  # a floor exists: so does its count
        said.append(f"{int(row['noise_rows'])}/{rows} sub-benchmarks")
    said = [s for s in said if s]
    return f"{floor} ({', '.join(said)})" if said else floor, beyond("F_true"), beyond("BT_true")


def terminal_columns(result: PairResult) -> pd.DataFrame:
    """Per category and OVERALL (index ``category``): ``format``, the macro share of 1->0 items lost to
    format (F_format_share_mean), ``significant``, "k/n" sub-benchmark x seed rows with q < 0.05, and
    ``noise_floor``, ``F_beyond_noise``, ``BT_beyond_noise``: the floor of F_true and BT_true (one floor for
    both) and each beyond it with its interval, in %."""
    macro = result.categories[result.categories["average"] == "macro"].set_index("category")
    sig = result.subtasks.groupby("category")["significant"].agg(lambda s: f"{int(s.sum())}/{len(s)}")
    sig[metrics.OVERALL] = f"{int(result.subtasks['significant'].sum())}/{len(result.subtasks)}"
    n_rows = result.subtasks.groupby("category")["subtask"].nunique()
    n_rows[metrics.OVERALL] = result.subtasks["subtask"].nunique()
    floor = [_floor_text(row, int(n_rows.get(category, 0))) for category, row in macro.iterrows()]
    return pd.DataFrame(
        {
            "format": macro["F_format_share_mean"],
            "significant": sig.reindex(macro.index),
            "noise_floor": [f[0] for f in floor],
            "F_beyond_noise": [f[1] for f in floor],
            "BT_beyond_noise": [f[2] for f in floor],
        },
        index=macro.index,
    )


def _shared_summary(subtasks: pd.DataFrame) -> dict[str, Any]:
    """summary.json's shared-seed flag: the rows whose headline pairs the same sampling seed on both sides."""
    rows = subtasks.loc[subtasks[noise.SHARED_COLUMN], KEYS].astype(str)
    flagged = bool(len(rows))
    return {
        "flagged": flagged,
        "rows": [f"{s} seed {seed}" for s, seed in rows.itertuples(index=False)],
        **({"warning": noise.SHARED} if flagged else {}),
    }
