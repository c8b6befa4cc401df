"""Fixtures that give each test its own real database.

SQLite tests get a file in a temporary folder. PostgreSQL and MariaDB tests get a database with a
unique name on the local server, created before the test and dropped after it (a PostgreSQL one is
emptied instead and handed to the next test, when it is then as new: tests/postgres_pool.py).
Where a server is not running, those tests skip with the reason; under CI
(DBLADDER_REQUIRE_SERVERS=1, set by .ci/run) a missing server fails them instead, so CI can never
pass by skipping.

The servers can be pointed elsewhere with DBLADDER_TEST_POSTGRES_URL and DBLADDER_TEST_MARIADB_URL
(the database part of the URL is replaced by the unique name).
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Iterator

import pytest
from database_support import MARIADB_URL, POSTGRES_URL, mariadb_admin, unique_name
from postgres_pool import PostgresDatabases

from dbladder.urls import parse_url

REQUIRE_SERVERS = os.environ.get("DBLADDER_REQUIRE_SERVERS") == "1"

# Every run watches the machine for 2 s before it starts; the suite runs about a hundred short
# ones, and no test reads that figure's precision. Runs started as subprocesses inherit it.
os.environ.setdefault("DBLADDER_IDLE_CHECK_SECONDS", "0.25")


def _unavailable(what: str, exc: BaseException) -> None:
    message = f"{what} is not reachable ({type(exc).__name__}: {exc})"
    if REQUIRE_SERVERS:
        pytest.fail(message + "; DBLADDER_REQUIRE_SERVERS=1 makes this a failure", pytrace=False)
    pytest.skip(message)


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path}/shop.db"


@pytest.fixture(scope="session")
def postgres_databases() -> Iterator[PostgresDatabases]:
    databases = PostgresDatabases(parse_url(POSTGRES_URL))
    try:
        yield databases
    finally:
        databases.close()


@pytest.fixture
def postgres_url(postgres_databases) -> Iterator[str]:
    """An empty database of its own; emptied after the test for the next one (tests/postgres_pool.py)."""
    admin = postgres_databases.admin
    try:
        name = postgres_databases.take()
    except Exception as exc:
        _unavailable(f"PostgreSQL at {admin.redacted}", exc)
    try:
        yield admin.with_database(name).raw
    finally:
        postgres_databases.give_back(name)


@pytest.fixture
def mariadb_url() -> Iterator[str]:
    admin = parse_url(MARIADB_URL)
    name = unique_name()
    try:
        asyncio.run(mariadb_admin(admin, f"CREATE DATABASE `{name}`"))
    except Exception as exc:
        _unavailable(f"MariaDB at {admin.redacted}", exc)
    try:
        yield admin.with_database(name).raw
    finally:
        asyncio.run(mariadb_admin(admin, f"DROP DATABASE IF EXISTS `{name}`"))


@pytest.fixture
def mariadb_user(mariadb_url) -> Iterator[tuple[str, str, str]]:
    """(user, password, database): a user with a random password, allowed the test's database
    and any database whose name starts with it (so a missing one is "unknown", not "denied")."""
    admin = parse_url(MARIADB_URL)
    database = parse_url(mariadb_url).database
    user, password = unique_name("dbladder_user")[:32], secrets.token_urlsafe(16)
    for host in ("127.0.0.1", "localhost"):
        asyncio.run(mariadb_admin(admin, f"CREATE USER '{user}'@'{host}' IDENTIFIED BY '{password}'"))
        asyncio.run(mariadb_admin(admin, f"GRANT ALL ON `{database}%`.* TO '{user}'@'{host}'"))
    try:
        yield user, password, database
    finally:
        for host in ("127.0.0.1", "localhost"):
            asyncio.run(mariadb_admin(admin, f"DROP USER IF EXISTS '{user}'@'{host}'"))


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def any_url(request) -> str:
    """A fresh, empty database on each engine in turn: the engine contract runs against all three."""
    fixture = {"sqlite": "sqlite_url", "postgresql": "postgres_url", "mariadb": "mariadb_url"}[request.param]
    return request.getfixturevalue(fixture)
