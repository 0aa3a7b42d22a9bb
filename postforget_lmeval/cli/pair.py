"""``postforget-pair BEFORE_DIR AFTER_DIR -o OUT_DIR``: pair two directories of runs and write every table."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from rich.console import Console

from postforget_lmeval.analyses import design_categories, drawn_items, weigh
from postforget_lmeval.api import pair
from postforget_lmeval.cli.console import MAX_WARNINGS, Bar, consoles, escape, failed
from postforget_lmeval.cli.subset import design_table, read_inclusion
from postforget_lmeval.errors import PairingError
from postforget_lmeval.pairing.options import PairOptions
from postforget_lmeval.report import gate, paper, sensitivity
from postforget_lmeval.report.analyses_md import shared_seed_warning
from postforget_lmeval.report.files import write_outputs
from postforget_lmeval.report.paper_table import rich_table
from postforget_lmeval.sources import FORMATS

USAGE = (
    "postforget-pair BEFORE_DIR AFTER_DIR -o OUT_DIR [options]\n"
    "       postforget-pair multi --pair NAME=BEFORE_DIR,AFTER_DIR [--pair ...] -o OUT_DIR [options]\n"
    "       postforget-pair chain DIR_1 DIR_2 [DIR_3 ...] -o OUT_DIR [options]\n"
    "       postforget-pair curve DIR_1 DIR_2 [DIR_3 ...] -o OUT_DIR [--steps N,N,...] [options]\n"
    "       postforget-pair show OUT_DIR --subtask NAME [options]\n"
    "       postforget-pair plan PILOT_OUT_DIR [--target 2] [--subtasks] [--csv PATH]\n"
    "       postforget-pair plan --before BEFORE_DIR --assume-forgetting PCT [--assume-bt PCT] [--target 2]\n"
    "       postforget-pair subset BEFORE_DIR (--size N | --fraction F) -o SUBSET_DIR [--seed S]"
)


def output_dir(value: str) -> str:
    """``-o``: a folder name (``-o ''`` would write into the current folder)."""
    if not value.strip():
        raise argparse.ArgumentTypeError("name the output folder (an empty name would be the current folder)")
    return value


def _patterns(value: str) -> list[str]:
    return [p.strip() for p in value.split(",") if p.strip()]


def add_output(p: argparse.ArgumentParser) -> None:
    """``-o``, also spelled ``--output``, or ``--output_path`` as lm-eval users type it."""
    p.add_argument(
        "-o", "--output", "--output_path", dest="output", required=True, type=output_dir, metavar="OUT_DIR",
        help="where to write the results (created; replaced whole on every run)",
    )  # fmt: skip


def shared() -> argparse.ArgumentParser:
    """The pairing options every command shares (a parent parser: ``parents=[shared()]``)."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--metric", help="per-sample 0/1 metric of ordinary lm-eval tasks (default: acc, else exact_match)")
    p.add_argument(
        "--filter", help="filter to use for tasks that log several (default: the task's first, e.g. strict-match)"
    )
    p.add_argument(
        "--k",
        type=float,
        help="number of options of ordinary tasks, for the chance baseline "
        "(default: counted for multiple-choice tasks, unknown otherwise)",
    )
    p.add_argument(
        "--tasks",
        type=_patterns,
        action="extend",
        help="task-name patterns to pair, comma-separated or repeated (e.g. 'postforget_mmlu_*')",
    )
    p.add_argument(
        "--exclude",
        type=_patterns,
        action="extend",
        help="task-name patterns to leave out, comma-separated or repeated (e.g. '*_base')",
    )
    p.add_argument(
        "--seed-match",
        choices=("auto", "exact", "order"),
        default="auto",
        help="exact: equal seeds; order: sorted seeds in turn; auto (default): exact, or order when no seed is shared",
    )
    p.add_argument(
        "--rescore",
        metavar="POLICY",
        help="re-extract every postforget answer from its logged response under POLICY (strict: this package's "
        "extractor; lighteval: LightEval 0.10's rules) instead of trusting the logged 0/1; "
        "a comma list (strict,lighteval) compares the policies side by side",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        help="input format of both directories (default: detected per directory)",
    )
    p.add_argument(
        "--chance-k",
        choices=("item", "paper"),
        default="item",
        help="k of the chance baseline: item (default) counts each item's options; paper uses the paper's "
        "official k (its BBH table, 4 for every other benchmark) to compare with its tables like for like",
    )
    p.add_argument(
        "--paper-pair",
        metavar="LABEL",
        help="compare with this pair of the paper (e.g. 'Q2.5 Inst. (7B)'); by default a pair is recognised "
        "from the model names in the results files",
    )
    p.add_argument("--jobs", type=int, help="processes reading the logs (default: CPUs available)")
    p.add_argument("--strict", action="store_true", help="treat every reported problem as an error")
    p.add_argument("--no-plot", action="store_true", help="do not write forgetting.png")
    p.add_argument(
        "--no-analyses",
        action="store_true",
        help="only the paper's figures: skip significance, bootstrap intervals, failure modes and drift",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no table")
    return p


SUBCOMMANDS = """subcommands (each has its own --help):
  multi --pair NAME=BEFORE_DIR,AFTER_DIR [--pair ...] -o OUT_DIR
                        several named pairs in one table; --pair once per pair
  chain DIR_1 DIR_2 [DIR_3 ...] -o OUT_DIR
                        each run against the one before it and against the first
  curve DIR_1 DIR_2 [DIR_3 ...] -o OUT_DIR [--steps N,N,...]
                        forgetting over training steps; --steps gives each run's step
                        (default: from each folder name, step_<N> or checkpoint-<N>)
  show OUT_DIR --subtask NAME [--transition forgotten|gained]
                        the items of one sub-benchmark that were forgotten or gained
  plan PILOT_OUT_DIR [--target 2] [--subtasks] [--csv PATH]
                        a pilot's interval half-widths and the items and seeds a target needs
  plan --before BEFORE_DIR --assume-forgetting PCT [--assume-bt PCT]
                        the same from a before-run alone, the after-run simulated"""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="postforget-pair",
        usage=USAGE,
        description="Sample-wise forgetting and backward transfer between two lm-eval output directories "
        "(runs made with --log_samples): the model before and after post-training.",
        epilog=SUBCOMMANDS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[shared()],
    )
    p.add_argument("before", metavar="BEFORE_DIR", help="lm-eval --output_path of the model before post-training")
    p.add_argument("after", metavar="AFTER_DIR", help="lm-eval --output_path of the model after post-training")
    add_output(p)
    p.add_argument(
        "--fail-if",
        metavar="RULE",
        action="append",
        default=[],
        help="release gate: exit 3 when the rule holds, e.g. 'F_true > 2' (OVERALL, percentage points), "
        "'STEM:F_true >= 5' or '*:F_true > 10' (every category); repeatable; the verdict goes in summary.json",
    )
    p.add_argument(
        "--gate-reads",
        choices=gate.READS,
        default="estimate",
        help="what a --fail-if rule reads: estimate (default, the macro mean the table prints) or interval "
        "(the bound of the 95%% bootstrap interval that makes the failure certain)",
    )
    p.add_argument(
        "--weights",
        metavar="INCLUSION_CSV",
        help="the after-run evaluated a subset drawn by 'postforget-pair subset': its inclusion.csv; adds "
        "design-weighted figures with intervals that include the sampling (design.csv)",
    )
    return p


