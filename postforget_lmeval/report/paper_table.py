"""Renderers of a pairing: the paper-shaped table (terminal, Markdown, CSV) and report.md.

The paper's tables (Appendix E) print ``F_true ± std (F_max)`` for forgetting and
``BT_true ± std (BT_max)`` for backward transfer, macro-averaged: the number in parentheses is the
share of items known before (after) under the guessing model, the paper's "max possible forgetting", not
accuracy. Accuracy before and after get their own columns here. Writing the files is
:mod:`postforget_lmeval.report.files`, which takes every report file from
:func:`postforget_lmeval.report.html.renderers`; the figures are :mod:`postforget_lmeval.report.plots`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd
from rich.console import Console

from postforget_lmeval.analyses import terminal_columns
from postforget_lmeval.metrics import OVERALL
from postforget_lmeval.pairing.results import PairResult
from postforget_lmeval.report import paper
from postforget_lmeval.report.analyses_md import analyses_markdown, overall_line
from postforget_lmeval.report.markdown import markdown_table

if TYPE_CHECKING:  # rich.table is imported where a terminal table is drawn, not for writing files
    from rich.console import Group
    from rich.table import Table

LEGEND = (
    "Figures in %. F_true / BT_true: chance-adjusted forgetting / backward transfer (Harmon et al., ICLR 2026, §2), "
    "macro-averaged as in the paper's tables; ± sample standard deviation across seeds (left out for one seed); "
    "in parentheses F_max / BT_max, the share of items known before / after under the paper's guessing model (the "
    "chance-adjusted accuracy; the paper's 'max possible forgetting / improvement'), as the paper prints it: a "
    "reference, not a bound (sampling noise or worse-than-chance answers can put F_true above it)."
)
METRIC_TITLES = {"F_true": "Forgetting F_true ± std (F_max)", "BT_true": "Backward transfer BT_true ± std (BT_max)"}
PAPER_COLUMNS = (
    "Category",
    METRIC_TITLES["F_true"],
    METRIC_TITLES["BT_true"],
    "acc before",
    "acc after",
    "sub-benchmarks",
    "seeds",
)
EXTRA_TABLE_ROWS = 40  # rows of an analyses table shown in report.md / report.html (the CSV has all)


def _missing(x: float | None) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def cell(mean: float | None, std: float | None, ceiling: float | None) -> str:
    """``12.3 ± 0.4 (56.7)`` from fractions: the paper's cell; std and ceiling left out when undefined."""
    if _missing(mean):
        return "–"
    spread = "" if _missing(std) else f" ± {100 * std:.1f}"
    top = "" if _missing(ceiling) else f" ({100 * ceiling:.1f})"
    return f"{100 * mean:.1f}{spread}{top}"


def pct(x: float | None) -> str:
    return "–" if _missing(x) else f"{100 * x:.1f}"


def category_label(category: str) -> str:
    return "Overall" if category == OVERALL else str(category)


def category_order(categories: Iterable[str]) -> list[str]:
    """Categories sorted by name, OVERALL last (the order of categories.csv)."""
    names = sorted({str(c) for c in categories} - {OVERALL})
    return [*names, OVERALL] if OVERALL in set(map(str, categories)) else names


def raw_cell(mean: float | None, std: float | None) -> str:
    """A raw F or BT (not chance-adjusted) where the chance baseline is undefined: ``raw 12.3 ± 0.4``."""
    return "–" if _missing(mean) else f"raw {cell(mean, std, None)}"


def _figure(cats: pd.DataFrame, metric: str, ceiling: str, raw: bool) -> list[str]:
    """The paper's cells of one metric; with ``raw``, the raw rate where the chance-adjusted one is undefined."""
    true = [cell(*v) for v in zip(cats[f"{metric}_true_mean"], cats[f"{metric}_true_std"], cats[f"{ceiling}_mean"])]
    if not raw:
        return true
    fallback = [raw_cell(m, sd) for m, sd in zip(cats[f"{metric}_mean"], cats[f"{metric}_std"])]
    return [f if t == "–" else t for t, f in zip(true, fallback)]


def paper_table(result: PairResult, average: str = "macro", raw: bool = False) -> pd.DataFrame:
    """One row per category and Overall: the two paper cells, accuracy before/after, sizes (paper_table.csv).
    ``raw``: for readers, a category without a chance baseline shows its raw F and BT (see :func:`no_baseline`)."""
    cats = result.categories[result.categories["average"] == average]
    return pd.DataFrame(
        {
            PAPER_COLUMNS[0]: [category_label(c) for c in cats["category"]],
            PAPER_COLUMNS[1]: _figure(cats, "F", "F_max", raw),
            PAPER_COLUMNS[2]: _figure(cats, "BT", "BT_max", raw),
            PAPER_COLUMNS[3]: [pct(v) for v in cats["acc_before_mean"]],
            PAPER_COLUMNS[4]: [pct(v) for v in cats["acc_after_mean"]],
            PAPER_COLUMNS[5]: cats["n_subtasks"].astype(int).to_numpy(),
            PAPER_COLUMNS[6]: cats["n_seeds"].astype(int).to_numpy(),
        }
    )


