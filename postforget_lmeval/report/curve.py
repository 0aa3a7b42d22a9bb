"""Forgetting over steps: runs of one model at successive steps (probes taken while it trains, or saved
checkpoints evaluated later), each paired with the first run and with the one before it.

The chain of pairs is :func:`postforget_lmeval.report.many.chain` written by ``run_pairs`` (what
``postforget-pair chain`` writes). From it come ``curve.csv`` (F_true, BT_true, their ceilings and
accuracy per category and step), ``curve.png``, ``items.csv`` (per item of the first run, followed along the
chain: the step at which it was first forgotten, whether it came back, how often it flipped, whether it is a
steady loss) and ``curve.html``.

Each probe is one draw: a model that does not change at all still loses sampled items between probes, and
some stay wrong for a few probes by chance. So an item is called a steady loss only when it stays wrong over
:data:`STEADY_AFTER` probes after its last loss, a loss too near the last probe is undetermined, and where the
first run logged two seeds the count of steady losses expected with no change at all is given beside the
observed one (:func:`steady_losses`, docs/training.md).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import special

from postforget_lmeval.pairing.options import PairOptions
from postforget_lmeval.pairing.results import PairingError, PairResult
from postforget_lmeval.report import html as report_html
from postforget_lmeval.report import many
from postforget_lmeval.report.csv_safe import write_csv
from postforget_lmeval.report.files import atomic_write, moved, output_folder
from postforget_lmeval.report.paper_table import category_label, category_order

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ITEM_KEY = ["subtask", "category", "doc_id", "seed", "replicate"]
"""One row of the item table: an item of a sub-benchmark as the first run logged it under its seed ``seed`` (and
replicate), followed through the later runs under whatever seed each was paired with it (its place in the
chain, not the pairs' seed labels, which differ from pair to pair when the runs' seeds do)."""
STEADY_AFTER = 2
"""A steady loss: wrong at the probe where it was last lost and at every later probe, at least this many."""
CURVE_COLUMNS = [
    "step", "against", "category", "acc_before", "acc_after", "F_true", "F_true_std", "F_max",
    "BT_true", "BT_true_std", "BT_max", "n_seeds",
]  # fmt: skip
"""curve.csv: one row per step, reference ('first' or 'previous') and category (macro over sub-benchmarks)."""
STEP_NAME = re.compile(r"(?:^|(?:step|checkpoint)[-_]?)([-+]?[0-9]+)$", re.IGNORECASE)
"""A run folder's name ends in ``step_<N>``, ``step-<N>``, ``step<N>``, ``checkpoint-<N>`` (or ``_``), or is ``<N>``
alone; ``N`` is a whole number with an optional sign (``step_-1`` is -1). Nothing else is read as a step."""


@dataclass
class SteadyLosses:
    """The items table's losses, summed: ``steady`` items stayed wrong over ``hold`` probes after their last loss,
    ``undetermined`` ones were lost too near the last probe to tell; ``expected`` steady losses with no change at
    all (None without two seeds at the first step: each probe is one seed, and there is no floor)."""

    hold: int
    forgotten: int
    came_back: int
    steady: int
    undetermined: int
    expected: float | None
    floor_items: int  # items whose sub-benchmark has two seeds at the first step (what ``expected`` counts)
    items: int

    def sentence(self) -> str:
        """What the counts mean, in one line for the terminal and curve.html."""
        floor = (
            f"with no change at all {self.expected:.1f} would be expected by chance (a beta-binomial fit to the "
            f"first step's seeds, over {self.floor_items} of {self.items} items)"
            if self.expected is not None
            else "each probe is one seed, so there is no noise floor to compare with (evaluate every step under "
            "the same two seeds to get one)"
        )
        return (
            f"{self.forgotten} of {self.items} items forgotten at some step, {self.came_back} came back later; "
            f"{self.steady} steady losses (wrong at their last loss and the {self.hold} or more probes after it), "
            f"{self.undetermined} undetermined (lost too near the last probe); {floor}"
        )


@dataclass
class Curve:
    """The curve report of one chain of runs: what ``write_curve`` writes, as tables."""

    steps: list[int]
    curve: pd.DataFrame  # CURVE_COLUMNS
    items: pd.DataFrame  # ITEM_KEY, then one column per step (1/0), then the item summary
    results: dict[str, PairResult]  # chain label -> pairing
    chain: list[many.PairSpec]  # the pairs, each written in chain/<its directory>
    steady: SteadyLosses
    warnings: list[str]  # what the pairs' own warnings do not say: OVERALL averaging other sub-benchmarks per step


def step_of(path: str | os.PathLike[str]) -> int | None:
    """The step a run folder's name gives (:data:`STEP_NAME`), or None."""
    found = STEP_NAME.search(Path(path).name)
    return int(found.group(1)) if found else None


