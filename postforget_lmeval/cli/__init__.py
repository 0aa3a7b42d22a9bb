"""The command lines: ``postforget-pair`` (pair, ``multi``/``chain``, ``curve``, ``show``) and ``postforget``
(``task-dir``, ``demo``), one module per command. Errors a user can act on print one message and exit 1; usage
errors exit 2."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

__all__ = ["main", "main_tool"]


INTERRUPTED = 130
"""The exit status of a command stopped by Ctrl-C, as shells give it."""


def _interruptible(prog: str, command: Callable[[list[str]], int], argv: Sequence[str] | None) -> int:
    """Ctrl-C prints one line and exits 130, not a traceback; an output folder keeps its previous set."""
    try:
        return command(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        print(f"{prog}: interrupted; the output folder, if any, keeps its previous files", file=sys.stderr)
        return INTERRUPTED


def main(argv: Sequence[str] | None = None) -> int:
    """``postforget-pair``: pair two directories, several (``multi``, ``chain``), runs over steps (``curve``),
    ``show`` the items that changed, ``plan`` a study from a pilot, or draw a ``subset`` for the after-run."""
    return _interruptible("postforget-pair", _pair, argv)


def _pair(argv: list[str]) -> int:
    if argv[:1] == ["show"]:
        from postforget_lmeval.cli import show

        return show.command(argv[1:])
    if argv[:1] == ["plan"]:
        from postforget_lmeval.cli import plan

        return plan.command(argv[1:])
    if argv[:1] == ["subset"]:
        from postforget_lmeval.cli import subset

        return subset.command(argv[1:])
    if argv[:1] == ["curve"]:
        from postforget_lmeval.cli import curve

        return curve.command(argv[1:])
    if argv[:1] in (["multi"], ["chain"]):
        from postforget_lmeval.cli import many

        return many.command(argv[0], argv[1:])
    from postforget_lmeval.cli import pair

    return pair.command(argv)


def main_tool(argv: Sequence[str] | None = None) -> int:
    """``postforget``: see :mod:`postforget_lmeval.cli.tool`; ``postforget pair ...`` is ``postforget-pair ...``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["pair"]:
        return _interruptible("postforget pair", _pair, args[1:])
    from postforget_lmeval.cli import tool

    return _interruptible("postforget", tool.main, args)
