"""Markdown tables, built one way for report.md, the analyses' section, many pairs and the sensitivity report."""

from __future__ import annotations

from collections.abc import Sequence


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A pipe table; a ``|`` or a line break inside a cell is escaped so the table stays one row per line."""

    def cell(value: object) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(map(cell, header)) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in rows]
    return "\n".join(lines)
