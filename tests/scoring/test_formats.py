"""The answer-format registry, option letters, and scoring's independence from tasks."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

import postforget_lmeval.scoring as scoring
from postforget_lmeval.scoring import FORMATS, LETTERS, AnswerFormat, get_format, option_letter


def test_registry_holds_each_format_under_its_name() -> None:
    assert set(FORMATS) == {"letter", "letters", "number"}
    for name, answer_format in FORMATS.items():
        assert isinstance(answer_format, AnswerFormat) and answer_format.name == name
        assert get_format(name) is answer_format


def test_unknown_format_is_named_in_the_error() -> None:
    with pytest.raises(
        ValueError, match=r"unknown answer format 'letterz': the known formats are letter, letters, number"
    ):
        get_format("letterz")
    with pytest.raises(ValueError, match="unknown answer format None"):
        get_format(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown answer format 'choice'"):
        scoring.extract_answer("Answer: B", ["x", "y"], "choice")


def test_formats_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        FORMATS["letter"].name = "other"  # type: ignore[misc]


def test_chance_levels() -> None:
    assert [FORMATS[name].chance_k(4) for name in ("letter", "letters", "number")] == [4.0, 15.0, 4.0]


def test_option_letters() -> None:
    assert LETTERS == "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    assert [option_letter(i) for i in (0, 1, 25)] == ["A", "B", "Z"]
    for index in (-1, 26):
        with pytest.raises(IndexError, match=f"option index {index} has no letter"):
            option_letter(index)


def test_scoring_imports_nothing_from_tasks() -> None:
    package = Path(scoring.__file__).parent
    offenders = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            if any(n == "postforget_lmeval.tasks" or n.startswith("postforget_lmeval.tasks.") for n in names):
                offenders.append(f"{path.relative_to(package)}:{node.lineno}")
    assert offenders == []
