"""postforget-pair starts its reading processes before it loads pandas or rich (docs/architecture.md): both then
load while the logs are read. Checked in a fresh interpreter on a pair written here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers.lmeval_runs import ours, write_run

PROBE = """
import json, sys
from postforget_lmeval.cli import main as cli
from postforget_lmeval.pairing import reading

loaded = {}
start = reading.start

def spy(*args, **kwargs):
    begun = start(*args, **kwargs)
    loaded.update({name: name in sys.modules for name in ("pandas", "rich", "pyarrow")})
    return begun

reading.start = spy
code = cli.main([sys.argv[1], sys.argv[2], "-o", sys.argv[3], "-q", "--no-plot"])
print(json.dumps({"code": code, **loaded}))
"""


def test_readers_start_before_pandas_and_rich_are_loaded(tmp_path: Path) -> None:
    write_run(tmp_path / "before", ours("mmlu_x", "1100"))
    write_run(tmp_path / "after", ours("mmlu_x", "1010"))
    args = [str(tmp_path / "before"), str(tmp_path / "after"), str(tmp_path / "out")]
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=True)
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got == {"code": 0, "pandas": False, "rich": False, "pyarrow": False}
    assert (tmp_path / "out" / "subtasks.csv").exists()
