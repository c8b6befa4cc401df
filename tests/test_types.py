"""The shared type aliases (dbladder.types) are defined there once, and nowhere else."""

from __future__ import annotations

import ast
from pathlib import Path

from source_support import ROOT, module_paths, tree_of


def assigned_names(path: Path) -> list[tuple[int, str]]:
    """(line, name) of every name a module assigns at its top level."""
    return [
        (node.lineno, target.id)
        for node in tree_of(path).body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    ]


ALIASES = {name for _, name in assigned_names(ROOT / "types.py")}


def test_no_other_module_defines_an_alias_of_the_same_name() -> None:
    # Two `Args` (a statement's values, an operation's arguments) once meant two things under one
    # name; a second definition of any shared alias is how that starts again.
    again = sorted(
        f"{path.relative_to(ROOT)}:{line} {name}"
        for path in module_paths()
        if path != ROOT / "types.py"
        for line, name in assigned_names(path)
        if name in ALIASES
    )
    assert {"Row", "SqlParams", "Args", "Sizes", "QueryCounts"} <= ALIASES
    assert again == []
