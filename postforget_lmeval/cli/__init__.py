"""The command lines: ``postforget-pair`` (pair, ``multi``/``chain``, ``curve``, ``show``) and ``postforget``
(``task-dir``, ``demo``), one module per command. Errors a user can act on print one message and exit 1; usage
errors exit 2."""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main", "main_tool"]


def main(argv: Sequence[str] | None = None) -> int:
    """``postforget-pair``: pair two directories, several (``multi``, ``chain``), runs over steps (``curve``), or
    ``show`` the items that changed."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["show"]:
        from postforget_lmeval.cli import show

        return show.command(argv[1:])
    if argv[:1] == ["curve"]:
        from postforget_lmeval.cli import curve

        return curve.command(argv[1:])
    if argv[:1] in (["multi"], ["chain"]):
        from postforget_lmeval.cli import many

        return many.command(argv[0], argv[1:])
    from postforget_lmeval.cli import pair

    return pair.command(argv)


def main_tool(argv: Sequence[str] | None = None) -> int:
    """``postforget``: see :mod:`postforget_lmeval.cli.tool`."""
    from postforget_lmeval.cli import tool

    return tool.main(argv)
