"""report.html: everything a researcher looks at first, in one self-contained file.

No network and nothing beside it: the figure is an embedded base64 PNG, the style sheet is inline,
there is no script. Sections (each a ``<section id=...>``): summary, paper-table, plots, accuracy,
transitions, items, paper-comparison (when the pair is one the paper measured), analyses (the
analyses' tables, when present), problems, method (the figures in brief: the page links nothing outside itself,
and a pip install ships no docs/ folder). A print style sheet keeps tables whole on paper.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from postforget_lmeval import sources
from postforget_lmeval.analyses import ABOVE_MAX_NOTE
from postforget_lmeval.metrics import OVERALL
from postforget_lmeval.pairing.results import PairResult
from postforget_lmeval.report import paper
from postforget_lmeval.report import paper_table as report
from postforget_lmeval.report.analyses_md import (
    KNOWLEDGE_LEGEND,
    NOISE_LEGEND,
    above_max_rows,
    knowledge_frame,
    noise_frame,
    shared_seed_warning,
)
from postforget_lmeval.report.csv_safe import write_csv
from postforget_lmeval.scoring import option_letter
from postforget_lmeval.sources import LoadedItem

N_ITEMS = 8  # most forgotten / most gained items shown, each read back from its sample log
QUESTION_CHARS = 700

CSS = """
:root { --fg:#1d2330; --muted:#5b6475; --line:#d8dde6; --bad:#b03a2e; --good:#1f618d; --bg:#f7f8fa; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       max-width: 1180px; margin: 0 auto; padding: 18px 22px 40px; }
h1 { font-size: 1.5em; margin: 0 0 .3em; } h2 { font-size: 1.2em; margin: 1.6em 0 .5em;
     border-bottom: 2px solid var(--line); padding-bottom: .2em; }
h3 { font-size: 1.02em; margin: 1.1em 0 .4em; }
p, li { max-width: 72em; } .muted { color: var(--muted); font-size: .92em; }
code { font-size: .9em; background: var(--bg); padding: 0 .25em; border-radius: 3px; word-break: break-all; }
.scroll { overflow-x: auto; }
.scroll table { font-size: .8em; } .scroll th, .scroll td { padding: 2px 5px; }  /* wide tables fit a laptop */
table { border-collapse: collapse; margin: .4em 0 .8em; font-size: .9em; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: right; vertical-align: top; }
th { background: var(--bg); position: sticky; top: 0; }
td:first-child, th:first-child, td.text, th.text { text-align: left; }
tr.total td { font-weight: 600; border-top: 2px solid var(--fg); }
img { max-width: 100%; height: auto; border: 1px solid var(--line); }
.items { display: grid; grid-template-columns: repeat(auto-fill, minmax(330px, 1fr)); gap: 10px; }
.item { border: 1px solid var(--line); border-left: 4px solid var(--bad); padding: 6px 10px; border-radius: 4px;
        break-inside: avoid; }
.item.gained { border-left-color: var(--good); }
.item pre { white-space: pre-wrap; font: .86em/1.35 ui-monospace, Menlo, Consolas, monospace; margin: .3em 0;
            max-height: 14em; overflow: auto; }
.pos { color: var(--bad); } .neg { color: var(--good); }
nav { font-size: .9em; margin: .4em 0 1em; } nav a { margin-right: .8em; }
@media print {
  body { max-width: none; font-size: 10.5pt; padding: 0; } nav { display: none; }
  h2 { break-after: avoid; } table, img, .item { break-inside: avoid; } th { position: static; }
  .item pre { max-height: none; overflow: visible; } .scroll { overflow: visible; }
  .scroll table { font-size: 7.5pt; }
}
"""


PAPER = "arXiv 2510.17776"  # cited, not linked: the page loads and links nothing outside itself
METHOD = (
    ("F, BT", "the share of items right before and wrong after (1→0: forgetting), and wrong before and right "
     "after (0→1: backward transfer), per sub-benchmark and seed, over the items paired on both sides."),
    ("F_chance", "what guessing alone would flip: an item is either known or guessed among its k options, so "
     "F_chance = BT_chance = (1 − acc_before)(1 − acc_after)/(k − 1)."),
    ("F_true, BT_true", "max(F − F_chance, 0) and max(BT − BT_chance, 0): the chance-adjusted figures."),
    ("F_max, BT_max", "the ceilings: max((k·acc_before − 1)/(k − 1), 0), the most that could be forgotten (the "
     "share of items known before), and likewise with acc_after, the most that could be gained."),
    ("raw", "where k is unknown (a generative task with no options to count) there is no chance baseline: the "
     "tables give the raw F and BT; --k N supplies k."),
    ("macro average", "the mean over a category's sub-benchmarks, then over categories for Overall, then over "
     "seeds (± the sample standard deviation); micro weighs every item alike."),
    ("noise floor", "each side's seeds paired with each other as if they were before and after (both directions "
     "averaged): what sampling alone flips; the figure minus its floor is what post-training changed beyond it."),
    ("NFR, NFI, PFR, PFI", "negative and positive flip rate and impact (Yan et al., CVPR 2021): NFR = F, "
     "NFI = n_10/(n_10 + n_00), PFR = BT, PFI = n_01/(n_11 + n_01); raw, no chance correction."),
    ("significant", "an exact McNemar test per sub-benchmark and seed (n_10 against n_01), Benjamini-Hochberg "
     "q < 0.05 over all rows."),
)  # fmt: skip
"""The method in brief, inline: report.html stands alone (a pip install has no docs/ folder to link to)."""
DOC_PAGES = {"docs/method.md": "the Method section of this page"}


def _method() -> str:
    rows = "".join(f"<dt><b>{_e(term)}</b></dt><dd>{_e(text)}</dd>" for term, text in METHOD)
    return (
        "<p>As in Harmon et al., <i>Mapping Post-Training Forgetting in Language Models at Scale</i> (ICLR 2026, "
        f"{PAPER}), §2 and Appendix E.</p><dl>{rows}</dl>"
    )


def _inline_docs(text: str) -> str:
    """A text written for the Markdown report with its links to the package's docs/ pages made references to this
    page (report.html is read where no docs/ folder is, e.g. after a pip install)."""
    for page, here in DOC_PAGES.items():
        text = text.replace(page, here)
    return text


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def table_html(frame: pd.DataFrame, *, total_last: bool = False, text_columns: Sequence[str] = ()) -> str:
    """A DataFrame as an escaped HTML table; the last row bold when it is the overall row."""
    head = "".join(
        f'<th class="text">{_e(c)}</th>' if c in text_columns else f"<th>{_e(c)}</th>" for c in frame.columns
    )
    opening = ['<td class="text">' if c in text_columns else "<td>" for c in frame.columns]
    rows = ["".join(f"{o}{_e(v)}</td>" for o, v in zip(opening, row)) for row in frame.to_numpy(dtype=object)]
    rows = [
        f'<tr class="total">{cells}</tr>' if total_last and i == len(rows) - 1 else f"<tr>{cells}</tr>"
        for i, cells in enumerate(rows)
    ]
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


def _section(sid: str, title: str, body: str) -> str:
    return f'<section id="{sid}"><h2>{_e(title)}</h2>{body}</section>'


def _image(png: bytes | None, alt: str) -> str:
    if png is None:
        return '<p class="muted">No figure (written with --no-plot).</p>'
    return f'<img alt="{_e(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">'


def _page(title: str, sections: list[str], nav: list[tuple[str, str]]) -> str:
    links = "".join(f'<a href="#{sid}">{_e(name)}</a>' for sid, name in nav)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{_e(title)}</h1><nav>{links}</nav>{''.join(sections)}</body></html>\n"
    )


def ranked_items(
    samples: pd.DataFrame, transition: str, n: int = N_ITEMS, strength: np.ndarray | None = None
) -> pd.DataFrame:
    """Items that made ``transition`` under the most seeds/replicates, then (``strength``, per row of ``samples``:
    how far the transition went, e.g. the drop in the gold option's probability) by their mean strength, then by
    sub-benchmark and doc_id; one row each (its first such sample), with ``times`` and ``of`` (samples of that
    item)."""
    if samples.empty:
        return samples.assign(times=[], of=[])
    # integer codes instead of grouping 80k rows by text: sub-benchmarks in groupby order (a categorical's own)
    subtask = pd.factorize(samples["subtask"], sort=True)[0]
    doc = samples["doc_id"].to_numpy()
    hit = np.flatnonzero(
        (samples["transition"] == transition).to_numpy(dtype=bool)
        & (subtask >= 0)
        & samples["doc_id"].notna().to_numpy()
    )
    hit = hit[np.lexsort((doc[hit], subtask[hit]))]  # stable: each item's samples stay in row order
    sub_hit, doc_hit = subtask[hit], doc[hit]
    starts = np.ones(len(hit), dtype=bool)  # where a new item begins
    starts[1:] = (sub_hit[1:] != sub_hit[:-1]) | (doc_hit[1:] != doc_hit[:-1])
    starts = np.flatnonzero(starts)
    times = np.diff(np.r_[starts, len(hit)])
    if strength is None:
        top = np.argsort(-times, kind="stable")[:n]
    else:  # an item without a strength (NaN) after those with one
        mean = np.add.reduceat(np.nan_to_num(strength[hit], nan=-np.inf), starts) / times if len(hit) else times
        top = np.lexsort((-mean, -times))[:n]
    first = hit[starts[top]]
    of = [np.count_nonzero((subtask == subtask[i]) & (doc == doc[i])) for i in first]
    rows = samples.take(first)
    key = ["subtask", "doc_id"]
    return (
        rows[[*key, *(c for c in samples.columns if c not in key)]]
        .assign(times=times[top].astype(np.int64), of=np.array(of, dtype=np.int64))
        .reset_index(drop=True)
    )


def _question(row: Any) -> str:
    """The question and its lettered options, read back from the before run's log by its source."""
    try:
        item = sources.by_name(str(row.source_before)).load_item(str(row.file_before), int(row.locator_before))
    except (OSError, ValueError, KeyError) as e:  # a moved or changed log must not stop the report: say so
        return f"(question not readable from {row.file_before}: {e})"
    text = item_text(item)
    return text if len(text) <= QUESTION_CHARS else "…" + text[-QUESTION_CHARS:]  # the item is at the prompt's end


def item_text(item: LoadedItem) -> str:
    """The question followed by its options lettered as the postforget tasks letter them, unless the question
    (an ordinary task's logged prompt, e.g. lm-eval's MMLU) already lists them so."""
    lettered = [(option_letter(i), o) for i, o in enumerate(item.options)]
    if lettered and all(f"{x}. {o}" in item.question or f"{x}) {o}" in item.question for x, o in lettered):
        return item.question
    return item.question + "".join(f"\n{x}) {o}" for x, o in lettered)


def _answer(value: Any) -> str:
    """An extracted answer; none extracted shows as a dash (the status says why)."""
    return "–" if value is None or (isinstance(value, float) and value != value) else _e(value)


KNOWLEDGE_CARD = {
    "kept": "knowledge kept: the after model still ranks the gold option first",
    "lost": "knowledge lost: the after model no longer ranks the gold option first",
    "there before": "knowledge there before: the before model already ranked the gold option first",
    "not there before": "knowledge not there before: the before model did not rank the gold option first",
}
"""A card's line for the item's knowledge label (samples' ``knowledge``, from its log-likelihood twin)."""


def _item_card(row: Any, transition: str) -> str:
    cls = "item" if transition == "1->0" else "item gained"
    status = lambda s: f" ({_e(s)})" if isinstance(s, str) and s and s != "answered" else ""  # noqa: E731 - a one-line helper beside its only use
    knowledge = KNOWLEDGE_CARD.get(getattr(row, "knowledge", ""), "")
    return (
        f'<div class="{cls}"><b>{_e(row.subtask)}</b> doc_id {_e(row.doc_id)} · '
        f"{transition} under {int(row.times)} of {int(row.of)} seed(s)<pre>{_e(_question(row))}</pre>"
        f"gold <b>{_answer(row.gold)}</b> · before <b>{_answer(row.answer_before)}</b>{status(row.status_before)}"
        f" · after <b>{_answer(row.answer_after)}</b>{status(row.status_after)}"
        + (f'<br><span class="muted">{_e(knowledge)}</span>' if knowledge else "")
        + "</div>"
    )


def gold_drop(result: PairResult) -> np.ndarray | None:
    """Per row of ``result.samples``: the drop in the gold option's probability (drift_items' ``-dp_gold``), for
    log-likelihood multiple-choice runs; None where no item logs the options' log-likelihoods."""
    drift = result.tables.get("drift_items")
    if drift is None or drift.empty or "dp_gold" not in drift:
        return None
    key = ["subtask", "seed", "doc_id"]
    per_item = drift.astype({"subtask": str, "seed": str}).groupby(key)["dp_gold"].mean()
    rows = pd.MultiIndex.from_frame(result.samples[key].astype({"subtask": str, "seed": str}))
    return -per_item.reindex(rows).to_numpy(dtype=float)


def _items(result: PairResult) -> str:
    parts = []
    drop = gold_drop(result)
    for transition, title in (("1->0", "Most forgotten (1→0)"), ("0->1", "Most gained (0→1)")):
        strength = None if drop is None else (drop if transition == "1->0" else -drop)
        ranked = ranked_items(result.samples, transition, strength=strength)
        cards = "".join(_item_card(r, transition) for r in ranked.itertuples(index=False))
        parts.append(f"<h3>{title}</h3>" + (f'<div class="items">{cards}</div>' if cards else "<p>None.</p>"))
    then = (
        ", then by how far the gold option's probability fell (forgotten) or rose (gained)" if drop is not None else ""
    )
    return (
        f'<p class="muted">Items ranked by how many seeds made the transition{then}; the question is read back '
        "from the before run's sample log. <code>postforget-pair show OUT_DIR --subtask NAME</code> lists all "
        "of them.</p>" + "".join(parts)
    )


def _accuracy(result: PairResult) -> pd.DataFrame:
    cats = result.categories[result.categories["average"] == "macro"]
    return pd.DataFrame(
        {
            "Category": [report.category_label(c) for c in cats["category"]],
            "acc before": [report.cell(m, s, None) for m, s in zip(cats["acc_before_mean"], cats["acc_before_std"])],
            "acc after": [report.cell(m, s, None) for m, s in zip(cats["acc_after_mean"], cats["acc_after_std"])],
            "change": [report.signed(100 * (a - b)) for a, b in zip(cats["acc_after_mean"], cats["acc_before_mean"])],
        }
    )


def _comparison(result: PairResult, label: str) -> str:
    table = paper.comparison(result, label)
    frame = pd.DataFrame(
        {
            "metric": table["metric"],
            "category": [report.category_label(c) for c in table["category"]],
            "this run": [report.cell_pct(*v) for v in zip(table["ours"], table["ours_std"], table["ours_ceiling"])],
            "paper": [report.cell_pct(*v) for v in zip(table["paper"], table["paper_std"], table["paper_ceiling"])],
            "paper, full precision": [report.num(v) for v in table["paper_full"]],
            "difference (pp)": [report.signed(v) for v in table["difference"]],
        }
    )
    named = "named with --paper-pair" if result.summary.get("paper_pair") else "recognised from the model names"
    diffs = "".join(f"<li>{_e(d)}</li>" for d in paper.differences(result, label) if paper.DIFFERENCES_DOC not in d)
    return (
        f"<p>The paper's row for <b>{_e(label)}</b> ({named}), Appendix E, beside this run; difference = this run "
        f"minus the paper (its table cell, else its full-precision value), in percentage points, printed only on equal "
        "footing (the list below says which categories were compared and why not the others).</p>"
        f"{table_html(frame, text_columns=('metric', 'category'))}"
        f"<h3>Protocol differences that apply</h3><ul>{diffs}</ul>"
    )


def _rounded(frame: pd.DataFrame) -> pd.DataFrame:
    """Floats to 4 significant digits (p-values stay readable), missing values as a dash."""
    out = frame.copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c]):
            out[c] = ["–" if v != v else f"{v:.4g}" for v in out[c]]
    return out


