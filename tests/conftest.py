"""Shared fixtures: the reference material beside the checkout, skipped with a reason where it is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import paths


@pytest.fixture
def reference_logs() -> Path:
    """Real lm-eval ``--log_samples`` runs published by others (``../shared/reference/lmeval_logs``)."""
    logs = paths.REFERENCE / "lmeval_logs"
    if not logs.is_dir():
        pytest.skip("the reference logs are not beside the checkout")
    return logs
