"""Renderers of a pairing: the paper-shaped table (terminal and markdown) and the plot.

Writing the files is :mod:`postforget_lmeval.outputs`; ``show`` is :mod:`postforget_lmeval.show`.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from rich.table import Table

from postforget_lmeval.results import PairResult


def _cell(mean: float, std: float, acc: float) -> str:
    """``F_true ± std (acc)`` in percent, as the paper prints it; the std is left out for one seed."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "–"
    spread = "" if std is None or math.isnan(std) else f" ± {100 * std:.1f}"
    accuracy = "" if acc is None or math.isnan(acc) else f" ({100 * acc:.1f})"
    return f"{100 * mean:.1f}{spread}{accuracy}"


def paper_rows(categories: pd.DataFrame, average: str = "macro") -> list[tuple[str, str, str, int, int]]:
    """(category, forgetting cell, backward-transfer cell, n_subtasks, n_seeds) per category, OVERALL last."""
    rows = []
    for r in categories[categories["average"] == average].itertuples(index=False):
        rows.append(
            (
                "Overall" if r.category == "OVERALL" else str(r.category),
                _cell(r.F_true_mean, r.F_true_std, r.acc_before_mean),
                _cell(r.BT_true_mean, r.BT_true_std, r.acc_after_mean),
                int(r.n_subtasks),
                int(r.n_seeds),
            )
        )
    return rows


def rich_table(result: PairResult, average: str = "macro") -> Table:
    """The paper's table for the terminal."""
    label = "macro average over sub-benchmarks" if average == "macro" else "micro (item-weighted) average"
    table = Table(title=f"Chance-adjusted forgetting and backward transfer, % ({label})")
    table.add_column("Category")
    table.add_column("Forgetting F_true ± std (acc before)", justify="right")
    table.add_column("Backward transfer BT_true ± std (acc after)", justify="right")
    table.add_column("sub-benchmarks", justify="right")
    table.add_column("seeds", justify="right")
    rows = paper_rows(result.categories, average)
    for i, (cat, f, bt, n_sub, n_seeds) in enumerate(rows):
        table.add_row(cat, f, bt, str(n_sub), str(n_seeds), end_section=i == len(rows) - 2)
    return table


def _markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _pct(x: float) -> str:
    return "–" if x is None or math.isnan(x) else f"{100 * x:.1f}"


def report_markdown(result: PairResult) -> str:
    """report.md: the paper's table (macro, then micro), per-sub-benchmark figures and the problems."""
    s = result.summary
    totals = s["totals"]
    header = [
        "Category",
        "Forgetting F_true ± std (acc before)",
        "Backward transfer BT_true ± std (acc after)",
        "sub-benchmarks",
        "seeds",
    ]
    parts = [
        "# Forgetting and backward transfer",
        "",
        f"- before: `{s['inputs']['before']}`",
        f"- after: `{s['inputs']['after']}`",
        f"- {totals['subtasks_paired']} sub-benchmarks, seeds {', '.join(map(str, totals['seeds']))}, "
        f"{totals['items_paired']} item pairs "
        f"({totals['unpaired_before']} before-only, {totals['unpaired_after']} after-only)",
        "",
        "Figures in %. F_true / BT_true: chance-adjusted forgetting / backward transfer (Harmon et al., 2026, §2); "
        "± sample standard deviation across seeds (left out for one seed); in parentheses the accuracy before / after.",
        "",
        "## Macro average (the paper's headline: mean over sub-benchmarks per category, over categories overall)",
        "",
        _markdown_table(
            header, [[c, f, b, str(n), str(k)] for c, f, b, n, k in paper_rows(result.categories, "macro")]
        ),
        "",
        "## Micro average (item-weighted; an extra, not the paper's figure)",
        "",
        _markdown_table(
            header, [[c, f, b, str(n), str(k)] for c, f, b, n, k in paper_rows(result.categories, "micro")]
        ),
        "",
        "## Per sub-benchmark (mean over seeds)",
        "",
    ]
    cols = ["acc_before", "acc_after", "F", "BT", "F_true", "BT_true", "F_rel"]
    per = result.subtasks.groupby(["category", "subtask"], sort=True).agg(
        n=("n", "max"), k=("k", "first"), seeds=("seed", "nunique"), **{c: (c, "mean") for c in cols}
    )
    rows = [
        [
            cat,
            sub,
            str(int(r.n)),
            "–" if math.isnan(r.k) else f"{r.k:.2f}",
            str(int(r.seeds)),
            *(_pct(getattr(r, c)) for c in cols),
        ]
        for (cat, sub), r in per.iterrows()
    ]
    parts.append(_markdown_table(["category", "sub-benchmark", "items", "k", "seeds", *cols], rows))
    if not result.agreement.empty:
        parts += [
            "",
            "## Stricter variant: transitions that agree under every seed",
            "",
            _markdown_table(
                ["sub-benchmark", "seeds", "items", "agreeing", "F_true", "BT_true"],
                [
                    [r.subtask, r.seeds, str(r.n), str(r.n_agree), _pct(r.F_true), _pct(r.BT_true)]
                    for r in result.agreement.itertuples(index=False)
                ],
            ),
        ]
    parts += ["", "## Problems", ""]
    parts += [f"- {w}" for w in result.warnings] or ["None."]
    if result.notes:
        parts += ["", "## Notes", "", *(f"- {n}" for n in result.notes)]
    return "\n".join(parts) + "\n"


def plot_forgetting(result: PairResult, path: Path) -> None:
    """Per-category F_true and BT_true bars with their std across seeds (macro)."""
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global state changed

    cats = result.categories[result.categories["average"] == "macro"]
    x = np.arange(len(cats))
    fig = Figure(figsize=(max(6.0, 0.9 * len(cats) + 2), 4.5), layout="constrained")
    ax = fig.add_subplot()
    for offset, metric, label in (
        (-0.2, "F_true", "forgetting (F_true)"),
        (0.2, "BT_true", "backward transfer (BT_true)"),
    ):
        ax.bar(
            x + offset,
            100 * cats[f"{metric}_mean"].fillna(0),
            0.4,
            yerr=100 * cats[f"{metric}_std"].fillna(0),
            capsize=3,
            label=label,
        )
    ax.set_xticks(x, ["Overall" if c == "OVERALL" else c for c in cats["category"]], rotation=30, ha="right")
    ax.set_ylabel("% of items (chance-adjusted)")
    ax.set_title("Macro average per category; error bars: std across seeds")
    ax.legend()
    fig.savefig(path, dpi=120, format="png")
