"""What every command prints with: rich consoles, markup escaping, the progress bar, one-line errors."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

from postforget_lmeval.report.paper_table import stdout_console

MAX_WARNINGS = 20
"""Warnings shown on the terminal; summary.json has them all."""

__all__ = ["MAX_WARNINGS", "Bar", "consoles", "err_console", "escape", "failed"]


def err_console() -> Console:
    return Console(stderr=True, soft_wrap=True, emoji=False)  # a path may hold ":name:" (an emoji code to rich)


def consoles() -> tuple[Console, Console]:
    """stdout (wide when piped: see :func:`~postforget_lmeval.report.paper_table.stdout_console`) and stderr."""
    return stdout_console(), err_console()


def failed(err: Console, e: Exception, output: str | None = None) -> int:
    """One message for bad input (PairingError) or an output directory that cannot be written; exit 1."""
    if isinstance(e, OSError) and output is not None:
        err.print(f"[bold red]error:[/] cannot write to {escape(str(output))}: {escape(str(e))}")
    else:
        err.print(f"[bold red]error:[/] {escape(str(e))}")
    return 1


class Bar:
    """A progress bar over the bytes of the sample logs, started on the first update."""

    def __init__(self, console: Console) -> None:
        self.progress = Progress(
            "[progress.description]{task.description}", BarColumn(), DownloadColumn(), TransferSpeedColumn(),
            TimeRemainingColumn(), console=console, transient=True,
        )  # fmt: skip
        self.task: int | None = None

    def __call__(self, done: int, total: int) -> None:
        if self.task is None:
            self.progress.start()
            self.task = self.progress.add_task("reading sample logs", total=total)
        self.progress.update(self.task, completed=done)

    def stop(self) -> None:
        if self.task is not None:
            self.progress.stop()
