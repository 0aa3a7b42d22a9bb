"""Command lines: ``postforget-pair`` (pair two lm-eval output directories; ``multi``/``chain`` many pairs;
``show`` what changed) and
``postforget`` (``task-dir`` for ``--include_path``; ``demo``).

Errors a user can act on are printed as one message and exit 1; argparse usage errors exit 2.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from postforget_lmeval.cli import runtime
from postforget_lmeval.sources import FORMATS

if TYPE_CHECKING:  # rich is imported on first use: postforget-pair starts its readers before loading it
    from rich.console import Console

MAX_WARNINGS = 20  # shown on the terminal; summary.json has them all
PAIR_USAGE = (
    "postforget-pair BEFORE_DIR AFTER_DIR -o OUT_DIR [options]\n"
    "       postforget-pair multi --pair NAME=BEFORE_DIR,AFTER_DIR [--pair ...] -o OUT_DIR [options]\n"
    "       postforget-pair chain DIR_1 DIR_2 [DIR_3 ...] -o OUT_DIR [options]\n"
    "       postforget-pair show OUT_DIR --subtask NAME [options]"
)


def _patterns(value: str) -> list[str]:
    return [p.strip() for p in value.split(",") if p.strip()]


def escape(text: str) -> str:
    """rich's markup escape. rich takes ~40 ms to import, which ``postforget-pair`` spends while its reading
    processes run rather than before it starts them, so this module imports it on first use."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def _err_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True, emoji=False)  # a path may hold ":name:" (an emoji code to rich)


def _consoles() -> tuple[Console, Console]:
    """stdout (wide when piped: see :func:`report.stdout_console`) and stderr."""
    from postforget_lmeval.report.paper_table import stdout_console

    return stdout_console(), _err_console()


def _pair_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="postforget-pair",
        usage=PAIR_USAGE,
        description="Sample-wise forgetting and backward transfer between two lm-eval output directories "
        "(runs made with --log_samples): the model before and after post-training.",
    )
    p.add_argument("before", metavar="BEFORE_DIR", help="lm-eval --output_path of the model before post-training")
    p.add_argument("after", metavar="AFTER_DIR", help="lm-eval --output_path of the model after post-training")
    p.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="where to write the results (created)")
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


def _show_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="postforget-pair show",
        description="List the items of a sub-benchmark that were forgotten (or gained), "
        "with the question, gold answer and both models' answers.",
    )
    p.add_argument("out_dir", metavar="OUT_DIR", help="output directory of postforget-pair")
    p.add_argument("--subtask", required=True, help="sub-benchmark, as in subtasks.csv")
    p.add_argument(
        "--transition",
        default="1->0",
        choices=("1->0", "0->1", "1->1", "0->0"),
        help="1->0 forgotten (default), 0->1 gained",
    )
    p.add_argument("--seed", help="only this seed label (as in subtasks.csv)")
    p.add_argument("--limit", type=int, default=20, help="at most this many items (default 20; 0 for all)")
    p.add_argument("--responses", action="store_true", help="also print the end of both responses")
    return p


class _Bar:
    """Bytes-based rich progress bar, started on the first update (after the reading processes exist)."""

    def __init__(self, console: Console) -> None:
        from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

        self.progress = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self.task: int | None = None

    def __call__(self, done: int, total: int) -> None:
        if self.task is None:
            self.progress.start()
            self.task = self.progress.add_task("reading sample logs", total=total)
        self.progress.update(self.task, completed=done)

    def stop(self) -> None:
        if self.task is not None:
            self.progress.stop()