def _problems(result: PairResult) -> str:
    warnings = "".join(f"<li>{_e(w)}</li>" for w in result.warnings) or "<li>None.</li>"
    notes = "".join(f"<li>{_e(n)}</li>" for n in result.notes) or "<li>None.</li>"
    return f"<h3>Problems ({len(result.warnings)})</h3><ul>{warnings}</ul><h3>Notes</h3><ul>{notes}</ul>"


def render(result: PairResult, png: bytes | None, tables: report.ReportTables | None = None) -> str:
    """The whole report.html of one pairing."""
    t = report.report_tables(result) if tables is None else tables
    s = result.summary
    totals = s["totals"]
    label = s.get("pair_label") or "Forgetting and backward transfer"
    models = s.get("models") or {}
    named = {side: f" · {_e(', '.join(models[side]))}" if models.get(side) else "" for side in ("before", "after")}
    intro = (
        f"<p>before: <code>{_e(s['inputs']['before'])}</code>{named['before']}<br>"
        f"after: <code>{_e(s['inputs']['after'])}</code>{named['after']}</p>"
        f"<p>{totals['subtasks_paired']} sub-benchmarks · seeds {_e(', '.join(map(str, totals['seeds'])))} · "
        f"{totals['items_paired']} item pairs ({totals['unpaired_before']} before-only, "
        f"{totals['unpaired_after']} after-only) · chance k: {_e((s.get('options') or {}).get('chance_k', 'item'))}"
        f'</p><p class="muted">{_e(report.LEGEND)}</p>'
    )
    sections = [
        ("summary", "Run", intro),
        (
            "paper-table",
            "Paper-shaped table (macro)",
            table_html(t.macro, total_last=True)
            + "".join(f'<p class="muted">{_e(why)}</p>' for why in [report.no_baseline(result.subtasks)] if why)
            + "<h3>Micro average (item-weighted; an extra, not the paper's figure)</h3>"
            + table_html(t.micro, total_last=True),
        ),
        (
            "plots",
            "Per category: F_true and BT_true, F_max / BT_max marked",
            _image(png, "F_true and BT_true per category"),
        ),
        (
            "accuracy",
            "Accuracy before and after (macro, % ± std across seeds)",
            table_html(_accuracy(result), total_last=True),
        ),
        (
            "transitions",
            "Transitions per sub-benchmark (mean counts over seeds; rates in %)",
            table_html(t.subtasks, text_columns=("category", "sub-benchmark")),
        ),
        ("items", "Most forgotten and most gained items", _items(result)),
    ]
    if t.paper_label:
        sections.append(("paper-comparison", f"Beside the paper: {t.paper_label}", _comparison(result, t.paper_label)))
    noise = noise_frame(result)
    if not noise.empty:
        sections.append(
            (
                "noise-floor",
                "Forgetting or sampling: the noise floor and the flips (macro, %)",
                f'<p class="muted">{_e(_inline_docs(NOISE_LEGEND))}</p>'
                + (f"<p><strong>⚠ {_e(shared)}</strong></p>" if (shared := shared_seed_warning(result)) else "")
                + table_html(noise, total_last=True, text_columns=noise.columns),
            )
        )
    above = above_max_rows(result)
    if above:
        items = "".join(f"<li>{_e(line)}</li>" for line in above)
        body = f'<p class="muted">{_e(ABOVE_MAX_NOTE)}.</p><ul>{items}</ul>'
        sections.append(("above-max", "Rows above F_max / BT_max", body))
    knowledge = knowledge_frame(result)
    if not knowledge.empty:
        sections.append(
            (
                "knowledge",
                "Knowledge or format: the log-likelihood twins",
                f'<p class="muted">{_e(KNOWLEDGE_LEGEND)}</p>'
                + table_html(knowledge, total_last=True, text_columns=knowledge.columns),
            )
        )
    extra = report.extra_tables(result)
    if extra:
        body = "".join(
            f"<h3>{_e(name)}</h3>"
            + (f'<p class="muted">First {len(t)} of {total} rows; all in {_e(name)}.csv.</p>' if total > len(t) else "")
            + table_html(_rounded(t), text_columns=[c for c in t.columns if not pd.api.types.is_numeric_dtype(t[c])])
            for name, t, total in extra
        )
        sections.append(("analyses", "Analyses", body))
    sections.append(("problems", "Problems and notes", _problems(result)))
    sections.append(("method", "Method", _method()))
    nav = [(sid, title.split(":")[0].split("(")[0].strip()) for sid, title, _ in sections]
    return _page(label, [_section(*sec) for sec in sections], nav)


