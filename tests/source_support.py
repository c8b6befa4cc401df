"""dbladder's own modules, read and parsed once a session for the tests that check the package's
shape (tests/test_layout.py, test_dialects.py, test_plan_kinds.py, test_types.py), and the dbladder
modules each imports. Parsing all of them takes 0.4-0.8 s of CPU and walking the trees 0.2 s; eight
tests used to pay both."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import dbladder

ROOT = Path(dbladder.__file__).parent


@functools.cache
def module_paths() -> tuple[Path, ...]:
    """Every module of the package, in a stable order."""
    return tuple(sorted(ROOT.rglob("*.py")))


@functools.cache
def source_of(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@functools.cache
def tree_of(path: Path) -> ast.Module:
    """The module's tree (shared between tests: read it, never change it)."""
    return ast.parse(source_of(path))


@functools.cache
def nodes_of(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the module's tree, as `ast.walk` gives them."""
    return tuple(ast.walk(tree_of(path)))


def module_name(path: Path) -> str:
    parts = ["dbladder", *path.relative_to(ROOT).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(name: str) -> bool:
    relative = Path(*name.split(".")[1:])
    return (ROOT / relative).with_suffix(".py").exists() or (ROOT / relative / "__init__.py").exists()


@functools.cache  # five tests ask for every module's imports
def imports_of(path: Path) -> frozenset[str]:
    """The dbladder modules `path` imports (`from p import m` counts as p.m when m is a module)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in nodes_of(path):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "dbladder"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.split(".")[0] != "dbladder":
                continue
            for alias in node.names:
                found.add(f"{target}.{alias.name}" if is_module(f"{target}.{alias.name}") else target)
    return frozenset(found)
