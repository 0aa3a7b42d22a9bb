"""Forgetting over steps: runs of one model at successive steps (probes taken while it trains, or saved
checkpoints evaluated later), each paired with the first run and with the one before it.

The chain of pairs is :func:`postforget_lmeval.report.many.chain` written by ``run_pairs`` (what
``postforget-pair chain`` writes). From it come ``curve.csv`` (F_true, BT_true, their ceilings and
accuracy per category and step), ``curve.png``, ``items.csv`` (per item and seed: the step at which it
was first forgotten, whether it came back, how often it flipped) and ``curve.html``. An item that flips
back and forth between probes is noise or a boundary case rather than steady forgetting; the flip count shows which.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from postforget_lmeval.pairing.options import PairOptions
from postforget_lmeval.pairing.results import PairingError, PairResult
from postforget_lmeval.report import html as report_html
from postforget_lmeval.report import many
from postforget_lmeval.report.csv_safe import write_csv
from postforget_lmeval.report.files import atomic_write
from postforget_lmeval.report.paper_table import category_label, category_order

ITEM_KEY = ["subtask", "category", "doc_id", "seed", "replicate"]
"""One item of the first-forgotten table: an item under one seed label and replicate."""
CURVE_COLUMNS = [
    "step", "against", "category", "acc_before", "acc_after", "F_true", "F_true_std", "F_max",
    "BT_true", "BT_true_std", "BT_max", "n_seeds",
]  # fmt: skip
"""curve.csv: one row per step, reference ('first' or 'previous') and category (macro over sub-benchmarks)."""


@dataclass
class Curve:
    """The curve report of one chain of runs: what ``write_curve`` writes, as tables."""

    steps: list[int]
    curve: pd.DataFrame  # CURVE_COLUMNS
    items: pd.DataFrame  # ITEM_KEY, then one column per step (1/0), then the item summary
    results: dict[str, PairResult]  # chain label -> pairing


def step_of(path: str | os.PathLike[str]) -> int | None:
    """The step a run directory's name ends with (``step_0100``, ``checkpoint-500``), or None."""
    found = re.search(r"(\d+)$", Path(path).name)
    return int(found.group(1)) if found else None


def in_step_order(
    dirs: Sequence[str | os.PathLike[str]], steps: Sequence[int] | None = None
) -> tuple[list[str], list[int]]:
    """The runs and their steps, first run first. Without ``steps``, each directory name must end with its step
    (``step_0100``, ``checkpoint-500``) and the runs are put in step order (a shell glob sorts 1000 before 500);
    given steps must increase along ``dirs``."""
    runs = [str(d) for d in dirs]
    if steps is None:
        found = [step_of(d) for d in runs]
        missing = [d for d, s in zip(runs, found) if s is None]
        if missing:
            raise PairingError(
                f"no step number at the end of {', '.join(missing)}: name the runs step_<N> or checkpoint-<N>, "
                "or give the steps (--steps 0,100,200)"
            )
        pairs = sorted(zip(found, runs))
        steps, runs = [s for s, _ in pairs], [d for _, d in pairs]
    if len(steps) != len(runs):
        raise PairingError(f"{len(steps)} steps for {len(runs)} run directories: give one step per directory")
    if any(b <= a for a, b in zip(steps, steps[1:])):
        raise PairingError(
            f"the steps must increase along the chain (one run per step), got {', '.join(map(str, steps))}"
        )
    return runs, list(steps)


def _rows(step: int, against: str, result: PairResult) -> list[dict]:
    cats = result.categories[result.categories["average"] == "macro"]
    return [
        {
            "step": step,
            "against": against,
            "category": r.category,
            "acc_before": r.acc_before_mean,
            "acc_after": r.acc_after_mean,
            "F_true": r.F_true_mean,
            "F_true_std": r.F_true_std,
            "F_max": r.F_max_mean,
            "BT_true": r.BT_true_mean,
            "BT_true_std": r.BT_true_std,
            "BT_max": r.BT_max_mean,
            "n_seeds": int(r.n_seeds),
        }
        for r in cats.itertuples(index=False)
    ]


