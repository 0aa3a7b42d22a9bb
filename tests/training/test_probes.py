"""What the probes refuse before any training step: a model lm-eval's HF backend cannot drive, no tokenizer, an
output folder that holds anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from postforget_lmeval.errors import PairingError
from postforget_lmeval.training import Probes


def test_a_model_the_hf_backend_cannot_wrap_is_named(tmp_path: Path) -> None:
    import torch

    model = torch.nn.Linear(2, 2)
    with pytest.raises(PairingError, match="cannot evaluate a Linear"):
        Probes(["probe"], tmp_path).wrap(model, tokenizer=object())
    assert model.training  # put back after HFLM's eval()


def test_no_tokenizer_is_named(tmp_path: Path) -> None:
    with pytest.raises(PairingError, match="no tokenizer"):
        Probes(["probe"], tmp_path).wrap(object(), tokenizer=None)


def test_an_output_folder_that_holds_anything_is_refused(tmp_path: Path) -> None:
    Probes(["probe"], tmp_path / "new").check_output_dir()
    Probes(["probe"], tmp_path).check_output_dir()  # empty
    (tmp_path / "step_0000").mkdir()
    with pytest.raises(PairingError, match=f"{tmp_path} already exists and is not empty"):
        Probes(["probe"], tmp_path).check_output_dir()
