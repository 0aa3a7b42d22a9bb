"""Work in a forked process (``background.in_background``): its result, its priority, and the fallbacks."""

from __future__ import annotations

import os

import pytest

from postforget_lmeval.analyses import background

pytestmark = pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(), reason="fork")


def test_the_result_comes_from_another_process_at_the_niceness_asked() -> None:
    here = os.getpid(), os.nice(0)
    plain = background.in_background(lambda: (os.getpid(), os.nice(0)))
    lowered = background.in_background(lambda: (os.getpid(), os.nice(0)), nice=background.YIELD)
    (pid, niceness), (pid_low, niceness_low) = plain(), lowered()
    assert pid != here[0] and pid_low != here[0]
    assert niceness == here[1]
    assert niceness_low == min(19, here[1] + background.YIELD)  # the kernel caps niceness at 19
    assert os.nice(0) == here[1]  # the caller's own priority is unchanged


def test_not_worth_a_process_runs_in_the_caller_when_awaited() -> None:
    calls = []
    wait = background.in_background(lambda: calls.append(os.getpid()) or "done", worth_it=False, nice=5)
    assert calls == []  # nothing runs until the result is asked for
    assert wait() == "done" and calls == [os.getpid()]


def test_a_child_that_dies_is_replaced_by_the_caller() -> None:
    parent = os.getpid()

    def compute() -> int:
        if os.getpid() != parent:
            os._exit(1)  # killed before it could send anything
        return 7

    assert background.in_background(compute)() == 7


def test_an_exception_in_the_child_is_raised_by_the_caller() -> None:
    parent = os.getpid()

    def compute() -> None:
        raise OSError(f"disk full in {'the child' if os.getpid() != parent else 'the caller'}")

    with pytest.raises(OSError, match="disk full in the child"):  # raised again as it was, not recomputed
        background.in_background(compute)()
