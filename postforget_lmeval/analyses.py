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
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from postforget_lmeval import bootstrap, drift, failure_modes, significance
from postforget_lmeval.analyses_report import analyses_markdown
from postforget_lmeval.macro import macro_means
from postforget_lmeval.results import PairResult

__all__ = ["annotate", "in_background", "analyses_markdown", "terminal_columns", "TERMINAL_COLUMNS"]

LoadItem = Callable[[str, int], Any]
"""``load_item(file, locator)`` of the input source: the full logged item (responses, options, ...)."""

BEHAVIOUR_COLUMNS = ("F_format_share", "BT_format_share", "answered_before", "answered_after",
                     "median_chars_before", "median_chars_after")
SUBTASK_DRIFT_COLUMNS = ("dp_gold_median_11", "at_risk_share", "drift_share")
DRIFT_COLUMNS = ("at_risk_share", "drift_share")
TERMINAL_COLUMNS = ("format", "significant")
"""Columns of :func:`terminal_columns`, for the category table on the terminal."""


def _add_columns(frame: pd.DataFrame, extra: pd.DataFrame, keys: Sequence[str], rows: pd.Series | None = None) -> None:
    """Set ``extra``'s non-key columns on ``frame`` (in place) by matching ``keys`` as text (``extra``'s keys
    are unique); NaN where ``extra`` has no such row; only on ``rows`` if given."""
    keys = list(keys)
    target = pd.MultiIndex.from_frame(frame[keys].astype(str))
    at = pd.MultiIndex.from_frame(extra[keys].astype(str)).get_indexer(target)
    matched = extra.drop(columns=keys).reset_index(drop=True).reindex(at)  # label -1: no such row, NaN
    for col in matched.columns:
        values = matched[col].to_numpy()
        if rows is None:
            frame[col] = values
        else:
            frame.loc[rows.to_numpy(), col] = values[rows.to_numpy()]


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


Started = tuple[Callable[[], bootstrap.Intervals], Callable[[], failure_modes.Replies]]
"""The analyses' two long steps under way (:func:`in_background`): call each to wait for its result."""


def in_background(
    samples: pd.DataFrame, summary: Mapping[str, Any], load_responses: failure_modes.LoadResponses | None
) -> Started:
    """Start the bootstrap's draws and the read-back of unanswered replies (``load_responses`` of the input
    sources, file by file) in forked processes (on large pairs), so that they run while the caller builds
    the tables; ``summary['runs']`` gives the budgets."""
    return (
        bootstrap.in_background(samples),
        failure_modes.replies_in_background(samples, _max_gen_toks(summary), load_responses)
        if load_responses is not None
        else dict,
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
    """
    subtasks, categories, samples = result.subtasks, result.categories, result.samples
    macro_rows = categories["average"] == "macro" if "average" in categories else pd.Series(True, categories.index)
    keys = ["subtask", "seed"]
    bootstrap_intervals, replies = started or (
        bootstrap.in_background(samples, n_boot=n_boot, seed=seed),  # runs meanwhile
        lambda: None,  # item_modes reads the replies back itself
    )

    sig = significance.significance_table(subtasks)
    _add_columns(subtasks, sig[[*keys, *significance.COLUMNS]], keys)
    result.tables["significance"] = sig
    for col in bootstrap.COLUMNS:  # their place in the tables; filled when the draws are done
        subtasks[col] = float("nan")
        categories[col] = float("nan")

    modes = failure_modes.item_modes(samples, _max_gen_toks(result.summary), load_item, replies())
    if modes.attrs["unreadable"]:
        result.warnings.append(
            f"{modes.attrs['unreadable']} unanswered item(s) could not be read back from their samples file "
            "(moved or changed since pairing?): counted as no_answer, not checked for a refusal"
        )
    counts = failure_modes.mode_counts(modes, subtasks)
    _add_columns(subtasks, counts[[*keys, "F_format_share", "BT_format_share"]], keys)
    _add_columns(subtasks, failure_modes.behaviour(samples), keys)
    counts_of = _keyed(subtasks[["subtask", "category", "seed", "n_11", "n_10", "n_01"]])
    result.tables["failure_modes"] = counts_of.drop(columns="n_11").merge(counts, on=keys)

    items = drift.item_drift(samples)
    if not items.empty:
        per_row = drift.drift_summary(items)
        _add_columns(subtasks, per_row[[*keys, *SUBTASK_DRIFT_COLUMNS]], keys)
        result.tables["drift"] = counts_of.drop(columns="n_01").merge(per_row, on=keys)
        result.tables["drift_items"] = items
    else:
        for col in SUBTASK_DRIFT_COLUMNS:
            subtasks[col] = float("nan")

    means = macro_means(subtasks, [*BEHAVIOUR_COLUMNS, *DRIFT_COLUMNS]).add_suffix("_mean").reset_index()
    _add_columns(categories, means, ["category"], rows=macro_rows)
    result.summary.setdefault("analyses", {}).update(
        {
            "significance": {"test": "exact McNemar (two-sided binomial on n_10, n_01)",
                             "family": "all sub-benchmark x seed rows of this pair", "fdr": significance.ALPHA},
            "bootstrap": {"replicates": n_boot, "seed": seed, "level": bootstrap.LEVEL,
                          "unit": "item within sub-benchmark, same draw for every seed"},
            "failure_modes": {"cut_chars_per_token": failure_modes.CUT_CHARS_PER_TOKEN,
                              "items_read_back": modes.attrs["loaded"], "unreadable": modes.attrs["unreadable"]},
            "drift": {"items": len(items), "at_risk_drop": drift.AT_RISK_DROP, "drift_share": drift.DRIFT_SHARE}
            if not items.empty
            else {"items": 0, "why": "no item logs option log-likelihoods on both sides (generative tasks)"},
        }
    )
    per_row, per_cat = bootstrap_intervals()
    _add_columns(subtasks, per_row, keys)
    _add_columns(categories, per_cat, ["category"], rows=macro_rows)


def terminal_columns(result: PairResult) -> pd.DataFrame:
    """Per category and OVERALL (index ``category``): ``format``, the macro share of 1->0 items lost to
    format (F_format_share_mean), and ``significant``, "k/n" sub-benchmark x seed rows with q < 0.05."""
    macro = result.categories[result.categories["average"] == "macro"].set_index("category")
    sig = result.subtasks.groupby("category")["significant"].agg(lambda s: f"{int(s.sum())}/{len(s)}")
    sig["OVERALL"] = f"{int(result.subtasks['significant'].sum())}/{len(result.subtasks)}"
    return pd.DataFrame({"format": macro["F_format_share_mean"], "significant": sig.reindex(macro.index)})
