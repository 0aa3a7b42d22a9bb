"""report.html: self-contained, every section filled; rendered in headless Chromium (``make chromium`` installs it)."""

from __future__ import annotations

import html.parser
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from postforget_lmeval import pair
from postforget_lmeval.report import html as report_html
from postforget_lmeval.report.files import write_outputs
from tests.helpers.lmeval_runs import doc_for, ours, write_run

SECTIONS = (
    "summary",
    "paper-table",
    "plots",
    "accuracy",
    "transitions",
    "items",
    "paper-comparison",
    "noise-floor",
    "above-max",  # its pair has rows whose F_true exceeds F_max
    "analyses",
    "problems",
    "method",
)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


@pytest.fixture(scope="module")
def pairing_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A pair named as one of the paper's (Qwen2.5-7B → Instruct), two seeds, three sub-benchmarks."""
    root = tmp_path_factory.mktemp("report")
    docs = {i: doc_for(i, f" about the capital of country number {i}") for i in range(12)}
    bits = {
        "before": {
            0: ("111111111000", "111111110000", "111111100000"),
            1: ("111111110100", "111111101000", "111111010000"),
        },
        "after": {
            0: ("110011100011", "111100001100", "100001111100"),
            1: ("110101100011", "111000011100", "100011101100"),
        },
    }
    for side, model in (("before", "Qwen/Qwen2.5-7B"), ("after", "Qwen/Qwen2.5-7B-Instruct")):
        for seed, (piqa, arc, nav) in bits[side].items():
            tasks = {
                **ours("piqa_main", piqa, k=2, category="Commonsense", docs=docs),
                **ours("arc_easy", arc, category="Logic", docs=docs),
                **ours("bbh_navigate", nav, k=2, category="Logic", docs=docs),
            }
            write_run(root / side / f"seed{seed}", tasks, seed=seed, model_args=f"pretrained={model}")
    result = pair(root / "before", root / "after")
    write_outputs(result, root / "out")
    return root / "out"


class _Sections(html.parser.HTMLParser):
    """Section ids, and per section its table rows, item cards and embedded images."""

    def __init__(self) -> None:
        super().__init__()
        self.current: str | None = None
        self.found: dict[str, dict[str, int]] = {}
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for key in ("src", "href"):
            if a.get(key) and re.match(r"(https?:)?//", a[key] or ""):
                self.external.append(a[key] or "")
        if tag in ("script", "link", "iframe"):
            self.external.append(tag)
        if tag == "section":
            self.current = a.get("id")
            self.found[self.current or ""] = {"tr": 0, "item": 0, "img": 0, "li": 0}
        elif self.current:
            counts = self.found[self.current]
            if tag == "tr":
                counts["tr"] += 1
            elif tag == "div" and "item" in (a.get("class") or "").split():
                counts["item"] += 1
            elif tag == "img" and (a.get("src") or "").startswith("data:image/png;base64,"):
                counts["img"] += 1
            elif tag == "li":
                counts["li"] += 1


def _check_dom(text: str) -> dict[str, dict[str, int]]:
    parser = _Sections()
    parser.feed(text)
    assert parser.external == [], "report.html must not load anything from outside"
    found = parser.found
    assert list(found) == list(SECTIONS)
    assert found["paper-table"]["tr"] >= 2 * 4  # header + Commonsense, Logic, Overall; macro and micro
    assert found["plots"]["img"] == 1
    assert found["accuracy"]["tr"] == 4
    assert found["transitions"]["tr"] == 4  # header + 3 sub-benchmarks
    assert found["items"]["item"] >= 2
    assert found["paper-comparison"]["tr"] == 1 + 2 * 10 and found["paper-comparison"]["li"] >= 3
    assert found["analyses"]["tr"] >= 2
    assert found["problems"]["li"] >= 2
    return found


def test_report_html_is_self_contained_and_filled(pairing_dir: Path) -> None:
    text = (pairing_dir / "report.html").read_text(encoding="utf-8")
    _check_dom(text)
    assert "Question 1 about the capital of country number 1?" in text  # read back from the sample log
    assert "5.4 ± 0.1 (60.8)" in text  # the paper's cell for Commonsense forgetting
    assert "@media print" in text


def test_ranked_items_prefer_transitions_under_every_seed(pairing_dir: Path) -> None:
    import pandas as pd

    samples = pd.read_parquet(pairing_dir / "samples.parquet")
    top = report_html.ranked_items(samples, "1->0", n=50)
    assert top["times"].is_monotonic_decreasing and (top["times"] >= 1).all()
    both = samples[samples["transition"].astype(str) == "1->0"].groupby(["subtask", "doc_id"]).size()
    assert top["times"].iloc[0] == both.max() == 2
    assert len(top) == len(both)


def test_report_html_in_headless_chromium(pairing_dir: Path, tmp_path: Path) -> None:
    if CHROMIUM is None:
        # CI sets POSTFORGET_REQUIRE_BROWSER=1: there a missing browser is a failure, not a quiet skip.
        missing = "chromium is not installed: `make chromium` installs it"
        if os.environ.get("POSTFORGET_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{missing}, and POSTFORGET_REQUIRE_BROWSER=1 says this run must render report.html")
        pytest.skip(missing)
    page = (pairing_dir / "report.html").resolve().as_uri()
    flags = [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,2400"]
    env = {**os.environ, "HOME": str(tmp_path)}
    dom = subprocess.run([*flags, "--dump-dom", page], capture_output=True, text=True, timeout=120, env=env)
    assert dom.returncode == 0, dom.stderr[-2000:]
    _check_dom(dom.stdout)
    shot = tmp_path / "report.png"
    run = subprocess.run([*flags, f"--screenshot={shot}", page], capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    from matplotlib import image

    pixels = image.imread(str(shot))
    assert pixels.shape[:2] == (2400, 1280)
    assert pixels[..., :3].std() > 0.05  # not a blank page
    if os.environ.get("POSTFORGET_SCREENSHOT"):
        shutil.copyfile(shot, os.environ["POSTFORGET_SCREENSHOT"])
