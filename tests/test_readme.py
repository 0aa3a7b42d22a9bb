"""README.md's snippets run as written. A fenced Python or shell block right after the line
``<!-- readme-test: offline -->`` is run here, offline, in an empty folder; the model and the tasks are swapped only
through the environment variables below, which the README documents next to the snippets that read them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import paths
from tests.helpers.taskfixtures import fixture_subtasks, write_overrides
from tests.helpers.tinymodel import build_tiny_model

README = paths.ROOT / "README.md"
MARKER = "<!-- readme-test: offline -->"
RUNNERS = {"python": [sys.executable], "bash": ["bash", "-e"], "sh": ["bash", "-e"], "shell": ["bash", "-e"]}
# What a marked block may read from the environment: a tiny local model, and task YAMLs of the shipped names that
# read the fixture rows (the Hugging Face Hub is not reachable from the tests).
SWAPS = ("POSTFORGET_MODEL", "POSTFORGET_INCLUDE_PATH")


def marked_blocks(text: str) -> list[tuple[int, str, str]]:
    """(line, language, code) of each fenced block that follows the marker line (blank lines between allowed)."""
    lines = text.splitlines()
    blocks = []
    for i, line in enumerate(lines):
        if line.strip() != MARKER:
            continue
        start = next(j for j in range(i + 1, len(lines)) if lines[j].strip())
        fence = re.fullmatch(r"(`{3,})(\w*)\s*", lines[start])
        if fence is None:
            raise AssertionError(f"README.md:{i + 1}: {MARKER} is not followed by a fenced code block")
        end = next(j for j in range(start + 1, len(lines)) if lines[j].strip() == fence.group(1))
        blocks.append((start + 1, fence.group(2), "\n".join(lines[start + 1 : end]) + "\n"))
    return blocks


def _prose(text: str) -> str:
    """README.md without its fenced blocks."""
    return re.sub(r"^(`{3,}).*?^\1\s*$", "", text, flags=re.M | re.S)


BLOCKS = marked_blocks(README.read_text(encoding="utf-8"))


def test_the_marker_picks_the_block_after_it() -> None:
    text = (
        "intro\n\n"
        + MARKER
        + "\n```python\nprint(1)\n```\n\n```bash\nnot marked\n```\n"
        + MARKER
        + "\n```sh\nls\n```\n"
    )
    assert marked_blocks(text) == [(4, "python", "print(1)\n"), (12, "sh", "ls\n")]
    with pytest.raises(AssertionError, match="README.md:1: .* not followed by a fenced code block"):
        marked_blocks(MARKER + "\ntext\n")


def test_the_training_snippet_is_marked_to_run() -> None:
    section = README.read_text(encoding="utf-8").split("## While a model trains", 1)[1].split("\n## ", 1)[0]
    (block,) = marked_blocks(section)
    assert block[1] == "python" and "ForgettingCallback" in block[2] and "trainer.train()" in block[2]


@pytest.mark.parametrize(("line", "language", "code"), BLOCKS, ids=[f"README.md:{b[0]}" for b in BLOCKS])
def test_a_marked_block_reads_only_the_documented_variables(line: int, language: str, code: str) -> None:
    assert language in RUNNERS, f"README.md:{line}: a marked block must be one of {sorted(RUNNERS)}, not {language!r}"
    read = set(re.findall(r"\bPOSTFORGET_[A-Z_]+", code))
    assert read <= set(SWAPS), f"README.md:{line} reads {sorted(read - set(SWAPS))}, which this test does not set"
    prose = _prose(README.read_text(encoding="utf-8"))
    assert all(f"`{name}`" in prose for name in read), f"README.md:{line}: document {sorted(read)} beside the block"


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a marked block: the swaps, no network, this checkout and its console scripts."""
    tasks = tmp_path_factory.mktemp("tasks")
    write_overrides(tasks, fixture_subtasks())
    env = {
        **os.environ,
        "POSTFORGET_MODEL": str(build_tiny_model(tmp_path_factory.mktemp("model"))),
        "POSTFORGET_INCLUDE_PATH": str(tasks),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(paths.ROOT), os.environ.get("PYTHONPATH")])),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    return env


@pytest.mark.slow
@pytest.mark.parametrize(("line", "language", "code"), BLOCKS, ids=[f"README.md:{b[0]}" for b in BLOCKS])
def test_a_marked_block_runs_as_written(
    line: int, language: str, code: str, offline: dict[str, str], tmp_path: Path
) -> None:
    script = tmp_path / ("snippet.py" if language == "python" else "snippet.sh")
    script.write_text(code, encoding="utf-8")
    (tmp_path / "tests").symlink_to(paths.ROOT / "tests")  # a block runs from a clone's root: its paths resolve
    done = subprocess.run(
        [*RUNNERS[language], str(script)], cwd=tmp_path, env=offline, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, (
        f"README.md:{line} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    )
