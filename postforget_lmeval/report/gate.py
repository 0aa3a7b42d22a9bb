"""A release gate: thresholds on the figures of a pairing, read from ``categories.csv``'s macro rows.

A rule is ``[CATEGORY:]FIGURE OP NUMBER`` with the number in percentage points, e.g. ``F_true > 2`` (OVERALL),
``STEM:F_true >= 5`` or ``*:F_true > 10`` (every category and OVERALL). FIGURE is a figure of the macro rows
(``F_true``, ``BT_true``, ``F``, ``BT``, ``acc_after``, ``F_true_beyond_noise``, ...). A rule that holds is a
failure: the gate fails when any rule holds.

What a rule reads is one choice for the whole gate (``reads``):

* ``estimate`` (the default): the macro mean over seeds, the number the table prints;
* ``interval``: the side of the 95% bootstrap interval that makes the failure certain: for ``>``/``>=`` the
  lower bound (fail only when even the interval's low end is past the threshold), for ``<``/``<=`` the upper.

A figure with no value (a sub-benchmark without a chance baseline, an interval not computed) fails its rule,
with the reason: a release gate that passes on a missing number would let anything through.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from postforget_lmeval.errors import PairingError
from postforget_lmeval.metrics import OVERALL

EXIT_FAILED = 3
"""The exit status of a pairing whose gate failed (1: an error, 2: a usage error)."""
READS = ("estimate", "interval")
_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
_NOT_SHARES = ("median_chars_before", "median_chars_after")
"""Figures of the macro rows that are not shares (characters), so not gated in percentage points."""
_RULE = re.compile(r"^\s*(?:(?P<category>[^:]+?)\s*:)?\s*(?P<figure>\w+)\s*(?P<op>>=|<=|>|<)\s*(?P<number>\S+)\s*$")


@dataclass(frozen=True)
class Rule:
    """One threshold: fails when ``figure`` of ``category`` (OVERALL, a category, or ``*`` for all) ``op``
    ``threshold`` (percentage points)."""

    text: str
    category: str
    figure: str
    op: str
    threshold: float


def parse_rule(text: str) -> Rule:
    """``[CATEGORY:]FIGURE OP NUMBER`` -> a :class:`Rule`; a :class:`PairingError` saying how to write it."""
    match = _RULE.match(text)
    number = math.nan
    if match:
        try:
            number = float(match["number"])
        except ValueError:
            pass
    if not match or not math.isfinite(number):
        raise PairingError(
            f"--fail-if {text!r}: write a rule as [CATEGORY:]FIGURE OP NUMBER, the number in percentage points, "
            "e.g. 'F_true > 2', 'STEM:F_true >= 5' or '*:F_true > 10' (OP is one of >, >=, <, <=)"
        )
    return Rule(text.strip(), (match["category"] or OVERALL).strip(), match["figure"], match["op"], number)


def _column(rule: Rule, reads: str) -> str:
    if reads == "estimate":
        return f"{rule.figure}_mean"
    return f"{rule.figure}_{'lo' if rule.op in ('>', '>=') else 'hi'}"


def evaluate(rules: Sequence[Rule], categories: pd.DataFrame, reads: str = "estimate") -> dict:
    """The verdict of ``rules`` on the macro rows of ``categories``: ``{"reads", "passed", "checks"}``, one check
    per rule and category with the value read (%), whether it failed and why. A figure that is not a column of
    the table, or a category that is not a row, is a :class:`PairingError` naming what there is."""
    if reads not in READS:
        raise PairingError(f"--gate-reads {reads!r}: choose one of {', '.join(READS)}")
    macro = categories[categories["average"] == "macro"].set_index("category")
    names = [str(c) for c in macro.index]
    checks = []
    for rule in rules:
        column = _column(rule, reads)
        if column not in macro.columns or rule.figure in _NOT_SHARES:
            figures = sorted(
                c[: -len("_mean")]
                for c in macro.columns
                if c.endswith("_mean") and c[: -len("_mean")] not in _NOT_SHARES
            )
            hint = (
                " (intervals are computed with the analyses: drop --no-analyses, or use --gate-reads estimate)"
                if reads == "interval"
                else ""
            )
            raise PairingError(
                f"--fail-if {rule.text!r}: no {column} in this pairing{hint}; figures: {', '.join(figures)}"
            )
        wanted = names if rule.category == "*" else [n for n in names if n.lower() == rule.category.lower()]
        if not wanted:
            raise PairingError(
                f"--fail-if {rule.text!r}: no category {rule.category!r} in this pairing; categories: "
                f"{', '.join(names)} (OVERALL is the default, '*' is every one)"
            )
        for name in wanted:
            value = macro.at[name, column]
            value = float(value) * 100 if pd.notna(value) else math.nan
            failed = not math.isfinite(value) or _OPS[rule.op](value, rule.threshold)
            reason = "no value" if not math.isfinite(value) else ("holds" if failed else "does not hold")
            checks.append(
                {
                    "rule": rule.text,
                    "category": name,
                    "column": column,
                    "value": None if not math.isfinite(value) else round(value, 6),
                    "threshold": rule.threshold,
                    "failed": failed,
                    "reason": reason,
                }
            )
    return {"reads": reads, "passed": not any(c["failed"] for c in checks), "checks": checks}


def describe(verdict: dict) -> list[str]:
    """The lines the terminal prints: the verdict, then one line per failing check."""
    failing = [c for c in verdict["checks"] if c["failed"]]
    if not failing:
        return [f"gate passed: {len(verdict['checks'])} check(s), none holds (reads the {verdict['reads']})"]
    lines = [f"gate FAILED: {len(failing)} of {len(verdict['checks'])} check(s) hold (reads the {verdict['reads']})"]
    for c in failing:
        value = "no value" if c["value"] is None else f"{c['column']} = {c['value']:.2f}"
        lines.append(f"  {c['rule']}  [{c['category']}]: {value}")
    return lines
