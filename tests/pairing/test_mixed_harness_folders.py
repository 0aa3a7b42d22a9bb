"""A side's folder holding the runs of two harnesses: refused with the runs a choice would leave out, never read
as the first format found with the other's runs dropped unsaid; ``--format`` reads one and names the others.

Built from files the harnesses wrote: inspect_ai's logs (``tests/fixtures/inspect``), LightEval 0.13's details
(``tests/fixtures/lighteval``) and a real lm-eval COPA run (``../shared/reference/lmeval_logs``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from postforget_lmeval import pair
from postforget_lmeval.pairing.results import PairingError
from tests.helpers import paths

pytest.importorskip("inspect_ai.log", reason="the inspect extra is not installed")

INSPECT = paths.FIXTURES / "inspect"
LIGHTEVAL = paths.FIXTURES / "lighteval" / "v0_13"


def _mixed(tmp_path: Path, other: dict[str, Path]) -> dict[str, Path]:
    """Per side a folder with inspect's logs in ``inspect/`` and the other harness's run in ``other/``."""
    roots = {}
    for side in ("before", "after"):
        root = tmp_path / side
        shutil.copytree(INSPECT / f"{side}_eval", root / "inspect")
        shutil.copytree(other[side], root / "other")
        roots[side] = root
    return roots


@pytest.fixture
def with_lmeval(tmp_path, reference_logs):
    copa = reference_logs / "errorbars_copa_trimmed"
    return _mixed(tmp_path, {side: copa / side for side in ("before", "after")})


def test_a_folder_of_lmeval_and_inspect_runs_is_refused_naming_both_and_the_fix(with_lmeval):
    with pytest.raises(PairingError) as e:
        pair(with_lmeval["before"], with_lmeval["after"])
    message = str(e.value)
    assert message.startswith(f"before directory {with_lmeval['before']} holds the runs of several harnesses")
    assert "lmeval: 1 run file(s), e.g. " in message and "samples_copa_2026-10-01T23-15-32.942677.jsonl" in message
    assert "inspect: 2 run file(s), e.g. " in message and "synth-capitals_3kBDU6fgFp88gaH5NoWuLP.eval" in message
    assert "pass --format lmeval or --format inspect" in message


@pytest.mark.parametrize(
    ("fmt", "left_out"), [("inspect", "1 lmeval run file(s)"), ("lmeval", "2 inspect run file(s)")]
)
def test_format_reads_the_chosen_harness_and_names_the_runs_of_the_other(with_lmeval, fmt, left_out):
    result = pair(with_lmeval["before"], with_lmeval["after"], source_format=fmt, analyses=False)
    subtasks = set(result.subtasks["subtask"])
    assert subtasks == ({"copa"} if fmt == "lmeval" else {"synth_capitals", "mmlu_abstract_algebra"})
    for side in ("before", "after"):
        assert any(n.startswith(f"{side}: --format {fmt}: {left_out} under {with_lmeval[side]} not read")
                   for n in result.notes)  # fmt: skip


def test_a_folder_of_lighteval_and_inspect_runs_is_refused(tmp_path):
    roots = _mixed(tmp_path, {side: LIGHTEVAL / side for side in ("before", "after")})
    with pytest.raises(PairingError, match=r"holds the runs of several harnesses \(lighteval: 6 run file\(s\)"):
        pair(roots["before"], roots["after"])


def test_a_stray_jsonl_beside_inspect_logs_is_no_run_and_does_not_block(tmp_path):
    """lm-eval's quick check matches any ``.jsonl``; only a harness with runs there makes a folder mixed."""
    roots = _mixed(tmp_path, {side: INSPECT / "bad" / "no_samples" for side in ("before", "after")})
    for root in roots.values():
        (root / "notes.jsonl").write_text('{"note": 1}\n')
    result = pair(roots["before"], roots["after"], analyses=False)
    assert {"synth_capitals", "mmlu_abstract_algebra"} <= set(result.subtasks["subtask"])
