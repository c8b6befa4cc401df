"""Passwords reach the servers from the environment and the users' own files, and never show.

Each test makes a throwaway user with a random password and drops it after. The local
PostgreSQL trusts every local connection, so it shows only that a password is kept out of every
message; that PostgreSQL really takes one from PGPASSWORD and ~/.pgpass is tested on a server of
its own that asks for it (scram-sha-256), started in a temporary folder.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from database_support import MARIADB_URL, POSTGRES_URL, postgres_admin, unique_name

from dbladder.engines import Engine, create_engine
from dbladder.errors import AuthenticationFailed, DbladderError, MissingDatabase
from dbladder.urls import parse_url


def run(coroutine):
    return asyncio.run(coroutine)


def assert_nowhere(password: str, engine: Engine, *texts: str) -> None:
    """The password is in none of the texts, nor in the engine's URL and settings as shown."""
    shown = [*texts, engine.url.redacted, repr(engine.url), repr(vars(engine).get("settings"))]
    shown.append(repr(vars(engine).get("endpoint")))
    for text in shown:
        assert password not in text, text


async def failure(engine: Engine) -> DbladderError:
    try:
        await engine.open()
    except DbladderError as exc:
        return exc
    finally:
        await engine.close()
    raise AssertionError("the connection should have failed")


# ---------------------------------------------------------------------------------------------
# MariaDB: the local server checks passwords.


def mariadb_url_for(user: str, database: str) -> str:
    url = parse_url(MARIADB_URL)
    return f"mariadb://{user}@{url.host or '127.0.0.1'}:{url.port or 3306}/{database}"


def test_mariadb_takes_the_password_from_mysql_pwd_and_never_shows_it(mariadb_user, monkeypatch, tmp_path):
    user, password, database = mariadb_user
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.my.cnf
    monkeypatch.setenv("MYSQL_PWD", password)

    async def describe():
        engine = create_engine(mariadb_url_for(user, database))
        await engine.open()
        try:
            return engine, await engine.describe()
        finally:
            await engine.close()

    engine, info = run(describe())  # MariaDB checked the password
    assert engine.url.password_source == "MYSQL_PWD"
    assert_nowhere(password, engine, info.url, repr(info), str(info.to_dict()))

    missing = create_engine(mariadb_url_for(user, database + "_missing"))
    error = run(failure(missing))
    assert isinstance(error, MissingDatabase)
    assert_nowhere(password, missing, str(error))

    wrong = secrets.token_urlsafe(16)
    monkeypatch.setenv("MYSQL_PWD", wrong)
    refused = create_engine(mariadb_url_for(user, database))
    error = run(failure(refused))
    assert isinstance(error, AuthenticationFailed) and "MYSQL_PWD" in str(error)
    assert_nowhere(wrong, refused, str(error))


def test_mariadb_takes_user_and_password_from_my_cnf_before_mysql_pwd(mariadb_user, monkeypatch, tmp_path):
    user, password, database = mariadb_user
    option_file = tmp_path / ".my.cnf"
    option_file.write_text(f"[client]\nuser={user}\npassword={password}\n")
    option_file.chmod(0o600)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MYSQL_PWD", "not-this-one")  # the mariadb client reads the file first, too

    async def current_user():
        engine = create_engine(mariadb_url_for("", database).replace("mariadb://@", "mariadb://"))
        await engine.open()
        try:
            async with engine.read() as session:
                return engine, await session.fetch_one("SELECT SUBSTRING_INDEX(CURRENT_USER(), '@', 1)")
        finally:
            await engine.close()

    engine, row = run(current_user())
    assert row == (user,)
    assert engine.url.password_source == "~/.my.cnf"
    assert_nowhere(password, engine)


# ---------------------------------------------------------------------------------------------
# PostgreSQL: the local server trusts local connections, so here only the messages are tested.


