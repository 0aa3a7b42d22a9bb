"""The figures: forgetting and backward transfer per category, with F_max / BT_max marked, as PNG bytes.

F_max (BT_max) is the share of items known before (after) under the paper's guessing model, the chance-adjusted
accuracy (docs/method.md §1): a reference beside the bar, not a cap on it, since F_true can exceed it. It is drawn
as a hollow diamond at its height, never as a box around the bar.

matplotlib's object API only (no pyplot: no GUI backend, no global state), so rendering works in a
headless process and from threads. The bytes go both to a file and, base64-encoded, into
report.html, which therefore needs no network and no files beside it.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from postforget_lmeval.pairing.results import PairResult
from postforget_lmeval.report.paper_table import category_label, category_order

if TYPE_CHECKING:  # matplotlib is imported only when a figure is drawn (never with --no-plot)
    from matplotlib.figure import Figure

PANELS = (("F_true", "F_max", "Forgetting F_true"), ("BT_true", "BT_max", "Backward transfer BT_true"))
KNOWN_MARKER = "D"
"""The marker of F_max / BT_max (a hollow diamond)."""
DPI = 110


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


def _bars(
    ax,
    x: np.ndarray,
    width: float,
    mean: pd.Series,
    std: pd.Series,
    known: pd.Series,
    color: str | None,
    label: str | None,
) -> None:
    """Bars of ``mean`` ± ``std`` and a hollow diamond at ``known`` (F_max or BT_max) over each bar, all in %; no
    diamond where it is undefined (no k)."""
    bars = ax.bar(
        x,
        100 * mean.fillna(0),
        width,
        yerr=100 * std.fillna(0),
        capsize=2,
        color=color,
        label=label,
        error_kw={"elinewidth": 0.8},
    )
    shade = bars.patches[0].get_facecolor() if bars.patches else color
    ax.plot(x, 100 * known.to_numpy(dtype=float), linestyle="none", marker=KNOWN_MARKER, markersize=6,
            markerfacecolor="white", markeredgecolor=shade, markeredgewidth=1.2)  # fmt: skip


def _title(title: str, known: str) -> str:
    when = "before" if known == "F_max" else "after"
    return f"{title} ± std across seeds; diamond: {known}, share known {when} (not a cap)"


def categories_figure(result: PairResult) -> Figure:
    """One pair: per category (macro) F_true and BT_true with ± std, F_max / BT_max as diamonds."""
    cats = result.categories[result.categories["average"] == "macro"].set_index("category")
    cats = cats.reindex(category_order(cats.index))
    x = np.arange(len(cats))
    from matplotlib.figure import Figure

    fig = Figure(figsize=(max(6.5, 0.75 * len(cats) + 2.5), 6.2), layout="constrained")
    axes = fig.subplots(2, 1, sharex=True)
    for ax, (metric, known, title), color in zip(axes, PANELS, ("#c0392b", "#2471a3")):
        _bars(ax, x, 0.6, cats[f"{metric}_mean"], cats[f"{metric}_std"], cats[f"{known}_mean"], color, metric)
        ax.set_ylabel("% of items")
        ax.set_title(_title(title, known), fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[-1].set_xticks(x, [category_label(c) for c in cats.index], rotation=30, ha="right")
    return fig


def categories_png(result: PairResult) -> bytes:
    return _png(categories_figure(result))


def many_pairs_png(long: pd.DataFrame) -> bytes:
    """Many pairs (``multipair.long_table``): per category one bar per pair, F_true above, BT_true below."""
    pairs = list(dict.fromkeys(long["pair"]))
    order = category_order(long["category"])
    x = np.arange(len(order))
    width = 0.8 / max(1, len(pairs))
    from matplotlib.figure import Figure

    fig = Figure(figsize=(max(7.0, len(order) * (0.5 + 0.22 * len(pairs)) + 2.5), 6.8), layout="constrained")
    axes = fig.subplots(2, 1, sharex=True)
    colors = [f"C{i % 10}" for i in range(len(pairs))]
    for ax, (metric, known, title) in zip(axes, PANELS):
        for i, (name, color) in enumerate(zip(pairs, colors)):
            rows = long[(long["pair"] == name) & (long["metric"] == metric)].set_index("category").reindex(order)
            _bars(ax, x - 0.4 + width * (i + 0.5), width, rows["mean"], rows["std"], rows["ceiling"], color, name)
        ax.set_ylabel("% of items")
        ax.set_title(_title(title, known), fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", fontsize=8, ncols=min(5, len(pairs)))
    axes[-1].set_xticks(x, [category_label(c) for c in order], rotation=30, ha="right")
    return _png(fig)