def no_baseline(subtasks: pd.DataFrame) -> str | None:
    """Why some figures are raw: the sub-benchmarks without a chance baseline (k unknown), and the fix."""
    names = sorted(subtasks.loc[subtasks["k"].isna(), "subtask"].astype(str).unique())
    if not names:
        return None
    listed = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    return (
        f"raw = F and BT as counted, not chance-adjusted: {listed} "
        f"{'has' if len(names) == 1 else 'have'} no chance baseline (the number of options k is unknown, "
        "e.g. a generative task with no options to count); give --k N (the number of answers a guess picks "
        "from) to chance-adjust them."
    )


def models_line(result: PairResult) -> str:
    """``google/gemma-3-4b-it → Qwen/Qwen2.5-3B-Instruct``: the models the results files name (the folders where
    a side names none)."""
    models = result.summary.get("models") or {}
    inputs = result.summary.get("inputs") or {}
    sides = [", ".join(models.get(side) or []) or str(inputs.get(side, "?")) for side in ("before", "after")]
    return " → ".join(sides)


LABEL_WIDTH = 24
"""Characters of a label kept on one line when a narrow terminal squeezes the table (the paper's longest category,
Safety/Truthfulness, has 19)."""


def frame_rich(frame: pd.DataFrame, title: str, whole: Sequence[str] = ()) -> Table:
    """A table of text cells for the terminal; lines around each Overall row. The label column and the columns
    named in ``whole`` keep their cells on one line (up to :data:`LABEL_WIDTH`); the others wrap at spaces."""
    from rich.table import Table

    table = Table(title=title)
    text = frame.astype(str)
    for name in text.columns:
        label = name in ("Category", "category", "metric")
        longest = max((len(line) for cell in text[name] for line in cell.splitlines()), default=0)
        table.add_column(  # fold: a cell too long for a narrow terminal goes on over lines, never cut to "…"
            str(name),
            justify="left" if label else "right",
            overflow="fold",
            min_width=min(longest, LABEL_WIDTH) if label or name in whole else None,
        )
    rows = text.values.tolist()
    for i, row in enumerate(rows):
        table.add_row(*row, end_section=i + 1 < len(rows) and ("Overall" in row or "Overall" in rows[i + 1]))
    return table


PIPED_WIDTH = 160  # characters per line when stdout is a file or a pipe


def stdout_console() -> Console:
    """stdout for the tables; piped output gets a wide page so they are not squeezed to 80 columns, unless
    ``COLUMNS`` sets the width."""
    out = Console(soft_wrap=True, emoji=False)
    if out.is_terminal or os.environ.get("COLUMNS", "").isdigit():  # a width the user set wins
        return out
    return Console(soft_wrap=True, width=PIPED_WIDTH, emoji=False)


HEADLINE_COLUMNS = ("Category", "acc before → after", *PAPER_COLUMNS[1:3], "seeds", "sub-benchmarks")
"""The terminal's first table: what fits 100 columns (the analyses go in a second table)."""


def headline(result: PairResult, average: str = "macro") -> pd.DataFrame:
    """The terminal's first table: category, accuracy before → after, F_true (F_max), BT_true (BT_max), sizes."""
    t = paper_table(result, average, raw=True)
    return pd.DataFrame(
        {
            "Category": t[PAPER_COLUMNS[0]],
            "acc before → after": [f"{b} → {a}" for b, a in zip(t[PAPER_COLUMNS[3]], t[PAPER_COLUMNS[4]])],
            "F_true ± std (F_max)": t[PAPER_COLUMNS[1]],
            "BT_true ± std (BT_max)": t[PAPER_COLUMNS[2]],
            "seeds": t[PAPER_COLUMNS[6]],
            "sub-benchmarks": t[PAPER_COLUMNS[5]],
        }
    )


def significance_text(rows: pd.DataFrame) -> str:
    """``9 of 19, all gains`` / ``9 of 19: 3 losses, 6 gains``: the (sub-benchmark, seed) rows flagged
    significant, and which way they moved (a loss: more 1→0 than 0→1 items; a gain: more 0→1)."""
    flagged = rows[rows["significant"].fillna(False).astype(bool)]
    n, total = len(flagged), len(rows)
    losses = int((flagged["n_10"] > flagged["n_01"]).sum())
    gains = n - losses
    if n == 0:
        return f"0 of {total}"
    if losses == 0 or gains == 0:
        return f"{n} of {total}, all {'gains' if losses == 0 else 'losses'}"
    return f"{n} of {total}: {losses} loss{'es' if losses > 1 else ''}, {gains} gain{'s' if gains > 1 else ''}"


