"""``show``: transitions by name or digits, a folder of several pairings pointed to its pair folders, and
ordinary lm-eval tasks shown with the prompt and options lm-eval logged."""

from __future__ import annotations

import pytest

from postforget_lmeval.cli import main
from postforget_lmeval.cli.show import show_items
from tests.helpers import paths
from tests.helpers.lmeval_runs import ours, write_run

COPA = paths.REFERENCE / "lmeval_logs" / "errorbars_copa_trimmed"


@pytest.fixture()
def paired(tmp_path):
    b, a = tmp_path / "before", tmp_path / "after"
    write_run(b, ours("mmlu_x", "1100"))
    write_run(a, ours("mmlu_x", "1010"))
    out = tmp_path / "out"
    assert main([str(b), str(a), "-o", str(out), "-q", "--no-plot"]) == 0
    return out


@pytest.mark.parametrize(
    ("words", "doc_id"), [(("forgotten", "10", "1->0", "Forgotten"), 1), (("gained", "01", "0->1"), 2)]
)
def test_transitions_by_name_or_digits(paired, capsys, words, doc_id):
    for word in words:
        items, total = show_items(paired, "mmlu_x", word)
        assert total == 1 and items[0]["doc_id"] == doc_id
        assert main(["show", str(paired), "--subtask", "mmlu_x", "--transition", word]) == 0
        assert f"doc_id {doc_id}" in capsys.readouterr().out


def test_an_unknown_transition_names_the_accepted_ones(paired, capsys):
    with pytest.raises(SystemExit) as e:
        main(["show", str(paired), "--subtask", "mmlu_x", "--transition", "lost"])
    assert e.value.code == 2 and "forgotten (10), gained (01), kept (11), never (00)" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["multi", "chain"])
def test_a_folder_of_several_pairings_points_to_its_pair_folders(tmp_path, capsys, command):
    b, a = tmp_path / "before", tmp_path / "after"
    write_run(b, ours("mmlu_x", "1100"))
    write_run(a, ours("mmlu_x", "1010"))
    out = tmp_path / "out"
    runs = ["--pair", f"sft={b},{a}"] if command == "multi" else [str(b), str(a)]
    assert main([command, *runs, "-o", str(out), "-q", "--no-plot"]) == 0
    (pair_folder,) = [p.parent for p in out.glob("*/samples.parquet")]
    capsys.readouterr()
    assert main(["show", str(out), "--subtask", "mmlu_x"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"postforget-pair show {pair_folder} --subtask NAME" in err
    assert f"-o {out}" not in err  # re-pairing into it would replace every pair


def test_an_ordinary_task_shows_the_logged_prompt_and_options(tmp_path, capsys):
    if not COPA.is_dir():
        pytest.skip("the reference logs are not beside the checkout")
    out = tmp_path / "out"
    assert main([str(COPA / "before"), str(COPA / "after"), "-o", str(out), "-q", "--no-plot"]) == 0
    capsys.readouterr()
    assert main(["show", str(out), "--subtask", "copa", "--transition", "gained", "--limit", "1"]) == 0
    text = capsys.readouterr().out
    assert "The man turned on the faucet therefore" in text  # the prompt, not the doc's field "effect"
    assert "A) the toilet filled with water.\nB) water flowed from the spout." in text
    assert "gold: B   before: A   after: B" in text
    assert "effect" not in text
