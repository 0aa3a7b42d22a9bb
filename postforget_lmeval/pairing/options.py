"""The options of one pairing, checked once and carried whole through reading, pairing, the summary and the CLI."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Any

from postforget_lmeval.errors import PairingError

SEED_MATCH = ("auto", "exact", "order")
CHANCE_K = ("item", "paper")
"""``item``: k counted per item (this package's default); ``paper``: the official analysis code's k
(:func:`postforget_lmeval.pairing.chance_k.official_k`)."""


@dataclass(frozen=True)
class PairOptions:
    """How to pair two directories of runs.

    ``metric``/``filter``/``k`` apply to ordinary lm-eval tasks (postforget tasks log their own correctness
    and k; ``filter`` also picks among several filters of any task). ``tasks``/``exclude``: shell patterns on
    task names. ``seed_match``: 'exact' pairs equal seeds only, 'order' pairs sorted seeds in turn, 'auto'
    does 'exact' and falls back to 'order' when no seed is shared and both sides have as many. ``jobs``:
    processes reading the logs (default: the CPUs available). ``strict``: every reported problem is an
    error. ``rescore``: a policy of :mod:`postforget_lmeval.scoring` that re-extracts every postforget answer
    from its logged response instead of trusting the logged 0/1. ``source_format``: the input format of both
    sides (default: detected per directory). ``analyses``: add the analyses beyond the paper
    (:mod:`postforget_lmeval.analyses`). ``chance_k``: 'item' counts k per item; 'paper' uses the paper's
    official k, to compare with its tables like for like. ``drawn``: the items (sub-benchmark, doc_id) of a subset
    the after-run was evaluated on (``postforget-pair subset``, ``--weights``): a before item outside it is
    unpaired by design, counted in ``summary["totals"]["unpaired_undrawn"]`` and not warned about.
    """

    metric: str | None = None
    filter: str | None = None
    k: float | None = None
    tasks: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    seed_match: str = "auto"
    jobs: int | None = None
    strict: bool = False
    rescore: str | None = None
    source_format: str | None = None
    analyses: bool = True
    chance_k: str = "item"
    drawn: frozenset[tuple[str, int]] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "tasks", tuple(self.tasks or ()))
        object.__setattr__(self, "exclude", tuple(self.exclude or ()))
        if self.seed_match not in SEED_MATCH:
            raise PairingError(f"--seed-match must be one of {', '.join(SEED_MATCH)}, not {self.seed_match!r}")
        if self.k is not None and not self.k >= 1:
            raise PairingError(f"--k must be the number of options (>= 1), not {self.k}")
        if self.chance_k not in CHANCE_K:
            raise PairingError(f"--chance-k must be one of {', '.join(CHANCE_K)}, not {self.chance_k!r}")
        if self.jobs is not None and self.jobs < 1:
            raise PairingError(f"--jobs must be at least 1, not {self.jobs}")
        _check_rescore(self.rescore)
        if self.drawn is not None:
            object.__setattr__(self, "drawn", frozenset((str(s), int(d)) for s, d in self.drawn))

    @classmethod
    def of(cls, options: PairOptions | None, **overrides: Any) -> PairOptions:
        """``options`` with keyword ``overrides`` (the keyword form of :func:`postforget_lmeval.pair`)."""
        unknown = set(overrides) - {f.name for f in fields(cls)}
        if unknown:
            raise TypeError(f"unknown pairing option(s): {', '.join(sorted(unknown))}")
        base = options or cls()
        return cls(**{f.name: overrides.get(f.name, getattr(base, f.name)) for f in fields(cls)})

    @property
    def processes(self) -> int:
        """The reading processes: ``jobs``, else the CPUs this process may run on."""
        if self.jobs:
            return self.jobs
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1

    def summary(self) -> dict[str, Any]:
        """The options as summary.json records them."""
        return {
            "metric": self.metric, "filter": self.filter, "k": self.k, "tasks": list(self.tasks),
            "exclude": list(self.exclude), "seed_match": self.seed_match, "jobs": self.processes,
            "rescore": self.rescore, "format": self.source_format, "chance_k": self.chance_k,
        }  # fmt: skip


def _check_rescore(rescore: str | None) -> None:
    if rescore is None:
        return
    from postforget_lmeval.scoring.rescoring import POLICIES

    if rescore not in POLICIES:
        several = "," in rescore
        raise PairingError(
            f"--rescore {rescore}: "
            + (
                "pair() takes one policy; several are compared side by side by the sensitivity report"
                if several
                else f"unknown policy; choose one of {', '.join(POLICIES)}"
            )
        )
