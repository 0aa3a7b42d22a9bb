"""``postforget``: ``task-dir`` prints the directory for ``lm_eval --include_path``; ``demo`` runs the demo;
``pair`` is ``postforget-pair`` (:func:`postforget_lmeval.cli.main_tool` runs it).

``demo`` measures what post-training makes a real model forget of real facts (``postforget_lmeval.demo.real``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from postforget_lmeval import task_dir


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="postforget", description="postforget-lmeval helpers")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("pair", help="the same as postforget-pair (`postforget-pair --help`)", add_help=False)
    sub.add_parser("task-dir", help="print the task directory, for lm_eval --include_path")
    sub.add_parser("demo", help="a real model's forgetting (`postforget demo --help`)", add_help=False)
    args, rest = parser.parse_known_args(argv)
    if args.command == "task-dir":
        if rest:
            parser.error(f"task-dir takes no arguments: {' '.join(rest)}")
        print(task_dir())
        return 0
    from postforget_lmeval.demo import real  # torch loads only for this command: the demo trains models

    return real.main(rest) or 0
