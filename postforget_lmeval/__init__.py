"""postforget-lmeval: sample-wise forgetting and backward transfer for lm-evaluation-harness runs.

The public names are importable from here; the subpackages hold the rest (see docs/architecture.md).
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from postforget_lmeval.errors import PairingError

if TYPE_CHECKING:
    from postforget_lmeval.api import pair
    from postforget_lmeval.pairing.options import PairOptions
    from postforget_lmeval.pairing.results import PairResult
    from postforget_lmeval.report.files import write_outputs
    from postforget_lmeval.scoring.extraction import extract_answer

__version__ = "0.1.0"
__all__ = [
    "ForgettingCallback",
    "PairOptions",
    "PairResult",
    "PairingError",
    "extract_answer",
    "pair",
    "task_dir",
    "write_outputs",
]

_LAZY = {
    "pair": "postforget_lmeval.api",
    "PairOptions": "postforget_lmeval.pairing.options",
    "PairResult": "postforget_lmeval.pairing.results",
    "write_outputs": "postforget_lmeval.report.files",
    "extract_answer": "postforget_lmeval.scoring.extraction",
    "ForgettingCallback": "postforget_lmeval.training",
}


def __getattr__(name: str) -> Any:
    """The public names on first use, so that ``import postforget_lmeval`` (lm-eval's task hooks do) stays light."""
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def task_dir() -> str:
    """The installed ``task_configs`` directory, for ``lm_eval --include_path``."""
    from importlib import resources

    return str(Path(str(resources.files(f"{__name__}.task_configs"))))
