"""postforget-lmeval: sample-wise forgetting and backward transfer for lm-evaluation-harness runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from postforget_lmeval.errors import PairingError

if TYPE_CHECKING:
    from postforget_lmeval.pairing.pair import pair
    from postforget_lmeval.pairing.results import PairResult

__version__ = "0.1.0"
__all__ = ["PairResult", "PairingError", "pair", "task_dir"]


def __getattr__(name: str) -> Any:
    """``pair`` and ``PairResult`` on first use: importing a submodule (the command line's reading
    processes start from a bare one) must not import pandas."""
    if name == "pair":
        from postforget_lmeval.pairing.pair import pair

        return pair
    if name == "PairResult":
        from postforget_lmeval.pairing.results import PairResult

        return PairResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def task_dir() -> str:
    """The installed ``task_configs`` directory, for ``lm_eval --include_path``."""
    from importlib import resources

    return str(Path(str(resources.files(f"{__name__}.task_configs"))))
