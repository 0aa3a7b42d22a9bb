"""``postforget-pair multi`` (named pairs) and ``chain`` (each run against the one before and the first)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from postforget_lmeval.cli import pair as pair_command
from postforget_lmeval.cli.console import consoles, escape, failed
from postforget_lmeval.errors import PairingError
from postforget_lmeval.report import many
from postforget_lmeval.report.paper_table import frame_rich


def command(name: str, argv: Sequence[str]) -> int:
    """One table across pairs; each pair's outputs in a folder of its own."""
    own = argparse.ArgumentParser(prog=f"postforget-pair {name}", usage=pair_command.USAGE, add_help=False)
    if name == "multi":
        own.add_argument("--pair", action="append", default=[], metavar="NAME=BEFORE_DIR,AFTER_DIR")
    else:
        own.add_argument("dirs", nargs="+", metavar="DIR")
    own.add_argument("-o", "--output", required=True, type=pair_command.output_dir, metavar="OUT_DIR")
    known, rest = own.parse_known_args(argv)
    args = pair_command.parser().parse_args(["BEFORE_DIR", "AFTER_DIR", "-o", known.output, *rest])
    out, err = consoles()
    try:
        if args.paper_pair:
            raise PairingError(
                f"--paper-pair names one pair; with {name}, each pair is recognised from its model names"
            )
        specs = [many.parse_pair(t) for t in known.pair] if name == "multi" else many.chain(known.dirs)
        progress = None if args.quiet else (lambda spec, _: err.print(f"paired {escape(spec.label)}"))
        results, written = many.run_pairs(
            specs, known.output, pair_command.options(args), plot=not args.no_plot, on_pair=progress
        )
    except (PairingError, OSError) as e:
        return failed(err, e, known.output)
    if not args.quiet:
        wide = many.wide_table(many.long_table(results))
        out.print(frame_rich(wide, "F_true / BT_true ± std (F_max / BT_max), %, macro, one column per pair"))
        compared = Path(known.output) / "comparisons.csv"  # pairs with one before, compared when written
        for line in many.comparison_lines(pd.read_csv(compared)) if compared.exists() else []:
            out.print(escape(line))
    for spec in specs:
        r = results[spec.label]
        if r.warnings or r.notes:
            err.print(
                f"{escape(spec.label)}: {len(r.warnings)} warning(s), {len(r.notes)} note(s), "
                f"in {escape(str(known.output))}/{spec.directory}/report.md"
            )
    err.print(
        f"wrote {len(specs)} pairs and {', '.join(p.name for p in written if p.parent == Path(known.output))} "
        f"to {escape(str(known.output))}"
    )
    return 0
