"""Analyses beyond the paper, added to a :class:`PairResult` at the end of pairing.

Three questions a reader asks of a forgetting figure, each answered by its own modules:

* why was it forgotten: the failure mode of the wrong side, the share of forgetting that is format
  rather than knowledge, answer-format adherence and reply length (``failure_modes``, ``refusal``);
* is it more than noise: exact McNemar tests with Benjamini-Hochberg q-values (``significance``) and
  percentile bootstrap intervals of F_true / BT_true (``bootstrap``);
* was it coming: the drift of the gold option's probability in log-likelihood multiple-choice runs
  (``drift``).

:func:`annotate` adds columns to ``result.subtasks`` (per sub-benchmark and seed), macro averages of
them to the macro rows of ``result.categories``, and named tables to ``result.tables`` (written as
``<name>.csv``). :func:`analyses_markdown` renders them for report.md (``analyses_report``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from postforget_lmeval.analyses import bootstrap, drift, failure_modes, significance
from postforget_lmeval.pairing import keyed_rows
from postforget_lmeval.report.analyses_md import analyses_markdown
from postforget_lmeval.analyses.macro import macro_means
from postforget_lmeval.pairing.results import PairResult

__all__ = ["annotate", "in_background", "analyses_markdown", "terminal_columns", "TERMINAL_COLUMNS"]

LoadItem = Callable[[str, int], Any]
"""``load_item(file, locator)`` of the input source: the full logged item (responses, options, ...)."""

BEHAVIOUR_COLUMNS = ("F_format_share", "BT_format_share", "answered_before", "answered_after",
                     "median_chars_before", "median_chars_after")
SUBTASK_DRIFT_COLUMNS = ("dp_gold_median_11", "at_risk_share", "drift_share")
DRIFT_COLUMNS = ("at_risk_share", "drift_share")
KEYS = ["subtask", "seed"]
"""The key of a row of ``subtasks`` and of the analyses' per-row tables."""
TERMINAL_COLUMNS = ("format", "significant")
"""Columns of :func:`terminal_columns`, for the category table on the terminal."""


def _set_columns(frame: pd.DataFrame, extra: pd.DataFrame, at: np.ndarray | None = None,
                 rows: np.ndarray | None = None) -> None:
    """Set ``extra``'s columns on ``frame`` in place: on row ``i`` of ``frame`` row ``at[i]`` of ``extra`` (NaN
    where -1; by default row ``i``); only on ``rows`` (a mask) if given, NaN elsewhere."""
    for col in extra.columns:
        values = extra[col].to_numpy()
        if at is not None:
            values = np.append(values, np.nan)[at]  # position -1: the NaN at the end
        if rows is not None:
            values = np.where(rows, values, np.nan)
        frame[col] = values