def pairs_html(
    wide: pd.DataFrame,
    long: pd.DataFrame,
    png: bytes | None,
    directories: dict[str, str],
    why: str | None = None,
    names: Sequence[str] = (),
) -> str:
    """pairs.html: the pairs' models, the table across pairs (one column per pair; ``why`` some cells are raw), the
    figure, links to each pair's report."""
    blocks = [f"<ul>{''.join(f'<li>{_e(n)}</li>' for n in names)}</ul>" if names else ""]
    for metric, title in report.METRIC_TITLES.items():
        block = wide[wide["metric"] == metric].drop(columns="metric")
        blocks.append(f"<h3>{_e(title)}</h3>{table_html(block, total_last=True)}")
    if why:
        blocks.append(f'<p class="muted">{_e(why)}</p>')
    acc = long[(long["metric"] == "F_true") & (long["category"] == OVERALL) & long["pair"].isin(directories)]
    links = "".join(
        f"<li><b>{_e(r.pair)}</b>: accuracy {report.pct(r.acc_before)} → {report.pct(r.acc_after)} · "
        f'<a href="{_e(directories.get(r.pair, ""))}/report.html">report.html</a></li>'
        for r in acc.itertuples(index=False)
    )
    sections = [
        _section(
            "pairs-table",
            "Forgetting and backward transfer across pairs",
            f'<p class="muted">{_e(report.LEGEND)}</p>' + "".join(blocks),
        ),
        _section("plots", "Per category, one bar per pair", _image(png, "F_true and BT_true per category and pair")),
        _section("pairs", "Pairs (macro accuracy, before → after)", f"<ul>{links}</ul>"),
    ]
    return _page(
        "Forgetting across pairs", sections, [("pairs-table", "Table"), ("plots", "Figure"), ("pairs", "Pairs")]
    )


