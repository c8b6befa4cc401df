"""An engine lives in one place, its package: nothing outside `engines/` (and the server programs
of `servers/`, PostgreSQL's and MariaDB's by nature) asks which engine it is talking to, names an
engine's package or class, or threads an engine's run setting by name.

Every module is read with `ast`. Any comparison with an engine's name (`engine == "sqlite"`,
`engine in ("postgresql", "sqlite")`, `.startswith("mariadb")`, a match case), a dict keyed by
one, or a lookup by one, is a finding; so is an import of an engine's package, a mention of one
in text ("dbladder.engines.sqlite:SQLiteEngine"), a use of one of its classes, and a variable,
attribute, argument or keyword named after a run setting an engine declares (`sqlite_writers`).
What differs between engines belongs behind the engine's registration (`dbladder.engine_registry`:
its dialect, activity probe, storage reader, server, settings file and run settings) or the
URL's kind (`DatabaseURL.kind`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from source_support import ROOT, imports_of, module_name, module_paths, nodes_of

from dbladder.engine_registry import run_settings

ENGINE_NAMES = {"sqlite", "postgresql", "postgres", "mariadb", "mysql"}
EXEMPT = ("engines/", "servers/postgres.py", "servers/mariadb.py")
"""Where engines may be named: the engines themselves, and the server programs dbladder runs for
PostgreSQL and MariaDB (their registrations name them as `managed_server`)."""
ENGINE_PACKAGES = re.compile(
    r"\bdbladder\.(engines\.(sqlite|postgres|mariadb)|servers\.(postgres|mariadb))\b"
)
ENGINE_CLASSES = re.compile(
    r"^(SQLite|Postgres|MariaDB)(Engine|Core|Loading|Snapshots|Activity|Dialect|Server)$"
)
KNOWN_NAMING = {
    "bench/config.py": "the journal-mode bench is SQLite's own (docs/chirp.md): it checks --journal-modes "
    "against SQLite's list of modes, which is not one of the parts an engine registers",
}
"""Modules that name an engine's package for another purpose than the registry's, and why."""


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


def _named_identifier(node: ast.AST) -> str | None:
    """The identifier a node names: a variable, attribute, argument, keyword or imported name."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.arg | ast.keyword):
        return node.arg
    if isinstance(node, ast.alias):
        return node.asname or node.name.rpartition(".")[2]
    return None


def _names_a_package(value: object) -> bool:
    return isinstance(value, str) and ENGINE_PACKAGES.search(value) is not None


def naming_findings(nodes: Iterable[ast.AST], imports: Iterable[str] = ()) -> list[str]:
    """Where `nodes` (a module's) and `imports` (the dbladder modules it imports) name an engine's
    package or class, or thread a run setting by its name. Docstrings may name them as examples."""
    nodes = list(nodes)
    settings = set(run_settings())
    docstrings = {id(node.value) for node in nodes if isinstance(node, ast.Expr)}
    found: list[tuple[int, str]] = []
    for node in nodes:
        name = _named_identifier(node)
        line = getattr(node, "lineno", 0)
        if name is not None and ENGINE_CLASSES.match(name):
            found.append((line, f"the class {name}"))
        elif name is not None and name in settings:
            found.append((line, f"the run setting {name}"))
        elif isinstance(node, ast.Constant) and id(node) not in docstrings and _names_a_package(node.value):
            found.append((line, f"the text {node.value!r}"))
    imported = [f"imports {target}" for target in sorted(imports) if ENGINE_PACKAGES.search(target)]
    return imported + [f"line {line}: {what}" for line, what in sorted(found)]


def test_no_module_outside_the_engines_names_an_engine_or_threads_its_setting_by_name():
    found = {}
    for path in module_paths():
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(EXEMPT) or relative in KNOWN_NAMING:
            continue
        imports = {target for target in imports_of(path) if target != module_name(path)}
        if lines := naming_findings(nodes_of(path), imports):
            found[relative] = lines
    assert found == {}, "ask the engine's registration (dbladder.engine_registry) for it instead"
    # Each exception is still one: when it goes, take it off the list.
    for relative in KNOWN_NAMING:
        path = ROOT / relative
        assert naming_findings(nodes_of(path), imports_of(path)), f"{relative} no longer names an engine"


def test_the_naming_check_sees_each_form():
    source = """
from dbladder.engines.sqlite.engine import SQLiteEngine
engine = SQLiteEngine(url)
server = servers.postgres.PostgresServer()
where = "dbladder.engines.mariadb.dialect:DIALECT"
config.sqlite_writers = 1
ServiceConfig(url, sqlite_writers=1)
def run(sqlite_writers): pass
fine = {"sqlite_writers": 1}, kind.dialect, "dbladder.engines.dialect"
"A docstring may name dbladder.engines.sqlite as an example."
"""
    nodes = list(ast.walk(ast.parse(source)))
    assert naming_findings(nodes, ["dbladder.engines.sqlite.engine", "dbladder.engines"]) == [
        "imports dbladder.engines.sqlite.engine",
        "line 2: the class SQLiteEngine",
        "line 3: the class SQLiteEngine",
        "line 4: the class PostgresServer",
        "line 5: the text 'dbladder.engines.mariadb.dialect:DIALECT'",
        "line 6: the run setting sqlite_writers",
        "line 7: the run setting sqlite_writers",
        "line 8: the run setting sqlite_writers",
    ]


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
