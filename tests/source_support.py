"""dbladder's own modules, read and parsed once a session for the tests that check the package's
shape (tests/test_layout.py, test_dialects.py, test_plan_kinds.py, test_types.py). Parsing all of
them takes 0.4-0.8 s of CPU and walking the trees 0.2 s; eight tests used to pay both."""

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