def curve_table(steps: Sequence[int], first: Sequence[PairResult], previous: Sequence[PairResult]) -> pd.DataFrame:
    """curve.csv from the pairs of each later run with the first run and with the run before it."""
    rows = []
    for step, to_first, to_previous in zip(steps[1:], first, previous):
        rows += _rows(step, "first", to_first) + _rows(step, "previous", to_previous)
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def item_table(steps: Sequence[int], first: Sequence[PairResult]) -> pd.DataFrame:
    """Per item: right (1) or wrong (0) at every step, then ``first_forgotten`` (the first step at which it is
    wrong after being right at the step before), ``came_back`` (right again at a later step), ``flips`` (changes
    between consecutive steps) and ``first_gained`` (the first step at which it is right after being wrong)."""
    names = [str(s) for s in steps]
    table = first[0].samples[ITEM_KEY + ["before"]].rename(columns={"before": names[0]})
    for name, result in zip(names[1:], first):
        after = result.samples[ITEM_KEY + ["after"]].rename(columns={"after": name})
        table = table.merge(after, on=ITEM_KEY, how="outer", validate="one_to_one")
    values = table[names].to_numpy(dtype=float)
    forgotten, came_back, flips, gained = [], [], [], []
    for row in values:
        known = [(s, v) for s, v in zip(steps, row) if v == v]  # NaN: the item is missing at that step
        lost = [s for (_, a), (s, b) in zip(known, known[1:]) if a == 1 and b == 0]
        won = [s for (_, a), (s, b) in zip(known, known[1:]) if a == 0 and b == 1]
        forgotten.append(lost[0] if lost else pd.NA)
        came_back.append(bool(lost) and any(v == 1 for s, v in known if s > lost[0]))
        flips.append(len(lost) + len(won))
        gained.append(won[0] if won else pd.NA)
    table[names] = table[names].astype("Int8")
    table["first_forgotten"] = pd.array(forgotten, dtype="Int64")
    table["came_back"] = came_back
    table["flips"] = flips
    table["first_gained"] = pd.array(gained, dtype="Int64")
    return table.sort_values(["first_forgotten", *ITEM_KEY], na_position="last", ignore_index=True)


def curve_png(curve: pd.DataFrame) -> bytes:
    """F_true and BT_true against the first run over steps, one panel per category, ceilings dashed (in %)."""
    from matplotlib.figure import Figure

    from postforget_lmeval.report.plots import _png

    data = curve[curve["against"] == "first"]
    cats = category_order(data["category"])
    cols = min(3, len(cats))
    rows = -(-len(cats) // cols)
    fig = Figure(figsize=(4.2 * cols, 3.0 * rows), layout="constrained")
    for i, cat in enumerate(cats):
        ax = fig.add_subplot(rows, cols, i + 1)
        part = data[data["category"] == cat]
        for metric, ceiling, color in (("F_true", "F_max", "tab:red"), ("BT_true", "BT_max", "tab:blue")):
            ax.plot(part["step"], 100 * part[metric], marker="o", color=color, label=metric)
            ax.plot(part["step"], 100 * part[ceiling], linestyle="--", color=color, label=ceiling)
        ax.set_title(category_label(cat))
        ax.set_xlabel("step")
        ax.set_ylabel("% of items")
        ax.grid(alpha=0.3)
        if i == 0:
            ax.legend(fontsize=7)
    return _png(fig)


def _pairs(dirs: Sequence[str], results: dict[str, PairResult]) -> tuple[list[PairResult], list[PairResult]]:
    """The chain's pairs of each later run with the first and with the previous run, in step order."""
    by_runs = {(s.before, s.after): results[s.label] for s in many.chain(dirs)}
    first = [by_runs[(dirs[0], d)] for d in dirs[1:]]
    previous = [by_runs[(a, b)] for a, b in zip(dirs, dirs[1:])]
    return first, previous


def write_curve(
    dirs: Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    steps: Sequence[int] | None = None,
    options: PairOptions | None = None,
    *,
    plot: bool = True,
    **overrides,
) -> tuple[Curve, list[Path]]:
    """Pair the chain of runs ``dirs`` (``out/chain/``, as ``postforget-pair chain`` writes it), then write
    curve.csv, items.csv, curve.png and curve.html in ``out``."""
    runs, steps = in_step_order(dirs, steps)
    out = Path(out_dir)
    results, written = many.run_pairs(many.chain(runs), out / "chain", options, plot=plot, **overrides)
    first, previous = _pairs(runs, results)
    curve = Curve(steps, curve_table(steps, first, previous), item_table(steps, first), results)
    image = curve_png(curve.curve) if plot else None
    page = report_html.curve_html(curve.curve, curve.items, image, steps)
    written += [
        atomic_write(out / "curve.csv", lambda p: write_csv(curve.curve, p)),
        atomic_write(out / "items.csv", lambda p: write_csv(curve.items, p)),
        atomic_write(out / "curve.html", lambda p: p.write_text(page, encoding="utf-8")),
    ]
    if image is not None:
        written.append(atomic_write(out / "curve.png", lambda p: p.write_bytes(image)))
    return curve, written
