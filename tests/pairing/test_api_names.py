"""The Python API takes ``format=`` as the command line says ``--format``; ``--rescore`` names the runs it cannot
rescore instead of saying nothing."""

from __future__ import annotations

import pytest

from postforget_lmeval import PairingError, pair
from tests.helpers.lmeval_runs import ordinary, ours, write_run


@pytest.fixture()
def runs(tmp_path):
    b, a = tmp_path / "before", tmp_path / "after"
    write_run(b, {**ours("mmlu_x", "1100"), **ordinary("copa", "1100", n_options=2)})
    write_run(a, {**ours("mmlu_x", "1010"), **ordinary("copa", "1010", n_options=2)})
    return b, a


def test_format_is_accepted_as_the_command_line_spells_it(runs):
    assert pair(*runs, format="lmeval", analyses=False).summary["options"]["format"] == "lmeval"
    with pytest.raises(PairingError, match="no LightEval results"):  # the format is applied, not ignored
        pair(*runs, format="lighteval", analyses=False)
    with pytest.raises(TypeError, match="not both"):
        pair(*runs, format="lmeval", source_format="lmeval")


def test_rescore_names_the_runs_it_cannot_rescore(runs):
    result = pair(*runs, rescore="strict", analyses=False)
    (note,) = [n for n in result.notes if n.startswith("--rescore strict")]
    assert "cannot rescore 2 run(s) of copa" in note and "samples_copa_" in note
    assert "mmlu_x" not in note  # the postforget task was rescored
    assert note in result.summary["notes"]
    assert not [n for n in pair(*runs, analyses=False).notes if "rescore" in n]