def _pair(argv: Sequence[str]) -> int:
    args = _pair_parser().parse_args(argv)
    from postforget_lmeval.pairing import reading
    from postforget_lmeval.errors import PairingError

    if args.rescore and "," in args.rescore:  # several policies: the sensitivity comparison
        return _sensitivity(args, *_consoles())
    bar = None
    try:
        if args.paper_pair:
            from postforget_lmeval.report import paper

            paper.check_label(args.paper_pair)
        begun = reading.start(args.before, args.after, **_pair_options(args))
        err = _err_console()
        bar = None if args.quiet or not err.is_terminal else _Bar(err)
        # the reading processes run now: import what the rest needs meanwhile (pandas & co, ~0.5 s)
        from postforget_lmeval.report.files import write_outputs
        from postforget_lmeval.pairing.pair import finish
        from postforget_lmeval.report.paper_table import rich_table, stdout_console

        if begun.options["analyses"]:
            import postforget_lmeval.analyses.annotate  # noqa: F401 - pairing uses it once the logs are read

        result = finish(begun, progress=bar)
        if args.paper_pair:
            result.summary["paper_pair"] = args.paper_pair
    except PairingError as e:
        return _failed(_err_console(), e, args.output)
    finally:
        if bar:
            bar.stop()
    out = stdout_console()
    try:
        written = write_outputs(result, args.output, plot=not args.no_plot)
    except OSError as e:
        return _failed(err, e, args.output)
    if not args.quiet:
        out.print(rich_table(result))
    for n in result.notes:
        err.print(f"note: {escape(n)}")
    for w in result.warnings[:MAX_WARNINGS]:
        err.print(f"[yellow]warning:[/] {escape(w)}")
    if len(result.warnings) > MAX_WARNINGS:
        err.print(f"[yellow]warning:[/] ... and {len(result.warnings) - MAX_WARNINGS} more (all in summary.json)")
    totals = result.summary["totals"]
    timing = result.summary["timing"]
    err.print(
        f"paired {totals['items_paired']} items in {totals['subtasks_paired']} sub-benchmarks "
        f"(seeds {', '.join(totals['seeds'])}); "
        f"read {timing['bytes_read'] / 1e6:.0f} MB in {timing['read_seconds']:.1f}s; "
        f"wrote {', '.join(p.name for p in written)} to {escape(str(args.output))}"
    )
    return 0


def _sensitivity(args: argparse.Namespace, out: Console, err: Console) -> int:
    """``--rescore a,b``: the same pairing as logged and under each policy, side by side."""
    from postforget_lmeval.report import sensitivity
    from postforget_lmeval.pairing.results import PairingError

    options = {k: v for k, v in _pair_options(args).items() if k != "rescore"}  # compare() sets it per scoring
    try:
        sens = sensitivity.compare(args.before, args.after, sensitivity.parse_policies(args.rescore), **options)
        sensitivity.write(sens, args.output, plot=not args.no_plot)
    except (PairingError, OSError) as e:
        return _failed(err, e, args.output)
    if not args.quiet:
        out.print(escape(sensitivity.markdown(sens)))
    return 0


def _failed(err: Console, e: Exception, output: str) -> int:
    """One message for bad input (PairingError) or an output directory that cannot be written; exit 1."""
    if isinstance(e, OSError):
        err.print(f"[bold red]error:[/] cannot write to {escape(str(output))}: {escape(str(e))}")
    else:
        err.print(f"[bold red]error:[/] {escape(str(e))}")
    return 1


def _pair_options(args: argparse.Namespace) -> dict[str, Any]:
    """The pair() keyword arguments of the shared command-line options."""
    return {
        "metric": args.metric, "filter": args.filter, "k": args.k, "tasks": args.tasks, "exclude": args.exclude,
        "seed_match": args.seed_match, "jobs": args.jobs, "strict": args.strict, "rescore": args.rescore,
        "source_format": args.format, "chance_k": args.chance_k, "analyses": not args.no_analyses,
    }


