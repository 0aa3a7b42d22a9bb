"""What a pairing produces: :class:`PairResult` (and :class:`PairingError`, defined in ``errors``).

A leaf module (it imports nothing from the package but ``metrics`` and ``errors``) so that readers, the pairing,
the analyses,
the renderers and the CLI can all name the result type without importing one another.
Writing a result to disk is :func:`postforget_lmeval.report.files.write_outputs`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from postforget_lmeval import metrics
from postforget_lmeval.errors import PairingError

__all__ = ["SUBTASK_COLUMNS", "TRANSITIONS", "PairResult", "PairingError"]

SUBTASK_COLUMNS = ("subtask", "category", "seed", *metrics.METRIC_COLUMNS)
"""The leading columns of subtasks.csv, in order; other columns (counts, analyses) follow."""
TRANSITIONS = {(1, 1): "1->1", (1, 0): "1->0", (0, 1): "0->1", (0, 0): "0->0"}
"""(correct before, correct after) -> the transition label used in samples.parquet and by `show`."""


@dataclass
class PairResult:
    """Everything ``postforget-pair`` writes (see ``outputs.write_outputs``)."""

    subtasks: pd.DataFrame  # one row per sub-benchmark and seed label
    categories: pd.DataFrame  # macro rows, then micro rows ('average' column)
    samples: pd.DataFrame  # one row per paired item, seed label and replicate
    agreement: pd.DataFrame  # the stricter all-seeds-agree variant, per sub-benchmark
    summary: dict[str, Any]
    warnings: list[str] = field(default_factory=list)  # problems: counted in summary, fatal with strict
    notes: list[str] = field(default_factory=list)  # choices made for the user, e.g. which filter
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)  # extra tables, written as <name>.csv
    # the items of seeds without a partner on the other side (join.unmatched_runs): not in the paired figures, read
    # by the noise floor, which uses every seed a side logged
    unmatched: pd.DataFrame = field(default_factory=pd.DataFrame)
    # the log-likelihood twins beside the generative runs, per paired item (pairing.twins.COLUMNS); empty if none
    twins: pd.DataFrame = field(default_factory=pd.DataFrame)
