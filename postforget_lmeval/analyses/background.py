"""Work done in a forked process while the caller goes on: the analyses' two long steps.

After the join, pairing has one busy process on a machine with several cores: the bootstrap's
draws and reading back the unanswered replies (for the failure modes) each take about as long as
building the tables, so each runs in a forked child that inherits its inputs (nothing is pickled on
the way in) and sends back a small result.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
YIELD = 10
"""Niceness of a step expected to finish well before the one running beside it: while the caller is still
busy, three processes share the cores, and the scheduler then serves the longer step first (the caller
waits for both)."""


def in_background(compute: Callable[[], T], worth_it: bool = True, nice: int = 0) -> Callable[[], T]:
    """``compute()`` in a forked process (``nice`` added to its niceness); call the returned function to
    wait for its result.

    Where a process does not pay (``worth_it`` False), on platforms without fork and in daemonic
    callers, ``compute()`` runs in the caller when the returned function is called. An exception
    ``compute()`` raises in the child is raised again by the returned function; if the child dies
    (killed, out of memory), the result is computed in the caller instead.
    """
    if (
        not worth_it
        or "fork" not in multiprocessing.get_all_start_methods()
        or multiprocessing.current_process().daemon  # a daemonic process may not start one
    ):
        return compute
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)

    def child() -> None:
        if nice:
            os.nice(nice)
        try:
            try:
                outcome = (True, compute())
            except Exception as e:  # noqa: BLE001 - handed to the caller, which raises it
                outcome = (False, e)
            send.send(outcome)
        finally:
            send.close()

    process = ctx.Process(target=child, daemon=True)
    process.start()
    send.close()

    def result() -> T:
        try:
            ok, value = receive.recv()
        except EOFError:
            return compute()
        finally:
            receive.close()
            process.join()
        if not ok:
            raise value
        return value

    return result
