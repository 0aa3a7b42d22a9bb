"""``postforget-pair curve DIR_1 DIR_2 ... -o OUT_DIR``: forgetting over steps from runs of saved checkpoints,
the same report the training callback writes."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from rich.table import Table

from postforget_lmeval.cli import pair as pair_command
from postforget_lmeval.cli.console import consoles, escape, failed
from postforget_lmeval.errors import PairingError
from postforget_lmeval.metrics import OVERALL
from postforget_lmeval.report import curve as curve_report
from postforget_lmeval.report.paper_table import cell, pct


def _steps(value: str) -> list[int]:
    try:
        return [int(s) for s in value.split(",") if s.strip()]
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"--steps takes whole numbers separated by commas, not {value!r}") from e


def command(argv: Sequence[str]) -> int:
    """Pair every run with the first and the one before it; write curve.csv/png/html, items.csv and chain/."""
    own = argparse.ArgumentParser(prog="postforget-pair curve", usage=pair_command.USAGE, add_help=False)
    own.add_argument("dirs", nargs="+", metavar="DIR")
    pair_command.add_output(own)
    own.add_argument(
        "--steps", type=_steps, help="the step of each run (default: from each name, step_<N> or checkpoint-<N>)"
    )
    own.add_argument(
        "--steady-after",
        type=int,
        default=curve_report.STEADY_AFTER,
        metavar="N",
        help="a steady loss stays wrong over N probes after its last loss (default %(default)s)",
    )
    known = args = pair_command.parse(own, argv)
    out, err = consoles()
    try:
        if args.paper_pair:
            raise PairingError("--paper-pair names one pair; a curve pairs every run with the first")
        curve, written = curve_report.write_curve_folder(
            known.dirs,
            known.output,
            known.steps,
            pair_command.options(args),
            plot=not args.no_plot,
            hold=known.steady_after,
        )
    except (PairingError, OSError) as e:
        return failed(err, e, known.output)
    if not args.quiet:
        table = Table(title=f"Against the first run (step {curve.steps[0]}), overall, macro, %")
        for name in ("step", "accuracy", "F_true ± std (F_max)", "BT_true ± std (BT_max)"):
            table.add_column(name, justify="right")
        rows = curve.curve[(curve.curve["against"] == "first") & (curve.curve["category"] == OVERALL)]
        for r in rows.itertuples(index=False):
            table.add_row(
                str(r.step),
                pct(r.acc_after),
                cell(r.F_true, r.F_true_std, r.F_max),
                cell(r.BT_true, r.BT_true_std, r.BT_max),
            )
        out.print(table)
        out.print(escape(curve.steady.sentence()))
    for w in curve.warnings:
        err.print(f"[yellow]warning:[/] {escape(w)}")
    for spec in curve.chain:  # as `chain` says them
        r = curve.results[spec.label]
        if r.warnings or r.notes:
            err.print(
                f"{escape(spec.label)}: {len(r.warnings)} warning(s), {len(r.notes)} note(s), "
                f"in {escape(str(known.output))}/chain/{spec.directory}/report.md"
            )
    err.print(f"wrote {len(written)} files to {escape(str(known.output))} (curve.html, items.csv, chain/)")
    return 0