def _many(command: str, argv: Sequence[str]) -> int:
    """``multi`` (named pairs) or ``chain`` (each run against the one before and the first): one table across pairs."""
    own = argparse.ArgumentParser(prog=f"postforget-pair {command}", usage=PAIR_USAGE, add_help=False)
    if command == "multi":
        own.add_argument("--pair", action="append", default=[], metavar="NAME=BEFORE_DIR,AFTER_DIR")
    else:
        own.add_argument("dirs", nargs="+", metavar="DIR")
    own.add_argument("-o", "--output", required=True, metavar="OUT_DIR")
    known, rest = own.parse_known_args(argv)
    args = _pair_parser().parse_args(["BEFORE_DIR", "AFTER_DIR", "-o", known.output, *rest])
    from postforget_lmeval.report import many as multipair
    from postforget_lmeval.report.paper_table import frame_rich
    from postforget_lmeval.pairing.results import PairingError

    out, err = _consoles()
    try:
        if args.paper_pair:
            raise PairingError(f"--paper-pair names one pair; with {command}, each pair is recognised from its model names")
        specs = [multipair.parse_pair(t) for t in known.pair] if command == "multi" else multipair.chain(known.dirs)
        progress = None if args.quiet else (lambda spec, _: err.print(f"paired {escape(spec.label)}"))
        results, written = multipair.run_pairs(
            specs, known.output, plot=not args.no_plot, on_pair=progress, **_pair_options(args)
        )
    except (PairingError, OSError) as e:
        return _failed(err, e, known.output)
    if not args.quiet:
        wide = multipair.wide_table(multipair.long_table(results))
        out.print(frame_rich(wide, "F_true / BT_true ± std (F_max / BT_max), %, macro, one column per pair"))
    for spec in specs:
        r = results[spec.label]
        if r.warnings or r.notes:
            err.print(f"{escape(spec.label)}: {len(r.warnings)} warning(s), {len(r.notes)} note(s), "
                      f"in {escape(str(known.output))}/{spec.directory}/report.md")
    err.print(f"wrote {len(specs)} pairs and {', '.join(p.name for p in written if p.parent == Path(known.output))} "
              f"to {escape(str(known.output))}")
    return 0


def _show(argv: Sequence[str]) -> int:
    args = _show_parser().parse_args(argv)
    from postforget_lmeval.pairing.results import PairingError
    from postforget_lmeval.cli.show import show_items

    out, err = _consoles()
    try:
        items = show_items(args.out_dir, args.subtask, args.transition, args.seed, args.limit or None, args.responses)
    except PairingError as e:
        err.print(f"[bold red]error:[/] {escape(str(e))}")
        return 1
    what = {"1->0": "forgotten", "0->1": "gained", "1->1": "kept", "0->0": "never right"}[args.transition]
    out.print(f"[bold]{len(items)} {what} item(s) of {escape(args.subtask)}[/]")
    for it in items:
        out.rule(f"doc_id {it['doc_id']}  seed {escape(it['seed'])}")
        out.print(escape(it["question"]))
        out.print(
            f"[bold]gold:[/] {escape(str(it['gold']))}   [bold]before:[/] {escape(str(it['answer_before']))}"
            + (f" ({escape(str(it['status_before']))})" if it["status_before"] else "")
            + f"   [bold]after:[/] {escape(str(it['answer_after']))}"
            + (f" ({escape(str(it['status_after']))})" if it["status_after"] else "")
        )
        for side in ("before", "after"):
            if f"response_{side}" in it:
                out.print(f"[dim]{side} response:[/] {escape(it[f'response_{side}'])}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``postforget-pair``: pair two directories, several (``multi``, ``chain``), or ``show`` the items that changed."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["show"]:
        return _show(argv[1:])
    if argv[:1] in (["multi"], ["chain"]):
        return _many(argv[0], argv[1:])
    return _pair(argv)


def run(argv: Sequence[str] | None = None) -> int:
    """The ``postforget-pair`` console script: :func:`main` with the process settings of a one-off run
    (:mod:`runtime`: no cyclic garbage collection, malloc keeps freed memory), then every object is
    frozen out of the collector, since the process ends next and the interpreter's final collection
    would walk all the tables of a large pairing (~0.1 s of the exit) to free memory the system frees anyway."""
    runtime.for_one_run()
    code = main(argv)
    gc.freeze()
    return code


def main_tool(argv: Sequence[str] | None = None) -> int:
    """``postforget``: ``task-dir`` prints the directory for ``lm_eval --include_path``; ``demo`` runs the demo."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="postforget", description="postforget-lmeval helpers")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("task-dir", help="print the task directory, for lm_eval --include_path")
    sub.add_parser("demo", help="a small end-to-end run (see `postforget demo --help`)", add_help=False)
    args, rest = parser.parse_known_args(argv)
    if args.command == "task-dir":
        if rest:
            parser.error(f"task-dir takes no arguments: {' '.join(rest)}")
        from postforget_lmeval import task_dir

        print(task_dir())
        return 0
    from postforget_lmeval.demo import run as demo

    return demo.main(rest) or 0
