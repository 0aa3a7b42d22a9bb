"""postforget-lmeval: sample-wise forgetting and backward transfer for lm-evaluation-harness runs."""

from __future__ import annotations

from pathlib import Path

from postforget_lmeval.pairing import pair
from postforget_lmeval.results import PairingError, PairResult

__version__ = "0.1.0"
__all__ = ["PairResult", "PairingError", "pair", "task_dir"]


def task_dir() -> str:
    """The installed ``task_configs`` directory, for ``lm_eval --include_path``."""
    from importlib import resources  # only here: every other command starts without it

    return str(Path(str(resources.files(__name__) / "task_configs")))
