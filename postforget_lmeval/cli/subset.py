"""``postforget-pair subset BEFORE_DIR --size N -o SUBSET_DIR``: a stratified subset of a before-run's items for the
after-run (lm-eval's ``--samples`` JSON and each item's inclusion probability), and what ``--weights`` reads of it
(docs/planning.md)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from rich.table import Table

from postforget_lmeval.analyses import (
    DESIGN_RATES,
    INCLUSION_COLUMNS,
    MIN_PER_STRATUM,
    SUBSET_ALLOCATIONS,
    draw_subset,
    item_strata,
    samples_json,
)
from postforget_lmeval.api import pair_with_itself
from postforget_lmeval.cli.console import consoles, escape, failed
from postforget_lmeval.errors import PairingError
from postforget_lmeval.metrics import OVERALL
from postforget_lmeval.pairing.results import PairResult
from postforget_lmeval.report.csv_safe import write_csv
from postforget_lmeval.report.files import atomic_write, output_folder
from postforget_lmeval.sources import FORMATS


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="postforget-pair subset",
        description="Draw a stratified subset of a before-run's items (strata: sub-benchmark × right under every "
        "seed, mixed, wrong under every seed) for the after-run: SUBSET_DIR/samples.json for lm-eval's --samples "
        "and SUBSET_DIR/inclusion.csv for postforget-pair --weights.",
    )
    p.add_argument("before", metavar="BEFORE_DIR", help="lm-eval --output_path of the model before post-training")
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--size", type=int, metavar="N", help="items to draw in all")
    size.add_argument("--fraction", type=float, metavar="F", help="share of the before-run's items to draw (0-1)")
    p.add_argument("-o", "--output", required=True, metavar="SUBSET_DIR", help="where to write (replaced whole)")
    p.add_argument("--seed", type=int, default=0, help="seed of the draw (default: 0)")
    p.add_argument(
        "--allocation",
        choices=tuple(SUBSET_ALLOCATIONS),
        default="proportional",
        help="proportional (default): every item alike within its sub-benchmark; forgetting: right items drawn twice "
        "as often as wrong ones and mixed ones four times (narrower F_true, wider BT_true)",
    )
    p.add_argument("--tasks", action="append", default=[], help="task-name patterns to draw from (comma-separated)")
    p.add_argument("--exclude", action="append", default=[], help="task-name patterns to leave out (comma-separated)")
    p.add_argument("--metric", help="per-sample 0/1 metric of ordinary lm-eval tasks (as postforget-pair)")
    p.add_argument("--filter", help="filter of tasks that log several (as postforget-pair)")
    p.add_argument("--format", choices=FORMATS, help="input format (default: detected)")
    return p


def _before_items(args: argparse.Namespace) -> tuple[pd.DataFrame, list[str]]:
    """Every item of the before-run with its stratum (the run paired with itself, keyed as the later pairing with
    the after-run keys it), and the reading's warnings."""
    tasks, exclude = ([p.strip() for v in arg for p in v.split(",") if p.strip()] for arg in (args.tasks, args.exclude))
    runs = pair_with_itself(
        args.before, tasks=tasks, exclude=exclude, metric=args.metric, filter=args.filter, source_format=args.format
    )
    return item_strata(runs.samples), runs.warnings


def read_inclusion(path: str) -> pd.DataFrame:
    """inclusion.csv as ``subset`` wrote it, checked: every column, one row per item, drawn 0/1, π in (0, 1] and
    equal to the drawn share of its stratum."""
    try:
        table = pd.read_csv(path, dtype={"task": str, "subtask": str, "stratum": str, "allocation": str})
    except (OSError, ValueError) as e:
        raise PairingError(f"{path}: cannot read the inclusion table ({e}): give SUBSET_DIR/inclusion.csv") from e
    lacking = [c for c in INCLUSION_COLUMNS if c not in table.columns]
    if lacking:
        raise PairingError(f"{path}: no column(s) {', '.join(lacking)}: give the inclusion.csv that subset wrote")
    problems = {
        "a doc_id that is not a whole number": ~table["doc_id"].astype(str).str.fullmatch(r"-?\d+"),
        "drawn other than 0 or 1": ~table["drawn"].isin((0, 1)),
        "pi outside (0, 1]": ~((table["pi"] > 0) & (table["pi"] <= 1)),
        "an item listed twice": table.duplicated(["subtask", "doc_id"], keep=False),
        f"an allocation other than {' or '.join(SUBSET_ALLOCATIONS)}": ~table["allocation"].isin(SUBSET_ALLOCATIONS),
        "an allocation other than the first line's": table["allocation"] != next(iter(table["allocation"]), None),
    }
    for why, bad in problems.items():
        if bad.any():
            line = int(bad.to_numpy().argmax()) + 2  # the header is line 1
            raise PairingError(f"{path}, line {line}: {why}: write the file again with postforget-pair subset")
    table["doc_id"] = table["doc_id"].astype("int64")
    share = table.groupby(["subtask", "stratum"])["drawn"].transform("mean")
    if not ((share - table["pi"]).abs() < 1e-6).all():
        line = int(((share - table["pi"]).abs() >= 1e-6).to_numpy().argmax()) + 2
        raise PairingError(f"{path}, line {line}: pi is not the drawn share of its stratum: the file was edited")
    return table


