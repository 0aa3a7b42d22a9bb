"""Every command's ``--help`` works and lists its options; ``postforget pair`` is ``postforget-pair``; lm-eval's
``--output_path`` names the output folder."""

from __future__ import annotations

import pytest

from postforget_lmeval.cli import main, main_tool
from tests.helpers.lmeval_runs import ours, write_run

SHARED = (
    "--metric",
    "--k",
    "--tasks",
    "--seed-match",
    "--rescore",
    "--format",
    "--no-analyses",
    "--output_path OUT_DIR",
)


@pytest.mark.parametrize(
    ("argv", "own"),
    [
        (["--help"], ("BEFORE_DIR", "AFTER_DIR")),
        (["multi", "--help"], ("--pair NAME=BEFORE_DIR,AFTER_DIR",)),
        (["chain", "--help"], ("DIR [DIR ...]",)),
        (["curve", "--help"], ("--steps", "DIR [DIR ...]")),
    ],
)
def test_every_subcommand_help_lists_its_own_and_the_shared_options(argv, own, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    text = capsys.readouterr().out
    assert e.value.code == 0
    for option in (*own, *SHARED):
        assert option in text, option


def test_the_top_level_help_says_what_the_subcommands_options_do(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "--pair once per pair" in text and "--steps gives each run's step" in text


def test_postforget_pair_runs_postforget_pair(tmp_path, capsys):
    b, a = tmp_path / "before", tmp_path / "after"
    write_run(b, ours("mmlu_x", "1100"))
    write_run(a, ours("mmlu_x", "1010"))
    assert main_tool(["pair", str(b), str(a), "--output_path", str(tmp_path / "out"), "-q", "--no-plot"]) == 0
    assert (tmp_path / "out" / "subtasks.csv").is_file()
    with pytest.raises(SystemExit) as e:
        main_tool(["--help"])
    assert e.value.code == 0 and "pair" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["multi", "chain"])
def test_output_path_is_accepted_by_multi_and_chain(tmp_path, command):
    b, a = tmp_path / "before", tmp_path / "after"
    write_run(b, ours("mmlu_x", "1100"))
    write_run(a, ours("mmlu_x", "1010"))
    runs = ["--pair", f"x={b},{a}"] if command == "multi" else [str(b), str(a)]
    out = tmp_path / "out"
    assert main([command, *runs, "--output_path", str(out), "-q", "--no-plot"]) == 0
    assert any(out.rglob("subtasks.csv"))
