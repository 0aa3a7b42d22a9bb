"""``postforget-pair multi`` (named pairs) and ``chain`` (each run against the one before and the first)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from postforget_lmeval.cli import pair as pair_command
from postforget_lmeval.cli.console import consoles, escape, failed
from postforget_lmeval.errors import PairingError
from postforget_lmeval.report import many
from postforget_lmeval.report.paper_table import frame_rich

DESCRIPTIONS = {
    "multi": "Several named before/after pairs: one table across them, each pair's outputs in a folder of its own.",
    "chain": "Runs in order (e.g. base, SFT, RL): each paired with the one before it and with the first.",
}


def command(name: str, argv: Sequence[str]) -> int:
    """One table across pairs; each pair's outputs in a folder of its own."""
    own = argparse.ArgumentParser(prog=f"postforget-pair {name}", description=DESCRIPTIONS[name], add_help=False)
    if name == "multi":
        own.add_argument(
            "--pair", action="append", default=[], metavar="NAME=BEFORE_DIR,AFTER_DIR",
            help="one named pair (repeat --pair for each); its outputs go to OUT_DIR/NAME",
        )  # fmt: skip
    else:
        own.add_argument("dirs", nargs="+", metavar="DIR", help="runs in order: the first is the baseline")
    pair_command.add_output(own)
    known = args = pair_command.parse(own, argv)
    out, err = consoles()
    try:
        if args.paper_pair:
            raise PairingError(
                f"--paper-pair names one pair; with {name}, each pair is recognised from its model names"
            )
        specs = [many.parse_pair(t) for t in known.pair] if name == "multi" else many.chain(known.dirs)
        progress = None if args.quiet else (lambda spec, _: err.print(f"paired {escape(spec.label)}"))
        results, written, compared = many.run_pairs(
            specs, known.output, pair_command.options(args), plot=not args.no_plot, on_pair=progress
        )
    except (PairingError, OSError) as e:
        return failed(err, e, known.output)
    if not args.quiet:
        wide = many.wide_table(many.long_table(results))
        for name in many.models(results):
            out.print(escape(name))
        out.print(frame_rich(wide, "F_true / BT_true ± std (F_max / BT_max), %, macro, one column per pair"))
        why = many.no_baseline(results)
        if why:
            out.print(escape(why))
        for line in many.comparison_lines(compared) if compared is not None else []:
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
