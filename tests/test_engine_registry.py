"""The engines dbladder knows (`dbladder.engine_registry`): registered through an entry point group,
read lazily, and every part of an engine asked of its registration; a fifth engine from a package
outside dbladder (tests/fifth_engine/) in this process, and registrations that cannot be taken."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from fifth_engine_support import PACKAGE_ROOT, litecopy_paths, write_dist_info

from dbladder import engine_registry
from dbladder.app.environment import app_environment
from dbladder.engine_registry import ENTRY_POINT_GROUP, known_kinds, registered, run_settings
from dbladder.engines import create_engine
from dbladder.engines.activity import create_probe
from dbladder.engines.dialect import dialect_of
from dbladder.errors import UnknownEngine
from dbladder.report.settings import settings_file
from dbladder.run.config import RunConfig
from dbladder.servers import BadServerSpec, kind_for
from dbladder.service import ServiceConfig
from dbladder.urls import parse_url


@pytest.fixture
def installed(monkeypatch):
    """Install packages for this test: put folders on sys.path and read the registry again, and
    read it again after the test, without them."""

    def install(*paths: Path) -> None:
        for path in reversed(paths):
            monkeypatch.syspath_prepend(str(path))
        registered.cache_clear()

    yield install
    monkeypatch.undo()
    registered.cache_clear()


def test_dbladder_registers_its_own_engines_through_the_entry_point_group():
    own = {entry.name: entry.value for entry in entry_points(group=ENTRY_POINT_GROUP)}
    assert own == {
        "sqlite": "dbladder.engines.sqlite:KIND",
        "postgresql": "dbladder.engines.postgres:KIND",
        "mariadb": "dbladder.engines.mariadb:KIND",
    }
    assert [kind.name for kind in known_kinds()] == ["mariadb", "postgresql", "sqlite"]
    assert dict(registered().schemes) == {
        "mariadb": "mariadb",
        "mysql": "mariadb",
        "postgresql": "postgresql",
        "postgres": "postgresql",
        "sqlite": "sqlite",
    }
    assert registered().refused == ()


def test_reading_the_registry_imports_no_engine_driver():
    # The command line's start-up and the reports read registrations, never a driver: parse a URL
    # of each engine (which reads every registration) in a fresh interpreter and look.
    code = (
        "import sys, dbladder.cli\n"
        "from dbladder.urls import parse_url\n"
        "kinds = [parse_url(u).kind.label for u in ('sqlite:///x.db', 'postgres://h/d', 'mysql://h/d')]\n"
        "drivers = sorted(m for m in sys.modules if m.split('.')[0] in ('apsw', 'asyncpg', 'asyncmy'))\n"
        "engines = sorted(m for m in sys.modules if m.startswith('dbladder.engines.'))\n"
        "print(kinds, drivers, engines)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split("] [") == [
        "['SQLite', 'PostgreSQL', 'MariaDB'",
        "",
        "'dbladder.engines.base', 'dbladder.engines.mariadb', 'dbladder.engines.postgres', "
        "'dbladder.engines.sqlite']\n",
    ]


def test_every_part_of_an_engine_from_another_package_is_asked_of_its_registration(tmp_path, installed):
    installed(*litecopy_paths(tmp_path / "site"))
    url = parse_url(f"litecopy:///{tmp_path}/copy.db")
    assert (url.engine, url.path, url.kind.label, url.kind.in_process) == (
        "litecopy",
        f"{tmp_path}/copy.db",
        "LiteCopy",
        True,
    )
    assert type(create_engine(url)).__name__ == "LiteCopyEngine"
    assert type(dialect_of(url)).__name__ == "LiteCopyDialect" and dialect_of("litecopy").kind is url.kind
    assert type(create_probe(url)).__name__ == "LiteCopyActivity"
    assert settings_file({"engine": "litecopy", "durability": {"synchronous": "FULL"}}) == (
        "PRAGMAs of LiteCopy",
        "PRAGMA synchronous = FULL;",
    )
    assert app_environment(url)["DATABASE_URL"] == f"sqlite:///{tmp_path}/copy.db"
    with pytest.raises(BadServerSpec, match=r"^LiteCopy has no server to start"):
        kind_for("litecopy")
    # Its run setting is the engine's own; SQLite's is refused on it, by name and engine.
    assert set(run_settings()) == {"sqlite_writers", "litecopy_writers"}
    assert ServiceConfig(url.raw, engine_settings={"litecopy_writers": 1}).writer_processes == 1
    problems = RunConfig(
        db_url=url.raw, engine_settings={"sqlite_writers": 1, "litecopy_writers": 2}
    ).validate()
    assert "sqlite_writers=1 applies to SQLite only, not to litecopy" in problems
    assert (
        "litecopy_writers must be 0 (every connection writes) or 1 (one writer process takes every "
        "write), not 2" in problems
    )


def test_a_registration_that_cannot_be_taken_is_left_out_and_said_why(tmp_path, installed):
    site = write_dist_info(
        tmp_path / "site",
        "broken",
        {
            "missing": "no_such_module:KIND",
            "notakind": "litecopy.parts:DIALECT",
            "litecopy": "litecopy:KIND",
            "sqlite": "litecopy:KIND",  # the name is dbladder's, and so is the scheme
        },
    )
    installed(site, PACKAGE_ROOT)
    refused = registered().refused
    assert [line.split(":")[0] for line in refused] == [
        "missing = no_such_module",
        "notakind = litecopy.parts",
        "sqlite = litecopy",
    ]
    assert "ModuleNotFoundError" in refused[0] and "it is not an EngineKind" in refused[1]
    assert "its name is 'litecopy', not the entry point's 'sqlite'" in refused[2]
    # The others still work, and a URL no engine takes says what was left out.
    assert (
        parse_url("sqlite:///x.db").kind.label == "SQLite"
        and parse_url("litecopy:///x.db").engine == "litecopy"
    )
    with pytest.raises(UnknownEngine, match=r"known schemes: litecopy, mariadb, .* \(not loaded: missing = "):
        parse_url("oracle://h/db")


def test_without_any_registration_the_error_says_to_reinstall(monkeypatch, installed):
    # dbladder installed without its metadata (a copy of the source put on the path): no engine at all.
    monkeypatch.setattr(engine_registry, "entry_points", lambda group: [])
    installed()
    with pytest.raises(UnknownEngine, match=r"known schemes: none: .* reinstall it \(pip install -e \.\)"):
        parse_url("sqlite:///x.db")