def design_table(result: PairResult) -> Table:
    """The terminal table of design.csv: categories and OVERALL, each figure with its interval."""
    table = result.tables["design"]
    view = Table(
        title="Design-weighted estimates of the before-run's items (95% intervals include the sampling)",
        title_justify="left",
    )
    for name in ("", "items", "drawn", *DESIGN_RATES):
        view.add_column(name, justify="left" if not name else "right")
    rows = table[table["level"] == "category"]
    for r in rows.to_dict("records"):
        view.add_row(
            escape(str(r["category"])) if r["category"] != OVERALL else f"[bold]{OVERALL}[/]",
            f"{int(r['items']):,}",
            f"{int(r['drawn']):,}",
            *(f"{100 * r[m]:.1f} [{100 * r[f'{m}_lo']:.1f}, {100 * r[f'{m}_hi']:.1f}]" for m in DESIGN_RATES),
        )
    return view


def command(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    out, err = consoles()
    try:
        items, warnings = _before_items(args)
        if args.fraction is not None and not 0 < args.fraction <= 1:
            raise PairingError(f"--fraction {args.fraction}: give a share above 0 and at most 1")
        n = args.size if args.size is not None else round(args.fraction * len(items))
        try:
            inclusion = draw_subset(items, n, seed=args.seed, allocation=args.allocation)
        except ValueError as e:
            raise PairingError(
                f"{args.before}: {e} of its {len(items):,} items (every stratum of sub-benchmark and right, mixed "
                f"or wrong keeps at least {MIN_PER_STRATUM}): give another --size or --fraction"
            ) from e
        with output_folder(args.output) as new:
            chosen = samples_json(inclusion)  # one task a line
            text = "{\n" + ",\n".join(f" {json.dumps(t)}: {json.dumps(ids)}" for t, ids in chosen.items()) + "\n}"
            atomic_write(new / "samples.json", lambda p: p.write_text(text + "\n", encoding="utf-8"))
            atomic_write(new / "inclusion.csv", lambda p: write_csv(inclusion, p))
    except (PairingError, OSError) as e:
        return failed(err, e, args.output)
    view = Table(title=f"Subset of {escape(args.before)}: items drawn per stratum", title_justify="left")
    for name in ("stratum", "strata", "items", "drawn", "π from", "π to"):
        view.add_column(name, justify="left" if name == "stratum" else "right")
    for stratum, rows in inclusion.groupby("stratum", sort=False):
        view.add_row(
            stratum, str(rows["subtask"].nunique()), f"{len(rows):,}", f"{int(rows['drawn'].sum()):,}",
            f"{rows['pi'].min():.3f}", f"{rows['pi'].max():.3f}",
        )  # fmt: skip
    out.print(view)
    for w in warnings:
        err.print(f"[yellow]warning:[/] {escape(w)}")
    samples = Path(args.output) / "samples.json"
    err.print(
        f"drew {int(inclusion['drawn'].sum()):,} of {len(inclusion):,} items; evaluate the after-model with "
        f"lm_eval ... --log_samples --samples {escape(str(samples))} (not with --limit), then pair with "
        f"postforget-pair BEFORE_DIR AFTER_DIR -o OUT_DIR --weights {escape(str(Path(args.output) / 'inclusion.csv'))}"
    )
    return 0