def analyses_table(result: PairResult, average: str = "macro") -> pd.DataFrame | None:
    """The terminal's second table, per category: the share of forgetting lost to format, the significant rows
    with their direction, and (macro) the noise floor with F_true and BT_true beyond it; None without analyses."""
    if "significant" not in result.subtasks.columns:
        return None
    order = result.categories.loc[result.categories["average"] == average, "category"].to_numpy()
    extra = terminal_columns(result).reindex(order)
    by_category = {str(c): g for c, g in result.subtasks.groupby("category", observed=True)}
    frame = pd.DataFrame(
        {
            "Category": [category_label(c) for c in order],
            "F lost to format": [pct(v) for v in extra["format"]],
            "significant rows": [
                significance_text(result.subtasks if c == OVERALL else by_category.get(str(c), result.subtasks[:0]))
                for c in order
            ],
        }
    )
    if average == "macro":
        frame["noise floor"] = extra["noise_floor"].fillna("–").to_numpy()
        for metric in ("F", "BT"):  # the interval on a line of its own: narrow columns
            cells = extra[f"{metric}_beyond_noise"].fillna("–").str.replace(" [", "\n[", regex=False)
            frame[f"{metric}_true − floor [CI]"] = cells.to_numpy()
    return frame


ANALYSES_TITLE = "Beyond the paper, % (significant: McNemar, BH q < 0.05; noise floor: the model against itself)"


def rich_table(result: PairResult, average: str = "macro") -> Group:
    """What the terminal shows of a pairing, 100 columns wide: the paper's headline, then the analyses' table,
    then why any figure is raw."""
    from rich.console import Group
    from rich.markup import escape

    label = "macro average, as the paper" if average == "macro" else "micro (item-weighted) average"
    parts: list[Any] = [
        f"before → after: {escape(models_line(result))}",
        frame_rich(
            headline(result, average),
            f"F_true / BT_true, chance-adjusted, % ({label}); in parentheses F_max / BT_max, the share known",
        ),
    ]
    analyses = analyses_table(result, average)
    if analyses is not None:
        parts.append(frame_rich(analyses, ANALYSES_TITLE, whole=("significant rows", "noise floor")))
    if overall := overall_line(result):
        parts.append(escape(overall))
    parts += [escape(line) for line in knowledge_lines(result)]
    why = no_baseline(result.subtasks)
    if why:
        parts.append(why)
    return Group(*parts)


def knowledge_lines(result: PairResult) -> list[str]:
    """The terminal's knowledge split (log-likelihood twins, OVERALL, items x seeds): of the generated answers
    lost, how many the after model still ranks first; of those gained, how many the before model already did."""
    table = result.tables.get("knowledge")
    if table is None or table.empty:
        return []
    r = table[table["level"] == "overall"].iloc[0]

    def line(what: str, of: str, which: str, hit: str, name: str) -> str:
        if not r[of]:
            return f"  generated answers {what}: none"
        ci = f"[{pct(r[f'{name}_lo'])}, {pct(r[f'{name}_hi'])}]"
        return f"  generated answers {what}: {r[of]}; {which} in {r[hit]} ({pct(r[name])} {ci})"

    return [
        "Knowledge, by the log-likelihood twins (all sub-benchmarks with a twin, items × seeds, %):",
        line("lost (1→0)", "n_10", "knowledge kept by the after model", "n_10_kept", "kept_share"),
        line("gained (0→1)", "n_01", "knowledge there before", "n_01_there", "there_before_share"),
    ]


def frame_markdown(frame: pd.DataFrame) -> str:
    return markdown_table(list(map(str, frame.columns)), frame.to_numpy(dtype=object).tolist())


def per_subtask(result: PairResult) -> pd.DataFrame:
    """Mean over seeds per sub-benchmark: items, k, seeds, the four transition counts, rates in %."""
    cols = ["acc_before", "acc_after", "F", "BT", "F_true", "BT_true", "F_max", "BT_max", "F_rel"]
    counts = ["n_11", "n_10", "n_01", "n_00"]
    groups = result.subtasks.groupby(["category", "subtask"], sort=True, observed=True)
    means = groups[[*counts, *cols]].mean()  # one pass over all the averaged columns
    return pd.DataFrame(
        {
            "category": means.index.get_level_values("category"),
            "sub-benchmark": means.index.get_level_values("subtask"),
            "items": groups["n"].max().to_numpy(),
            "k": ["–" if _missing(k) else f"{k:.2f}" for k in groups["k"].first()],
            "seeds": groups["seed"].nunique().to_numpy(),
            **{
                name: [f"{v:.1f}".removesuffix(".0") for v in means[c]]
                for c, name in zip(counts, ("1→1", "1→0", "0→1", "0→0"))
            },
            **{c: [pct(v) for v in means[c]] for c in cols},
        }
    )


