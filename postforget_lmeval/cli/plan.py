"""``postforget-pair plan PILOT_OUT`` (or ``plan BEFORE_DIR AFTER_DIR``, or ``plan --before RUN_DIR
--assume-forgetting PCT`` from a before-run alone): how wide the intervals of a pilot are, the smallest forgetting it
can detect, and the items and seeds a target half-width needs (docs/planning.md)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from rich.table import Table

from postforget_lmeval.analyses import PLAN_SEEDS as SEEDS
from postforget_lmeval.analyses import plan_from_before, plan_study
from postforget_lmeval.api import pair, pair_with_itself
from postforget_lmeval.cli.console import consoles, escape, failed
from postforget_lmeval.errors import PairingError
from postforget_lmeval.report.csv_safe import write_csv


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="postforget-pair plan",
        description="Plan a forgetting study from a pilot, or from a before-run alone with an assumed forgetting rate: "
        "the 95% interval half-widths of F_true and BT_true, the smallest forgetting detectable at 80% power, and "
        f"the items needed for a target half-width with {', '.join(map(str, SEEDS))} seeds.",
    )
    p.add_argument("dirs", nargs="*", metavar="DIR", help="a postforget-pair output folder, or BEFORE_DIR AFTER_DIR")
    p.add_argument(
        "--before",
        metavar="RUN_DIR",
        help="plan from a before-run alone (lm-eval --output_path, any number of seeds) instead of a pilot pairing; "
        "the after-run is simulated with --assume-forgetting and --assume-bt",
    )
    p.add_argument(
        "--assume-forgetting",
        type=float,
        metavar="PCT",
        help="with --before: the share of the items the model knew that it forgets, percent (e.g. 5)",
    )
    p.add_argument(
        "--assume-bt",
        type=float,
        default=0.0,
        metavar="PCT",
        help="with --before: the share of the items it did not know that it learns, percent (default: 0)",
    )
    p.add_argument("--target", type=float, default=2.0, help="target half-width, percentage points (default: 2)")
    p.add_argument("--subtasks", action="store_true", help="also print one row per sub-benchmark")
    p.add_argument("--csv", metavar="PATH", help="write the plan (every row) as a CSV file")
    return p


def _samples(dirs: list[str]) -> pd.DataFrame:
    if len(dirs) == 1:
        path = Path(dirs[0]) / "samples.parquet"
        if not path.is_file():
            raise PairingError(
                f"{dirs[0]}: no samples.parquet; give a postforget-pair output folder, or the before and after run "
                "folders (postforget-pair plan BEFORE_DIR AFTER_DIR)"
            )
        return pd.read_parquet(path)
    if len(dirs) == 2:
        return pair(dirs[0], dirs[1], analyses=False).samples
    raise PairingError(f"plan takes one output folder or two run folders, got {len(dirs)}")


def _pp(x: float) -> str:
    return "–" if not math.isfinite(x) else f"{100 * x:.1f}"


def _n(x: float) -> str:
    return "–" if not math.isfinite(x) else f"{int(x):,}"


def command(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    out, err = consoles()
    try:
        if not args.target > 0:
            raise PairingError(f"--target {args.target}: give a half-width above 0 (percentage points)")
        if args.before is None:
            if args.assume_forgetting is not None:
                raise PairingError("--assume-forgetting plans from a before-run alone: give --before RUN_DIR with it")
            if not args.dirs:
                raise PairingError(
                    "plan what? give a pilot (plan PILOT_OUT, or plan BEFORE_DIR AFTER_DIR), or a before-run alone "
                    "with an assumed forgetting rate (plan --before RUN_DIR --assume-forgetting 5)"
                )
            table = plan_study(_samples(args.dirs), target=args.target / 100)
        else:
            if args.dirs:
                raise PairingError(
                    f"give a pilot ({' '.join(args.dirs)}) or --before {args.before}, not both: a pilot's figures "
                    "are measured, --before simulates them"
                )
            rates = {"--assume-forgetting": args.assume_forgetting, "--assume-bt": args.assume_bt}
            if rates["--assume-forgetting"] is None:
                raise PairingError("--before needs --assume-forgetting PCT: the share of known items forgotten")
            for name, value in rates.items():
                if not 0 <= value <= 100:
                    raise PairingError(f"{name} {value:g}: give a percentage from 0 to 100")
            table = plan_from_before(
                pair_with_itself(args.before).samples,
                args.assume_forgetting / 100,
                args.assume_bt / 100,
                target=args.target / 100,
            )
        if args.csv:
            write_csv(table, Path(args.csv))
    except (PairingError, OSError) as e:
        return failed(err, e, args.csv)
    rows = table if args.subtasks else table[table["level"] == "category"]
    now = (
        "now"
        if args.before is None
        else f"if {args.assume_forgetting:g}% of known items are forgotten, {args.assume_bt:g}% of the others learnt"
    )
    view = Table(
        title=f"Plan: 95% half-widths {now}, and items for ±{args.target:g} points of F_true", title_justify="left"
    )
    for name in (
        "",
        "items",
        "seeds",
        "F_true ± h",
        "BT_true ± h",
        "detect",
        *(f"{s} seed{'s' * (s > 1)}" for s in SEEDS),
    ):
        view.add_column(name, justify="left" if not name else "right")
    for r in rows.itertuples(index=False):
        view.add_row(
            escape(str(r.name)),
            _n(r.items),
            str(r.seeds),
            f"{_pp(r.F_true)} ± {_pp(r.F_true_halfwidth)}",
            f"{_pp(r.BT_true)} ± {_pp(r.BT_true_halfwidth)}",
            _pp(r.F_detectable_80),
            *(_n(getattr(r, f"items_for_target_{s}_seeds")) for s in SEEDS),
        )
    out.print(view)
    out.print(
        "detect: the smallest F_true found at 80% power (two-sided 5%); the last columns: items needed for the "
        "target with that many seeds ('–': one seed in the pilot, so seed noise is not measured)."
    )
    return 0
