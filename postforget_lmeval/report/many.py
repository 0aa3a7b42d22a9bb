"""Many pairs at once: several named pairs, or a chain of runs, and one table with a column per pair.

The paper's tables put one model pair per column and ``F_true ± std (F_max)`` per category in the
cells (Appendix E). :func:`run_pairs` pairs each (before, after) with :func:`pairing.pair`, writes
each pair's own outputs in its own directory, then the wide table across pairs as ``pairs.csv``,
``pairs.md``, ``pairs.html`` and ``pairs.png``, the same numbers long-form in
``pairs_long.csv``, and every item's transition under every pair in ``items_by_pair.parquet``; a pair
the paper measured gets the paper's column beside it. Pairs that share their before directory are compared
item by item (``comparisons.csv``: the difference of their figures with a paired interval and test).
:func:`chain` turns runs ``A B C ...`` (e.g. base →
SFT → RL) into the pairs each step against the one before it and against the first.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from postforget_lmeval.analyses import compare_pairs
from postforget_lmeval.api import pair
from postforget_lmeval.metrics import OVERALL
from postforget_lmeval.pairing.options import PairOptions
from postforget_lmeval.pairing.results import PairingError, PairResult
from postforget_lmeval.report import html as report_html
from postforget_lmeval.report import paper, plots
from postforget_lmeval.report import paper_table as report
from postforget_lmeval.report.csv_safe import write_csv
from postforget_lmeval.report.files import atomic_write, moved, output_folder, write_outputs
from postforget_lmeval.report.markdown import markdown_table


@dataclass(frozen=True)
class PairSpec:
    """One column of the table: a label, the two run directories, where its outputs go, its own options."""

    label: str
    before: str
    after: str
    slug: str = ""
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def directory(self) -> str:
        # no leading dot: '.' and '..' would write into or above -o, '.x' would be hidden
        return self.slug or re.sub(r"[^\w.-]+", "_", self.label).strip("_").lstrip(".") or "pair"


def parse_pair(text: str) -> PairSpec:
    """``NAME=BEFORE,AFTER`` (the CLI's ``--pair``) -> a :class:`PairSpec`."""
    name, sep, dirs = text.partition("=")
    parts = dirs.split(",") if sep else []
    if not name.strip() or len(parts) != 2 or not all(p.strip() for p in parts):
        raise PairingError(f"--pair {text!r}: write it as NAME=BEFORE_DIR,AFTER_DIR (e.g. sft=runs/base,runs/sft)")
    return PairSpec(name.strip(), parts[0].strip(), parts[1].strip())


def chain(dirs: Sequence[str | os.PathLike[str]]) -> list[PairSpec]:
    """Runs ``d0 d1 d2 ...`` -> ``d0→d1, d1→d2, d0→d2, d2→d3, d0→d3, ...``: each step, and each stage
    against the first."""
    if len(dirs) < 2:
        raise PairingError(f"a chain needs at least two run directories, got {len(dirs)}")
    names = [Path(d).name or str(d) for d in dirs]
    if len(set(names)) < len(names):  # same basename twice: number them so labels stay distinct
        names = [f"{i}:{n}" for i, n in enumerate(names)]
    specs = []
    for i in range(1, len(dirs)):
        specs.append(
            PairSpec(f"{names[i - 1]}→{names[i]}", str(dirs[i - 1]), str(dirs[i]), f"step{i}_{_slug(names[i])}")
        )
        if i > 1:
            specs.append(
                PairSpec(f"{names[0]}→{names[i]}", str(dirs[0]), str(dirs[i]), f"from_first_{_slug(names[i])}")
            )
    return specs


def _slug(text: str) -> str:
    return re.sub(r"[^\w.-]+", "_", text).strip("_")


_NOISE_COLUMNS = {
    "noise_floor": "noise_mean",
    "beyond_noise": "beyond_noise_mean",
    "beyond_noise_lo": "beyond_noise_lo",
    "beyond_noise_hi": "beyond_noise_hi",
}
"""pairs_long.csv's columns of the noise floor (docs/method.md §5) -> the suffix of its column in categories.csv."""


def _metric_rows(label: str, result: PairResult) -> pd.DataFrame:
    """Long-form macro figures of one pair: one row per category and metric, OVERALL last."""
    cats = result.categories[result.categories["average"] == "macro"]
    rows = []
    for r in cats.itertuples(index=False):
        for metric, ceiling in (("F_true", "F_max"), ("BT_true", "BT_max")):
            rows.append(
                {
                    "pair": label,
                    "category": r.category,
                    "metric": metric,
                    "mean": getattr(r, f"{metric}_mean"),
                    "std": getattr(r, f"{metric}_std"),
                    "ceiling": getattr(r, f"{ceiling}_mean"),
                    "raw": getattr(r, f"{metric.removesuffix('_true')}_mean"),  # shown where mean is undefined
                    "raw_std": getattr(r, f"{metric.removesuffix('_true')}_std"),
                    "acc_before": r.acc_before_mean,
                    "acc_after": r.acc_after_mean,
                    "n_subtasks": int(r.n_subtasks),
                    "n_seeds": int(r.n_seeds),
                    **{
                        name: getattr(r, f"{metric}_{column}", math.nan)  # absent without the analyses
                        for name, column in _NOISE_COLUMNS.items()
                    },
                }
            )
    return pd.DataFrame(rows)


def _paper_rows(label: str, categories: set[str]) -> pd.DataFrame:
    """The paper's figures for one of its pairs (fractions), for the categories a run has: column ``paper: LABEL``."""
    fig = paper.figures()
    fig = fig[(fig["pair"] == label) & fig["category"].isin(categories)]
    return pd.DataFrame(
        {
            "pair": f"paper: {label}",
            "category": fig["category"],
            "metric": fig["metric"],
            "mean": (fig["mean_pct"] / 100).fillna(fig["value_full"]),
            "std": fig["std_pct"] / 100,
            "ceiling": fig["ceiling_pct"] / 100,
        }
    )


def long_table(results: dict[str, PairResult]) -> pd.DataFrame:
    """Every pair's macro figures (fractions), one row per (pair, category, metric); a pair the paper
    measured is followed by the paper's own column."""
    parts, shown = [], set()
    for label, result in results.items():
        parts.append(_metric_rows(label, result))
        reference = paper.paper_pair(result)
        if reference and reference not in shown:
            shown.add(reference)
            parts.append(_paper_rows(reference, set(parts[-1]["category"])))
    return pd.concat(parts, ignore_index=True)


def wide_table(long: pd.DataFrame) -> pd.DataFrame:
    """The paper's layout: rows (metric, category), one column per pair, cells ``F_true ± std (F_max)`` in %."""
    raw = long.reindex(columns=["raw", "raw_std"])  # the paper's own columns have none
    cells = long.assign(
        cell=[
            report.cell(m, s, c) if not pd.isna(m) else report.raw_cell(r, rs)
            for m, s, c, r, rs in zip(long["mean"], long["std"], long["ceiling"], raw["raw"], raw["raw_std"])
        ]
    )
    pairs = list(dict.fromkeys(long["pair"]))
    order = report.category_order(long["category"])
    wide = cells.pivot_table(index=["metric", "category"], columns="pair", values="cell", aggfunc="first", sort=False)
    wide = wide.reindex(
        pd.MultiIndex.from_product([["F_true", "BT_true"], order], names=["metric", "category"])
    ).reindex(columns=pairs)
    wide = wide.fillna("–").reset_index()
    wide["category"] = wide["category"].map(report.category_label)
    return wide


def no_baseline(results: dict[str, PairResult]) -> str | None:
    """Why some cells of the table across pairs are raw (:func:`report.no_baseline` over every pair)."""
    return report.no_baseline(pd.concat([r.subtasks[["subtask", "k"]] for r in results.values()]))


def models(results: dict[str, PairResult]) -> list[str]:
    """``label: before model → after model`` per pair, from the results files."""
    return [f"{label}: {report.models_line(r)}" for label, r in results.items()]


def table_markdown(wide: pd.DataFrame, why: str | None = None, names: Sequence[str] = ()) -> str:
    """pairs.md: the pairs' models, then forgetting then backward transfer, one column per pair; ``why``: the
    reason some cells are raw."""
    parts = ["# Forgetting and backward transfer across pairs", "", *(f"- {n}" for n in names)]
    parts += ["", report.LEGEND, ""] if names else [report.LEGEND, ""]
    for metric, title in report.METRIC_TITLES.items():
        block = wide[wide["metric"] == metric].drop(columns="metric")
        parts += [f"## {title}", "", markdown_table(list(block.columns), block.astype(str).values.tolist()), ""]
    if why:
        parts += [why, ""]
    return "\n".join(parts)


ITEM_KEY = ["subtask", "category", "doc_id", "seed", "replicate"]
"""The rows of :func:`item_matrix`: one item of a sub-benchmark under a seed label (and replicate)."""


def item_matrix(results: dict[str, PairResult]) -> pd.DataFrame:
    """items_by_pair.parquet: a row per item (:data:`ITEM_KEY`), a column per pair with its transition ('1->0' ...;
    missing where the pair did not pair the item). The input of work that predicts which items a fine-tuning
    forgets from the items' past transitions (Jin & Ren, 2024)."""
    merged: pd.DataFrame | None = None
    for label, result in results.items():
        keyed = result.samples[[*ITEM_KEY, "transition"]].astype(
            {"subtask": str, "category": str, "seed": str, "transition": str}
        )
        keyed = keyed.rename(columns={"transition": label})
        merged = keyed if merged is None else merged.merge(keyed, on=ITEM_KEY, how="outer", validate="one_to_one")
    if merged is None:
        raise ValueError("item_matrix needs at least one pair")
    merged = merged.sort_values(ITEM_KEY, kind="stable").reset_index(drop=True)
    labels = pd.CategoricalDtype(sorted({t for r in results.values() for t in r.samples["transition"].astype(str)}))
    return merged.astype({label: labels for label in results})


class Paired(NamedTuple):
    """What :func:`run_pairs` made: each pair's result by label, the files written, and ``comparisons.csv``'s table
    (None when no two pairs share a before directory, or without the analyses)."""

    results: dict[str, PairResult]
    written: list[Path]
    compared: pd.DataFrame | None


def run_pairs(
    specs: Sequence[PairSpec],
    out_dir: str | os.PathLike[str],
    options: PairOptions | None = None,
    *,
    plot: bool = True,
    on_pair: Callable[[PairSpec, PairResult], None] | None = None,
    **overrides: Any,
) -> Paired:
    """Pair every spec (its own options over ``options`` and ``overrides``), write its outputs to ``out_dir/<slug>``,
    then the table across pairs. Stops at the first pair that fails, naming it."""
    if not specs:
        raise PairingError("no pairs given: name at least one with --pair NAME=BEFORE,AFTER")
    labels = [s.label for s in specs]
    dirs = [s.directory for s in specs]
    for what, values in (("label", labels), ("output directory", dirs)):
        dup = sorted({v for v in values if values.count(v) > 1})
        if dup:
            raise PairingError(f"two pairs share the {what} {', '.join(dup)}: give each pair its own name")
    results: dict[str, PairResult] = {}
    written: list[Path] = []
    with output_folder(out_dir) as out:  # one set: the pairs of an earlier run are not left beside these
        for spec in specs:
            try:
                result = pair(spec.before, spec.after, options, **{**overrides, **spec.options})
            except PairingError as e:
                raise PairingError(f"pair {spec.label!r} ({spec.before} → {spec.after}): {e}") from e
            result.summary["pair_label"] = spec.label
            written += write_outputs(result, out / spec.directory, plot=plot)
            results[spec.label] = result
            if on_pair:
                on_pair(spec, result)
        compared = comparisons(specs, results) if PairOptions.of(options, **overrides).analyses else None
        written += write_table(results, out, plot=plot, directories=dict(zip(labels, dirs)), compared=compared)
    return Paired(results, moved(written, out, out_dir), compared)


def comparisons(specs: Sequence[PairSpec], results: dict[str, PairResult]) -> pd.DataFrame | None:
    """comparisons.csv: for every two pairs made from the same before directory (in the order given), per category
    and OVERALL, the difference of their F_true and BT_true with its paired interval and test
    (``analyses.compare_pairs``); None when no two pairs share a before."""
    parts = []
    for i, first in enumerate(specs):
        for second in specs[i + 1 :]:
            if Path(first.before).resolve() != Path(second.before).resolve():
                continue
            try:
                table = compare_pairs(results[first.label].samples, results[second.label].samples)
            except PairingError as e:
                raise PairingError(f"comparing {first.label!r} with {second.label!r}: {e}") from e
            parts.append(table.assign(pair_a=first.label, pair_b=second.label))
    if not parts:
        return None
    table = pd.concat(parts, ignore_index=True)
    return table[["pair_a", "pair_b", *(c for c in table.columns if c not in ("pair_a", "pair_b"))]]


def comparison_lines(compared: pd.DataFrame) -> list[str]:
    """One line per compared two pairs, OVERALL: the F_true difference with its interval, in points, and the
    paired test of the items one forgot and the other kept."""
    lines = []
    for r in compared[compared["category"] == OVERALL].itertuples(index=False):
        lines.append(
            f"{r.pair_a} vs {r.pair_b}: F_true {100 * r.F_true_diff:+.1f} points "
            f"[{100 * r.F_true_diff_lo:+.1f}, {100 * r.F_true_diff_hi:+.1f}] (95% paired bootstrap); "
            f"forgotten by one and kept by the other: {r.forgot_a_only} vs {r.forgot_b_only} items, "
            f"p = {r.p_forgot:.3g} (paired sign-flip test)"
        )
    return lines


def write_table(
    results: dict[str, PairResult],
    out: Path,
    *,
    plot: bool = True,
    directories: dict[str, str] | None = None,
    compared: pd.DataFrame | None = None,
) -> list[Path]:
    """pairs_long.csv, pairs.csv, pairs.md, pairs.html, items_by_pair.parquet (and pairs.png, comparisons.csv)
    in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    long = long_table(results)
    wide = wide_table(long)
    markdown = table_markdown(wide, no_baseline(results), models(results))
    if compared is not None:
        markdown += "\n## Pairs with one before, compared item by item\n\n" + "\n".join(
            f"- {line}" for line in comparison_lines(compared)
        )
        markdown += "\n\nPer category: comparisons.csv (docs/analyses.md).\n"
    written = [
        atomic_write(out / "pairs_long.csv", lambda p: write_csv(long, p)),
        atomic_write(out / "pairs.csv", lambda p: write_csv(wide, p)),
        atomic_write(out / "pairs.md", lambda p: p.write_text(markdown, encoding="utf-8")),
        atomic_write(out / "items_by_pair.parquet", lambda p: item_matrix(results).to_parquet(p, index=False)),
    ]
    if compared is not None:
        written.append(atomic_write(out / "comparisons.csv", lambda p: write_csv(compared, p)))
    image = plots.many_pairs_png(long) if plot else None
    html = report_html.pairs_html(wide, long, image, directories or {}, no_baseline(results), models(results))
    written.append(atomic_write(out / "pairs.html", lambda p: p.write_text(html, encoding="utf-8")))
    if image is not None:
        written.append(atomic_write(out / "pairs.png", lambda p: p.write_bytes(image)))
    return written