def in_step_order(
    dirs: Sequence[str | os.PathLike[str]], steps: Sequence[int] | None = None
) -> tuple[list[str], list[int]]:
    """The runs and their steps, first run first. Without ``steps``, each folder name must give its step
    (:data:`STEP_NAME`) and the runs are put in step order (a shell glob sorts 1000 before 500); given steps must
    increase along ``dirs``."""
    runs = [str(d) for d in dirs]
    if steps is None:
        found = [step_of(d) for d in runs]
        missing = [d for d, s in zip(runs, found) if s is None]
        if missing:
            raise PairingError(
                f"cannot read a step from the name of {', '.join(missing)}: a run folder's name must end in "
                "step_<N> or checkpoint-<N>, or be <N>, with N a whole number (step_0100, checkpoint-500, step_-1); "
                "otherwise give every run's step in order with --steps (e.g. --steps 0,100,200)"
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


def _followed(result: PairResult, column: str, name: str) -> pd.DataFrame:
    """One side of a pair with the first run, keyed by the item under the first run's seed (:data:`ITEM_KEY`)."""
    keyed = result.samples.drop(columns="seed").rename(columns={"seed_before": "seed", column: name})
    return keyed[[*ITEM_KEY, name]].astype({"seed": str})


def item_table(steps: Sequence[int], first: Sequence[PairResult], hold: int = STEADY_AFTER) -> pd.DataFrame:
    """Per item (:data:`ITEM_KEY`): right (1) or wrong (0) at every step (missing where it was not logged), then
    ``first_forgotten`` (the first step at which it is wrong after being right at the probe before),
    ``came_back`` (right at a later probe; missing when nothing was observed after the loss, i.e. lost at its last
    probe), ``flips`` (changes between consecutive probes), ``first_gained`` (the first step at which it is right
    after being wrong), ``steady_loss`` (wrong at the probe where it was last lost and at every later probe, at
    least ``hold`` of them) and ``undetermined`` (wrong since its last loss, with fewer than ``hold`` probes
    after it: too near the end to tell)."""
    names = [str(s) for s in steps]
    start = pd.concat([_followed(r, "before", names[0]) for r in first]).drop_duplicates(ITEM_KEY)
    table = start
    for name, result in zip(names[1:], first):
        table = table.merge(_followed(result, "after", name), on=ITEM_KEY, how="outer")  # each pair: one row per item
    columns: dict[str, list] = {c: [] for c in ("first_forgotten", "came_back", "flips", "first_gained")}
    steady, undetermined = [], []
    for row in table[names].to_numpy(dtype=float):
        known = [(s, v) for s, v in zip(steps, row) if v == v]  # NaN: the item is missing at that step
        lost = [s for (_, a), (s, b) in zip(known, known[1:]) if a == 1 and b == 0]
        won = [s for (_, a), (s, b) in zip(known, known[1:]) if a == 0 and b == 1]
        after_first = [v for s, v in known if lost and s > lost[0]]
        after_last = [v for s, v in known if lost and s > lost[-1]]
        columns["first_forgotten"].append(lost[0] if lost else pd.NA)
        columns["came_back"].append((1 in after_first) if after_first or not lost else pd.NA)
        columns["flips"].append(len(lost) + len(won))
        columns["first_gained"].append(won[0] if won else pd.NA)
        wrong_since = bool(lost) and 1 not in after_last
        steady.append(wrong_since and len(after_last) >= hold)
        undetermined.append(wrong_since and len(after_last) < hold)
    table[names] = table[names].astype("Int8")
    table["first_forgotten"] = pd.array(columns["first_forgotten"], dtype="Int64")
    table["came_back"] = pd.array(columns["came_back"], dtype="boolean")
    table["flips"] = columns["flips"]
    table["first_gained"] = pd.array(columns["first_gained"], dtype="Int64")
    table["steady_loss"] = steady
    table["undetermined"] = undetermined
    return table.sort_values(["first_forgotten", *ITEM_KEY], ignore_index=True)  # never forgotten (missing) last


def beta_fit(seeds: pd.DataFrame) -> tuple[float, float] | None:
    """The beta distribution of the items' chance of being right, by the method of moments from several seeds of
    one run (``seeds``: one row per item, one column per seed, 1/0, NaN where not logged): the mean, and the
    share right under two seeds at once, as ``(mean, intra-item correlation)``: 0 when the items do not differ
    (one chance for all), 1 when each is always right or always wrong; None without an item logged under two
    seeds."""
    x = seeds.to_numpy(dtype=float)
    m = (~np.isnan(x)).sum(axis=1)
    x, m = x[m >= 2], m[m >= 2]
    if not len(x):
        return None
    right = np.nansum(x, axis=1)
    mean = right.sum() / m.sum()
    both = np.mean(right * (right - 1) / (m * (m - 1)))  # the share of seed pairs both right, per item
    spread = (both - mean**2) / (mean * (1 - mean)) if 0 < mean < 1 else 1.0  # intra-item correlation
    return mean, min(max(spread, 0.0), 1.0)


def steady_chance(fit: tuple[float, float], probes: int, hold: int = STEADY_AFTER) -> float:
    """The chance that an unchanged model's item, observed at ``probes`` independent probes, is a steady loss: its
    last right probe followed by at least ``hold + 1`` wrong ones, i.e. E[p (1-p)^r] summed over r = hold+1 ..
    probes-1 with p ~ Beta (``fit`` from :func:`beta_fit`: mean, intra-item correlation)."""
    mean, spread = fit
    runs = np.arange(hold + 1, probes)
    if not len(runs) or spread >= 1:
        return 0.0
    if spread == 0:
        return float(np.sum(mean * (1 - mean) ** runs))
    size = 1 / spread - 1
    a, b = mean * size, (1 - mean) * size
    return float(np.sum(np.exp(special.betaln(a + 1, b + runs) - special.betaln(a, b))))


def steady_losses(
    items: pd.DataFrame, names: Sequence[str], seeds: pd.DataFrame | None, hold: int = STEADY_AFTER
) -> SteadyLosses:
    """The item table's losses summed, and the steady losses expected with no change, from the first step's seeds
    (``seeds``: :func:`first_step`) where a sub-benchmark has two."""
    expected, floor_items = None, 0
    if seeds is not None:
        probes = items[list(names)].notna().sum(axis=1)
        for subtask, part in seeds.groupby("subtask", observed=True):
            wide = part.pivot_table(index=["doc_id", "replicate"], columns="seed_before", values="before")
            fit = beta_fit(wide)  # None unless an item has two seeds
            if fit is None:
                continue
            counted = probes[items["subtask"] == subtask]
            floor_items += len(counted)
            expected = (expected or 0.0) + sum(steady_chance(fit, int(n), hold) for n in counted)
    lost = items["first_forgotten"].notna()
    return SteadyLosses(
        hold=hold,
        forgotten=int(lost.sum()),
        came_back=int(items["came_back"][lost].sum()),  # a loss at the last probe (missing) is not counted
        steady=int(items["steady_loss"].sum()),
        undetermined=int(items["undetermined"].sum()),
        expected=expected,
        floor_items=floor_items,
        items=len(items),
    )


def first_step(first: Sequence[PairResult]) -> pd.DataFrame:
    """The first run's items under every seed a pair of the chain used (one row per item and seed)."""
    key = ["subtask", "doc_id", "replicate", "seed_before"]
    return pd.concat([r.samples[[*key, "before"]] for r in first]).drop_duplicates(key, ignore_index=True)


def unused_seeds(first: Sequence[PairResult]) -> list[str]:
    """Seeds the first run logged that no pair of the chain used (they cannot give it a noise floor)."""
    used = set(first_step(first)["seed_before"])  # the same labels as seed matching's unmatched_before
    left = {s for r in first for plan in r.summary["seed_matching"].values() for s in plan["unmatched_before"]}
    return sorted(left - used)


def subtask_warnings(steps: Sequence[int], first: Sequence[PairResult]) -> list[str]:
    """A warning when the steps hold different sub-benchmarks: the categories and OVERALL then average other
    sub-benchmarks from one step to the next, and a change in them can be a change of what is averaged."""
    held = [set(r.subtasks["subtask"]) for r in first]
    every = set().union(*held)
    short = [(s, sorted(every - h)) for s, h in zip(steps[1:], held) if every - h]
    if not short:
        return []
    which = "; ".join(f"step {s} lacks {', '.join(m[:5])}{' ...' if len(m) > 5 else ''}" for s, m in short)
    return [
        f"the steps are paired over different sub-benchmarks ({which}): the categories and OVERALL average other "
        "sub-benchmarks from one step to the next; evaluate every step on the same tasks (the pairs' reports in "
        "chain/ list what each lacks)"
    ]


def curve_figure(curve: pd.DataFrame) -> Figure:
    """F_true and BT_true against the first run over steps, one panel per category, ceilings dashed (in %)."""
    from matplotlib.figure import Figure

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
    return fig


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
    hold: int = STEADY_AFTER,
    **overrides,
) -> tuple[Curve, list[Path]]:
    """Pair the chain of runs ``dirs`` (``out/chain/``, as ``postforget-pair chain`` writes it), then write
    curve.csv, items.csv, curve.png (``plot``; an earlier one is removed otherwise) and curve.html in ``out``, a
    folder that may hold other files (the training probes' runs). :func:`write_curve_folder` gives the curve a
    folder of its own, replaced whole."""
    if hold < 0:
        raise PairingError(f"a steady loss is wrong over 0 or more later probes, not {hold}")
    runs, steps = in_step_order(dirs, steps)
    out = Path(out_dir)
    specs = many.chain(runs)
    results, written, _ = many.run_pairs(specs, out / "chain", options, plot=plot, **overrides)
    first, previous = _pairs(runs, results)
    items = item_table(steps, first, hold)
    steady = steady_losses(items, [str(s) for s in steps], first_step(first), hold)
    table = curve_table(steps, first, previous)
    warnings = subtask_warnings(steps, first)
    if unused_seeds(first):
        warnings.append(
            f"the first run's seed(s) {', '.join(unused_seeds(first))} are paired with no later run, so they give "
            "the steady losses no noise floor: evaluate the later steps under them too"
        )
    curve = Curve(steps, table, items, results, specs, steady, warnings)
    image = None
    if plot:  # matplotlib only when a figure is drawn
        from postforget_lmeval.report.plots import _png

        image = _png(curve_figure(curve.curve))
    page = report_html.curve_html(curve.curve, curve.items, image, steps, [steady.sentence(), *curve.warnings])
    written += [
        atomic_write(out / "curve.csv", lambda p: write_csv(curve.curve, p)),
        atomic_write(out / "items.csv", lambda p: write_csv(curve.items, p)),
        atomic_write(out / "curve.html", lambda p: p.write_text(page, encoding="utf-8")),
    ]
    if image is not None:
        written.append(atomic_write(out / "curve.png", lambda p: p.write_bytes(image)))
    else:
        (out / "curve.png").unlink(missing_ok=True)
    return curve, written


def write_curve_folder(
    dirs: Sequence[str | os.PathLike[str]], out_dir: str | os.PathLike[str], *args: Any, **kwargs: Any
) -> tuple[Curve, list[Path]]:
    """:func:`write_curve` into an output folder of its own, replaced whole as ``postforget-pair``'s is
    (:func:`postforget_lmeval.report.files.output_folder`): no file of an earlier curve is left, and a folder of
    files no pairing wrote is refused."""
    with output_folder(out_dir) as new:
        curve, written = write_curve(dirs, new, *args, **kwargs)
    return curve, moved(written, new, out_dir)