def parse(own: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """A subcommand's arguments: its own (``own``, made with ``add_help=False``) and the shared options, with one
    ``--help`` that lists them all."""
    full = argparse.ArgumentParser(prog=own.prog, description=own.description, parents=[own, shared()])
    return full.parse_args(argv)


def options(args: argparse.Namespace, **overrides: object) -> PairOptions:
    """The pairing options of the command line."""
    values = {
        "metric": args.metric, "filter": args.filter, "k": args.k, "tasks": args.tasks or (),
        "exclude": args.exclude or (), "seed_match": args.seed_match, "jobs": args.jobs, "strict": args.strict,
        "rescore": args.rescore, "source_format": args.format, "chance_k": args.chance_k,
        "analyses": not args.no_analyses,
    }  # fmt: skip
    return PairOptions(**{**values, **overrides})


def command(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    out, err = consoles()
    if args.rescore and "," in args.rescore:  # several policies: the sensitivity comparison
        return _sensitivity(args, out, err)
    bar = None if args.quiet or not err.is_terminal else Bar(err)
    try:
        if args.paper_pair:
            paper.check_label(args.paper_pair)
        rules = [gate.parse_rule(r) for r in args.fail_if]
        inclusion = read_inclusion(args.weights) if args.weights else None
        drawn = None if inclusion is None else drawn_items(inclusion)  # the rest is unpaired by design
        result = pair(args.before, args.after, options(args, drawn=drawn), progress=bar)
        if inclusion is not None:
            weigh(result, inclusion, args.weights)
            if args.strict and result.warnings:  # what weighing found
                raise PairingError("--strict: " + "; ".join(result.warnings[:5]))
        if args.paper_pair:
            result.summary["paper_pair"] = args.paper_pair
        if rules:
            figures = design_categories(result.tables["design"]) if args.weights else result.categories
            result.summary["gate"] = gate.evaluate(rules, figures, args.gate_reads)
    except (PairingError, OSError) as e:  # OSError: a run folder or file that cannot be read
        return failed(err, e)
    finally:
        if bar:
            bar.stop()
    try:
        written = write_outputs(result, args.output, plot=not args.no_plot)
    except (PairingError, OSError) as e:
        return failed(err, e, args.output)
    if not args.quiet:
        out.print(rich_table(result))
        if args.weights:
            out.print(design_table(result))
    for n in result.notes:
        err.print(f"note: {escape(n)}")
    for w in result.warnings[:MAX_WARNINGS]:
        err.print(f"[yellow]warning:[/] {escape(w)}")
    if len(result.warnings) > MAX_WARNINGS:
        err.print(f"[yellow]warning:[/] ... and {len(result.warnings) - MAX_WARNINGS} more (all in summary.json)")
    if shared := shared_seed_warning(result):
        err.print(f"[yellow]noise floor:[/] {escape(shared)}")
    totals, timing = result.summary["totals"], result.summary["timing"]
    err.print(
        f"paired {totals['items_paired']} items in {totals['subtasks_paired']} sub-benchmarks "
        f"(seeds {', '.join(totals['seeds'])}); "
        f"read {timing['bytes_read'] / 1e6:.0f} MB in {timing['read_seconds']:.1f}s; "
        f"wrote {', '.join(p.name for p in written)} to {escape(str(args.output))}"
    )
    verdict = result.summary.get("gate")
    if verdict:
        for line in gate.describe(verdict):
            err.print(escape(line), style=None if verdict["passed"] else "bold red")
        if not verdict["passed"]:
            return gate.EXIT_FAILED
    return 0


def _sensitivity(args: argparse.Namespace, out: Console, err: Console) -> int:
    """``--rescore a,b``: the same pairing as logged and under each policy, side by side."""
    try:
        policies = sensitivity.parse_policies(args.rescore)
        sens = sensitivity.compare(args.before, args.after, policies, options(args, rescore=None))
        sensitivity.write(sens, args.output, plot=not args.no_plot)
    except (PairingError, OSError) as e:
        return failed(err, e, args.output)
    if not args.quiet:
        out.print(escape(sensitivity.markdown(sens)))
    return 0
