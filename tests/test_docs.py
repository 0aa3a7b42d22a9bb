"""The README is a front door (about 200 lines at most) and every page it or docs/ links to exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import paths

PAGES = [paths.ROOT / "README.md", *sorted((paths.ROOT / "docs").glob("*.md"))]
CODE = re.compile(r"```.*?```", re.S)


def _anchor(heading: str) -> str:
    """A heading as GitHub makes its anchor: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_readme_is_short() -> None:
    assert len((paths.ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", CODE.sub("", page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md":
            headings = re.findall(r"^#+ (.*)$", CODE.sub("", dest.read_text(encoding="utf-8")), re.M)
            if anchor not in {_anchor(h) for h in headings}:
                broken.append(target)
    assert not broken, f"{page.name}: broken links {broken}"
