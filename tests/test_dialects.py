"""Dialects live inside their engines: nothing outside `engines/`, `servers/` and `urls.py` asks
which engine it is talking to by comparing its name.

Every module is read with `ast`, and any comparison with an engine's name (`engine == "sqlite"`,
`engine in ("postgresql", "sqlite")`, `.startswith("mariadb")`, a match case), a dict keyed by
one, or a lookup by one, is a finding. What differs between engines belongs behind the engine's
dialect (`dbladder.engines.dialect_of`) or the URL's kind (`DatabaseURL.kind`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from source_support import ROOT, module_paths, nodes_of

ENGINE_NAMES = {"sqlite", "postgresql", "postgres", "mariadb", "mysql"}
EXEMPT = ("engines/", "servers/", "urls.py")
"""Where engine names may be compared: the engines themselves, the servers dbladder runs, the URL."""


def _names(node: ast.AST) -> bool:
    """Whether `node` is an engine name, or a tuple, list or set holding one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.lower() in ENGINE_NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names(element) for element in node.elts)
    return False


def _asks_for_an_engine(node: ast.AST) -> bool:
    """Whether `node` compares with, is keyed by or looks up an engine name."""
    if isinstance(node, ast.Compare):
        return any(_names(n) for n in (node.left, *node.comparators))
    if isinstance(node, ast.Dict):
        return any(key is not None and _names(key) for key in node.keys)
    if isinstance(node, ast.Subscript):
        return _names(node.slice)
    if isinstance(node, ast.MatchValue):
        return _names(node.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        lookup = node.func.attr in ("startswith", "endswith", "get", "pop")
        return lookup and any(_names(arg) for arg in node.args)
    return False


def findings(source: str) -> list[int]:
    """The line of every comparison with, key of or lookup by an engine name in `source`."""
    return findings_among(ast.walk(ast.parse(source)))


def findings_among(nodes: Iterable[ast.AST]) -> list[int]:
    return sorted(node.lineno for node in nodes if _asks_for_an_engine(node))


def every_finding() -> dict[str, list[int]]:
    found = {}
    for path in module_paths():
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(EXEMPT):
            continue
        lines = findings_among(nodes_of(path))
        if lines:
            found[relative] = lines
    return found


def test_no_engine_name_is_compared_outside_the_engines():
    assert every_finding() == {}, "move what differs between engines behind the engine's dialect"


def test_the_check_sees_every_form_of_comparison():
    source = """
if engine == "sqlite": pass
if url.engine in ("postgresql", "mariadb"): pass
if "mysql" != name: pass
writers = {"sqlite": 1}
port = ports["mariadb"]
note = notes.get("postgresql")
if scheme.startswith("postgres"): pass
match engine:
    case "sqlite": pass
fine = engine_kind(name).in_process and "sqlite:///shop.db" == text
"""
    assert findings(source) == [2, 3, 4, 5, 6, 7, 8, 10]
