"""The package reads one way (docs/architecture.md): an AST walk over every module finds no import circle,
no import against the direction tasks/scoring | sources -> pairing -> analyses -> report -> cli, and no
import of another subpackage's internals."""

from __future__ import annotations

import ast
from pathlib import Path

import postforget_lmeval

PACKAGE = Path(postforget_lmeval.__file__).parent
NAME = "postforget_lmeval"
RANK = {
    "errors": 0, "metrics": 0, "scoring": 1, "tasks": 2, "sources": 3, "pairing": 4, "analyses": 5, "api": 6,
    "report": 7, "cli": 8, "demo": 8, "training": 8,
}  # fmt: skip
"""A module may import modules of its own part and of parts ranked lower, never higher."""
PUBLIC_SOURCES = f"{NAME}.sources"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(path: Path, module: str) -> set[str]:
    """Every module of the package that ``path`` imports, at the top or inside a function."""
    found = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith(NAME))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            if not base.startswith(NAME):
                continue
            for alias in node.names:  # `from pkg import module` imports that module
                candidate = f"{base}.{alias.name}"
                found.add(candidate if candidate in MODULES else base)
    return {m for m in found if m != module}


MODULES = _modules()
GRAPH = {m: _imports(p, m) & set(MODULES) for m, p in MODULES.items()}


def _part(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_part_has_a_rank() -> None:
    assert {_part(m) for m in MODULES} - {None} <= set(RANK)


def test_imports_run_one_way() -> None:
    wrong = [
        f"{m} imports {d}"
        for m, deps in GRAPH.items()
        for d in deps
        if _part(m) and _part(d) and _part(m) != _part(d) and RANK[_part(d)] > RANK[_part(m)]
    ]
    assert not wrong, "\n".join(sorted(wrong))


def test_scoring_does_not_import_tasks() -> None:
    wrong = [
        f"{m} imports {d}" for m, deps in GRAPH.items() for d in deps if _part(m) == "scoring" and _part(d) == "tasks"
    ]
    assert not wrong, "\n".join(wrong)


def test_no_module_reaches_into_another_parts_internals() -> None:
    """Outside a subpackage, only its public names (its ``__init__``) and public modules are imported; the input
    sources are reached only through ``postforget_lmeval.sources``."""
    wrong = []
    for m, deps in GRAPH.items():
        for d in deps:
            if _part(d) == _part(m):
                continue
            private = any(p.startswith("_") and p != "__init__" for p in d.split(".")[2:])
            if private or (_part(d) == "sources" and d != PUBLIC_SOURCES):
                wrong.append(f"{m} imports {d}")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_import_circle() -> None:
    seen: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        seen[node] = 1
        path.append(node)
        for dep in sorted(GRAPH[node]):
            if seen.get(dep) == 1:
                raise AssertionError("import circle: " + " -> ".join(path[path.index(dep) :] + [dep]))
            if dep not in seen:
                visit(dep)
        path.pop()
        seen[node] = 2

    for module in sorted(GRAPH):
        if module not in seen:
            visit(module)