def comparison_markdown(result: PairResult, label: str) -> str:
    """The paper's row beside ours, with the difference, and the protocol differences that apply."""
    table = paper.comparison(result, label)
    rows = [
        [
            r.metric,
            category_label(r.category),
            cell_pct(r.ours, r.ours_std, r.ours_ceiling),
            cell_pct(r.paper, r.paper_std, r.paper_ceiling),
            num(r.paper_full),
            signed(r.difference),
        ]
        for r in table.itertuples(index=False)
    ]
    header = ["metric", "category", "this run", f"paper: {label}", "paper, full precision", "difference (pp)"]
    return "\n".join(
        [
            markdown_table(header, rows),
            "",
            "Protocol differences that apply:",
            "",
            *(f"- {d}" for d in paper.differences(result, label)),
        ]
    )


def cell_pct(mean: float, std: float, ceiling: float) -> str:
    """:func:`cell` for figures already in %."""
    return cell(*(None if _missing(v) else v / 100 for v in (mean, std, ceiling)))


def num(x: float) -> str:
    return "–" if _missing(x) else f"{x:.2f}"


def signed(x: float) -> str:
    return "–" if _missing(x) else f"{x:+.1f}"


def extra_tables(result: PairResult) -> list[tuple[str, pd.DataFrame, int]]:
    """The analyses' named tables (``result.tables``), each cut to its first rows, with its full length."""
    return [(name, t.head(EXTRA_TABLE_ROWS), len(t)) for name, t in result.tables.items() if not t.empty]


@dataclass(frozen=True)
class ReportTables:
    """The tables report.md, report.html and paper_table.csv share, computed once per pairing."""

    macro: pd.DataFrame  # paper_table(result, "macro", raw=True)
    micro: pd.DataFrame  # paper_table(result, "micro", raw=True)
    subtasks: pd.DataFrame  # per_subtask(result)
    paper_label: str | None  # paper.paper_pair(result): the paper pair to compare with, if any


def report_tables(result: PairResult) -> ReportTables:
    return ReportTables(
        paper_table(result, "macro", raw=True),
        paper_table(result, "micro", raw=True),
        per_subtask(result),
        paper.paper_pair(result),
    )


def report_markdown(result: PairResult, tables: ReportTables | None = None) -> str:
    """report.md: the paper's table (macro, then micro), the paper comparison, per-sub-benchmark figures,
    the analyses (``analyses_report``) and the problems."""
    t = report_tables(result) if tables is None else tables
    s = result.summary
    totals = s["totals"]
    options = s.get("options") or {}
    models = s.get("models") or {}
    named = {side: f" ({', '.join(models[side])})" if models.get(side) else "" for side in ("before", "after")}
    why = no_baseline(result.subtasks)
    parts = [
        "# Forgetting and backward transfer",
        "",
        f"- before: `{s['inputs']['before']}`{named['before']}",
        f"- after: `{s['inputs']['after']}`{named['after']}",
        f"- {totals['subtasks_paired']} sub-benchmarks, seeds {', '.join(map(str, totals['seeds']))}, "
        f"{totals['items_paired']} item pairs "
        f"({totals['unpaired_before']} before-only, {totals['unpaired_after']} after-only); "
        f"chance k: {options.get('chance_k', 'item')}",
        "",
        LEGEND,
        "",
        "## Macro average (the paper's headline: mean over sub-benchmarks per category, over categories overall)",
        "",
        frame_markdown(t.macro),
        "",
        *([why, ""] if why else []),
        "## Micro average (item-weighted; an extra, not the paper's figure)",
        "",
        frame_markdown(t.micro),
        "",
    ]
    if t.paper_label:
        parts += [f"## Beside the paper: {t.paper_label}", "", comparison_markdown(result, t.paper_label), ""]
    parts += ["## Per sub-benchmark (mean over seeds)", "", frame_markdown(t.subtasks)]
    if not result.agreement.empty:
        parts += [
            "",
            "## Stricter variant: transitions that agree under every seed",
            "",
            markdown_table(
                ["sub-benchmark", "seeds", "items", "agreeing", "F_true", "BT_true"],
                [
                    [r.subtask, r.seeds, str(r.n), str(r.n_agree), pct(r.F_true), pct(r.BT_true)]
                    for r in result.agreement.itertuples(index=False)
                ],
            ),
        ]
    analyses = analyses_markdown(result)
    if analyses:
        parts += ["", analyses.rstrip()]
    parts += ["", "## Problems", ""]
    parts += [f"- {w}" for w in result.warnings] or ["None."]
    if result.notes:
        parts += ["", "## Notes", "", *(f"- {n}" for n in result.notes)]
    return "\n".join(parts) + "\n"
