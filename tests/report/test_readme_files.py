"""The README's table of output files lists every file ``write_outputs`` writes, and nothing it does not."""

from __future__ import annotations

import re

from postforget_lmeval import pair, write_outputs
from tests.helpers import paths
from tests.helpers.lmeval_runs import ordinary, write_run


def readme_files() -> set[str]:
    """The file names in the first column of the README's table under ``| file | what it holds |``."""
    text = (paths.ROOT / "README.md").read_text(encoding="utf-8")
    table = text[text.index("| file | what it holds |") :].split("\n\n", 1)[0]
    first = [line.split("|")[1] for line in table.splitlines()[2:]]
    return {name for cell in first for name in re.findall(r"`([^`]+)`", cell)}


def test_the_readme_lists_every_output_file(tmp_path):
    """Two seeds of a log-likelihood multiple-choice task: every optional file is written (agreement, drift)."""
    for side, bits in (("before", "1111100000"), ("after", "1110010000")):
        for seed in (0, 1):
            mc = {"mc_task": {"output_type": "multiple_choice"}}
            write_run(tmp_path / side / f"s{seed}", ordinary("mc_task", bits, n_options=4), seed=seed, configs=mc)
    written = write_outputs(pair(tmp_path / "before", tmp_path / "after"), tmp_path / "out")
    names = {p.name for p in written if not p.name.startswith(".")}
    assert {"agreement.csv", "drift.csv", "forgetting.png"} <= names  # the case writes the optional files
    assert readme_files() == names
