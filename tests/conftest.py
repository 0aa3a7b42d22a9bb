"""Shared fixtures: the reference material beside the checkout, skipped with a reason where it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests.helpers import paths

# Property tests draw the same cases on every run (CI and `make test`), so a red run can be rerun and a
# green one means the same thing twice; `make test-random` (HYPOTHESIS_PROFILE=random) draws new cases.
settings.register_profile("derandomized", derandomize=True, database=None, print_blob=True)
settings.register_profile("random", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "derandomized"))


@pytest.fixture
def reference_logs() -> Path:
    """Real lm-eval ``--log_samples`` runs published by others (``../shared/reference/lmeval_logs``)."""
    logs = paths.REFERENCE / "lmeval_logs"
    if not logs.is_dir():
        pytest.skip("the reference logs are not beside the checkout")
    return logs