def _keyed(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its subtask and seed keys as plain strings, as the analyses' tables key them."""
    return frame.astype({"subtask": str, "seed": str})


def _resolved(path: str, dirs: dict[str, str]) -> str:
    """``str(Path(path).resolve())``, resolving each directory once (in ``dirs``): the runs of a pair share a
    few directories, and only a file that is itself a symlink needs a resolution of its own."""
    head, name = os.path.split(path)
    if name in ("", ".", "..") or os.path.islink(path):
        return str(Path(path).resolve())
    if head not in dirs:
        dirs[head] = str(Path(head).resolve())
    return os.path.join(dirs[head], name)


def _max_gen_toks(summary: Mapping[str, Any]) -> dict[str, int | None]:
    """samples file -> the generation budget its run recorded (``summary['runs']``), under both spellings."""
    out: dict[str, int | None] = {}
    dirs: dict[str, str] = {}
    for runs in (summary.get("runs") or {}).values():
        for run in runs or ():
            path = run.get("samples") or run.get("file")
            if path:
                out[str(path)] = out[_resolved(str(path), dirs)] = run.get("max_gen_toks")
    return out


Started = tuple[Callable[[], bootstrap.Intervals], Callable[[], failure_modes.Modes]]
"""The analyses' two long steps under way (:func:`in_background`): call each to wait for its result."""


def start_draws(items: pd.DataFrame) -> tuple[Callable[[], bootstrap.Intervals], float]:
    """Start the bootstrap's draws (:func:`bootstrap.in_background`) on the paired items: they read only
    subtask, category, seed, doc_id, before, after and k, so pairing starts them as soon as the join has
    them, before building samples.parquet's frame (the draws take longest of the analyses)."""
    return bootstrap.in_background(items)


def in_background(
    samples: pd.DataFrame,
    summary: Mapping[str, Any],
    load_responses: failure_modes.LoadResponses | None,
    draws: tuple[Callable[[], bootstrap.Intervals], float] | None = None,
) -> Started:
    """Start the bootstrap's draws (unless ``draws`` are under way: :func:`start_draws`) and the read-back of
    unanswered replies (``load_responses`` of the input sources, file by file) in forked processes (on large
    pairs), so that they run while the caller builds the tables; ``summary['runs']`` gives the budgets."""
    max_gen_toks = _max_gen_toks(summary)
    intervals, draws_seconds = draws or bootstrap.in_background(samples)
    return (
        intervals,
        failure_modes.modes_in_background(samples, max_gen_toks, load_responses, beside=draws_seconds)
        if load_responses is not None
        else partial(failure_modes.modes_of, samples, max_gen_toks, None),
    )


def annotate(
    result: PairResult,
    load_item: LoadItem | None = None,
    *,
    n_boot: int = bootstrap.N_BOOT,
    seed: int = 0,
    started: Started | None = None,
) -> None:
    """Add the analyses to ``result`` in place.

    ``load_item`` reads back a logged item; it is called only for the unanswered items of 1->0 and
    0->1 transitions (to look for refusals), never for every item. ``n_boot``/``seed``: bootstrap
    replicates and the seed of their random draws. ``started``: the long steps already started with
    :func:`in_background` on ``result.samples`` (pairing starts them before it builds the tables, with the
    default ``n_boot`` and ``seed``); by default they run here.

    The analyses' tables are keyed by (subtask, seed) as text; row ``i`` of the significance table, of the
    failure-mode counts and of the behaviour columns is row ``i`` of ``subtasks``.
    """
    subtasks, categories, samples = result.subtasks, result.categories, result.samples
    macro = (categories["average"] == "macro").to_numpy() if "average" in categories else np.ones(len(categories), bool)
    bootstrap_intervals, modes_when_read = started or (
        bootstrap.in_background(samples, n_boot=n_boot, seed=seed)[0],  # runs meanwhile
        partial(failure_modes.modes_of, samples, _max_gen_toks(result.summary), load_item),
    )
    rows = keyed_rows.item_rows(samples, subtasks, KEYS)  # the subtasks row of every item

    sig = significance.significance_table(subtasks)
    _set_columns(subtasks, sig[list(significance.COLUMNS)])
    result.tables["significance"] = sig
    for col in bootstrap.COLUMNS:  # their place in the tables; filled when the draws are done
        subtasks[col] = float("nan")
        categories[col] = float("nan")

    # behaviour and drift need no reply back: computed while the replies may still be read
    behaved = failure_modes.behaviour(samples, rows, len(subtasks))
    items = drift.item_drift(samples)
    modes = modes_when_read()
    if modes.unreadable:
        result.warnings.append(
            f"{modes.unreadable} unanswered item(s) could not be read back from their samples file "
            "(moved or changed since pairing?): counted as no_answer, not checked for a refusal"
        )
    counts = failure_modes.mode_counts(modes, rows, len(subtasks))
    _set_columns(subtasks, counts[["F_format_share", "BT_format_share"]])
    _set_columns(subtasks, behaved)
    counts_of = _keyed(subtasks[["subtask", "category", "seed", "n_11", "n_10", "n_01"]]).reset_index(drop=True)
    result.tables["failure_modes"] = pd.concat([counts_of.drop(columns="n_11"), counts], axis=1)

    if not items.empty:
        per_row = drift.drift_summary(items)
        _set_columns(subtasks, per_row[list(SUBTASK_DRIFT_COLUMNS)], keyed_rows.positions(per_row, subtasks, KEYS))
        result.tables["drift"] = counts_of.drop(columns="n_01").merge(per_row, on=KEYS)
        result.tables["drift_items"] = items
    else:
        for col in SUBTASK_DRIFT_COLUMNS:
            subtasks[col] = float("nan")

    means = macro_means(subtasks, [*BEHAVIOUR_COLUMNS, *DRIFT_COLUMNS]).add_suffix("_mean").reset_index()
    at = keyed_rows.positions(means, categories, ["category"])
    _set_columns(categories, means.drop(columns="category"), at, macro)
    result.summary.setdefault("analyses", {}).update(
        {
            "significance": {"test": "exact McNemar (two-sided binomial on n_10, n_01)",
                             "family": "all sub-benchmark x seed rows of this pair", "fdr": significance.ALPHA},
            "bootstrap": {"replicates": n_boot, "seed": seed, "level": bootstrap.LEVEL,
                          "unit": "item within sub-benchmark, same draw for every seed"},
            "failure_modes": {"cut_chars_per_token": failure_modes.CUT_CHARS_PER_TOKEN,
                              "items_read_back": modes.loaded, "unreadable": modes.unreadable},
            "drift": {"items": len(items), "at_risk_drop": drift.AT_RISK_DROP, "drift_share": drift.DRIFT_SHARE}
            if not items.empty
            else {"items": 0, "why": "no item logs option log-likelihoods on both sides (generative tasks)"},
        }
    )
    per_row, per_cat = bootstrap_intervals()
    _set_columns(subtasks, per_row[list(bootstrap.COLUMNS)], keyed_rows.positions(per_row, subtasks, KEYS))
    _set_columns(categories, per_cat[list(bootstrap.COLUMNS)],
                 keyed_rows.positions(per_cat, categories, ["category"]), macro)  # fmt: skip


def terminal_columns(result: PairResult) -> pd.DataFrame:
    """Per category and OVERALL (index ``category``): ``format``, the macro share of 1->0 items lost to
    format (F_format_share_mean), and ``significant``, "k/n" sub-benchmark x seed rows with q < 0.05."""
    macro = result.categories[result.categories["average"] == "macro"].set_index("category")
    sig = result.subtasks.groupby("category")["significant"].agg(lambda s: f"{int(s.sum())}/{len(s)}")
    sig["OVERALL"] = f"{int(result.subtasks['significant'].sum())}/{len(result.subtasks)}"
    return pd.DataFrame({"format": macro["F_format_share_mean"], "significant": sig.reindex(macro.index)})
