"""Pairing two directories of runs item by item: options, the run plan, the join, the output tables, the summary."""

from postforget_lmeval.errors import PairingError
from postforget_lmeval.pairing.options import PairOptions
from postforget_lmeval.pairing.pair import item_loader, pair_runs
from postforget_lmeval.pairing.results import SUBTASK_COLUMNS, TRANSITIONS, PairResult
from postforget_lmeval.pairing.run_plan import SIDES, listing

__all__ = [
    "SIDES", "SUBTASK_COLUMNS", "TRANSITIONS", "PairOptions", "PairResult", "PairingError", "item_loader", "listing",
    "pair_runs",
]  # fmt: skip
