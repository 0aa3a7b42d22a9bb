"""``pair()``: the paper's figures for two directories of runs, then the analyses beyond the paper."""

from __future__ import annotations

import os
import time
from typing import Any

from postforget_lmeval.analyses import annotate
from postforget_lmeval.pairing.options import PairOptions
from postforget_lmeval.pairing.pair import item_loader, pair_runs
from postforget_lmeval.pairing.results import PairResult
from postforget_lmeval.sources import Progress


def pair(
    before: str | os.PathLike[str],
    after: str | os.PathLike[str],
    options: PairOptions | None = None,
    *,
    progress: Progress | None = None,
    **overrides: Any,
) -> PairResult:
    """Pair the runs under ``before`` with those under ``after``, item by item.

    ``options`` (or the same names as keywords, e.g. ``pair(b, a, seed_match="order", analyses=False)``):
    see :class:`PairOptions`. ``progress(done_bytes, total_bytes)`` follows the reading. Raises
    :class:`~postforget_lmeval.PairingError` for input that would make the figures wrong.
    """
    options = PairOptions.of(options, **overrides)
    started = time.perf_counter()
    result = pair_runs(before, after, options, progress)
    analyses_started = time.perf_counter()
    if options.analyses:
        annotate(result, item_loader(result.samples))
    result.summary["tables"] = sorted(result.tables)
    timing = result.summary["timing"]
    timing["analyses_seconds"] = round(time.perf_counter() - analyses_started, 3)
    timing["total_seconds"] = round(time.perf_counter() - started, 3)
    return result