def test_postgres_never_shows_a_password_from_pgpassword(postgres_url, monkeypatch):
    admin = parse_url(POSTGRES_URL)
    role, password = unique_name("dbladder_role"), secrets.token_urlsafe(16)
    run(postgres_admin(admin, f"CREATE ROLE {role} LOGIN PASSWORD '{password}'"))
    monkeypatch.setenv("PGPASSWORD", password)
    try:
        url = parse_url(postgres_url)
        base = f"postgresql://{role}@{url.host}:{url.port}"

        async def describe():
            engine = create_engine(f"{base}/{url.database}")
            await engine.open()
            try:
                return engine, await engine.describe()
            finally:
                await engine.close()

        engine, info = run(describe())
        assert engine.url.password_source == "PGPASSWORD"
        assert_nowhere(password, engine, info.url, repr(info), str(info.to_dict()))

        missing = create_engine(f"{base}/{url.database}_missing")
        error = run(failure(missing))
        assert isinstance(error, MissingDatabase)
        assert_nowhere(password, missing, str(error))
    finally:
        run(postgres_admin(admin, f"DROP ROLE IF EXISTS {role}"))


# ---------------------------------------------------------------------------------------------
# PostgreSQL on a server of its own that asks for the password.


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def password_postgres() -> Iterator[tuple[int, str]]:
    """(port, socket folder) of a throwaway PostgreSQL on 127.0.0.1 that asks every TCP client
    for a scram-sha-256 password and trusts its own Unix socket (to set it up)."""
    bindir = Path(
        subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True).stdout.strip() or "-"
    )
    if not (bindir / "initdb").exists():
        pytest.skip("no PostgreSQL server programs (initdb) on this machine")
    folder = tempfile.mkdtemp(prefix="dbladder-pg-", dir="/tmp")
    as_owner: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no postgres user to run a server as")
        os.chown(folder, owner.pw_uid, owner.pw_gid)
        as_owner = ["runuser", "-u", "postgres", "--"]
    data, port = f"{folder}/data", _free_port()
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
    try:
        initdb = [
            "-D",
            data,
            "-U",
            "postgres",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "--no-sync",
        ]
        subprocess.run(
            [*as_owner, bindir / "initdb", *initdb],
            check=True,
            capture_output=True,
            timeout=120,
        )
        subprocess.run(
            [*as_owner, bindir / "pg_ctl", "-D", data, "-l", f"{folder}/log", "-o", options, "-w", "start"],
            check=True,
            capture_output=True,
            timeout=60,
        )
        yield port, folder
    finally:
        subprocess.run(
            [*as_owner, bindir / "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"],
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(folder, ignore_errors=True)


def test_postgres_takes_the_password_from_pgpassword_then_pgpass(password_postgres, monkeypatch, tmp_path):
    port, socket_folder = password_postgres
    role, password = unique_name("dbladder_role"), secrets.token_urlsafe(16)
    run(_postgres_admin_at(socket_folder, port, f"CREATE ROLE {role} LOGIN PASSWORD '{password}'"))
    url = f"postgresql://{role}@127.0.0.1:{port}/postgres"
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PGPASSFILE", raising=False)

    async def who(engine_url: str) -> tuple[Engine, object]:
        engine = create_engine(engine_url)
        await engine.open()
        try:
            async with engine.read() as session:
                return engine, await session.fetch_one("SELECT current_user")
        finally:
            await engine.close()

    # No password anywhere: refused, and the message says where one could be given.
    monkeypatch.delenv("PGPASSWORD", raising=False)
    error = run(failure(create_engine(url)))
    assert isinstance(error, AuthenticationFailed) and "~/.pgpass" in str(error)

    monkeypatch.setenv("PGPASSWORD", password)
    engine, row = run(who(url))
    assert row == (role,) and engine.url.password_source == "PGPASSWORD"

    wrong = secrets.token_urlsafe(16)
    monkeypatch.setenv("PGPASSWORD", wrong)
    refused = create_engine(url)
    error = run(failure(refused))
    assert isinstance(error, AuthenticationFailed) and "PGPASSWORD" in str(error)
    assert_nowhere(wrong, refused, str(error))

    # ~/.pgpass, read by asyncpg itself when neither the URL nor PGPASSWORD gives a password.
    monkeypatch.delenv("PGPASSWORD")
    pgpass = home / ".pgpass"
    pgpass.write_text(f"127.0.0.1:{port}:*:{role}:{password}\n")
    pgpass.chmod(0o600)
    engine, row = run(who(url))
    assert row == (role,) and engine.url.password is None


async def _postgres_admin_at(socket_folder: str, port: int, statement: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(host=socket_folder, port=port, user="postgres", database="postgres")
    try:
        await connection.execute(statement)
    finally:
        await connection.close()