MAX_CURVE_ITEMS = 200
"""Rows of the first-forgotten table shown in curve.html (items.csv has them all)."""


def curve_html(
    curve: pd.DataFrame, items: pd.DataFrame, png: bytes | None, steps: Sequence[int], notes: Sequence[str] = ()
) -> str:
    """curve.html: forgetting over steps (figure and table against the first run), then the items ever forgotten
    with the step each was first forgotten, whether it came back, how often it flipped and whether it is a steady
    loss; ``notes`` (the steady-loss counts, warnings) above them."""
    first = curve[curve["against"] == "first"]
    table = pd.DataFrame(
        {
            "step": first["step"],
            "category": [report.category_label(c) for c in first["category"]],
            "accuracy": [report.pct(a) for a in first["acc_after"]],
            "F_true (F_max)": [
                report.cell(m, s, c) for m, s, c in zip(first["F_true"], first["F_true_std"], first["F_max"])
            ],
            "BT_true (BT_max)": [
                report.cell(m, s, c) for m, s, c in zip(first["BT_true"], first["BT_true_std"], first["BT_max"])
            ],
        }
    )
    lost = items[items["first_forgotten"].notna()]
    shown = lost.drop(columns=["first_gained"]).head(MAX_CURVE_ITEMS)
    summary = (
        f"{int((lost['flips'] > 1).sum())} of the {len(lost)} items forgotten at some step flipped more than once "
        "(noise or a boundary case rather than steady forgetting). "
        + (f"The first {MAX_CURVE_ITEMS} are shown; every" if len(lost) > MAX_CURVE_ITEMS else "Every")
        + " item is in items.csv."
    )
    paragraphs = "".join(f"<p>{_e(n)}</p>" for n in [*notes, summary])
    sections = [
        _section("curve-plot", "Forgetting over steps", _image(png, "F_true and BT_true over steps per category")),
        _section(
            "curve-table",
            f"Against the first run (step {steps[0]}), macro per category",
            f'<p class="muted">{_e(report.LEGEND)}</p>' + table_html(table),
        ),
        _section("first-forgotten", "Items forgotten at some step", paragraphs + table_html(shown)),
    ]
    nav = [("curve-plot", "Figure"), ("curve-table", "Table"), ("first-forgotten", "Items")]
    return _page("Forgetting over steps", sections, nav)


def renderers(result: PairResult, plot: bool = True) -> dict[str, Callable[[Path], None]]:
    """File name -> writer for every report file of one pairing; ``outputs.write_outputs`` writes them."""
    image = None
    if plot:  # plots (and matplotlib) only when a figure is drawn
        from postforget_lmeval.report import plots

        image = plots.categories_png(result)
    tables = report.report_tables(result)
    files: dict[str, Callable[[Path], None]] = {
        "paper_table.csv": lambda p: write_csv(report.paper_table(result, "macro"), p),  # "–" where undefined
        "report.md": lambda p: p.write_text(report.report_markdown(result, tables), encoding="utf-8"),
        "report.html": lambda p: p.write_text(render(result, image, tables), encoding="utf-8"),
    }
    if image is not None:
        files["forgetting.png"] = lambda p: p.write_bytes(image)
    return files
