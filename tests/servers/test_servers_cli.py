"""`dbladder db start / list / stop` as a user runs them: separate processes, the server outliving
the command that started it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dbladder.engines import EngineOptions, opened
from dbladder.servers.registry import ROOT_ENV


def dbladder(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from dbladder.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ,
    )


async def database_name(url: str) -> str:
    async with opened(url, EngineOptions(pool_size=1)) as engine, engine.read() as session:
        row = await session.fetch_one("SELECT current_database()")
        return str(row[0]) if row else ""


@pytest.mark.slow
def test_db_start_list_stop(programs, registry_dir):
    programs("postgresql")
    assert os.environ[ROOT_ENV] == str(registry_dir)

    started = dbladder("db", "start", "postgresql", "--setting", "synchronous_commit=off")
    assert started.returncode == 0, started.stderr
    url = started.stdout.strip()
    assert url.startswith("postgresql://postgres@127.0.0.1:") and url.endswith("/dbladder")
    name = "postgresql-" + url.rsplit(":", 1)[1].split("/")[0]
    # The weakened durability is said once, loudly.
    warnings = [line for line in started.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1 and "synchronous_commit" in warnings[0], started.stderr
    assert f"dbladder db stop {name}" in started.stderr

    # The command has exited; its server has not.
    assert asyncio.run(database_name(url)) == "dbladder"

    listed = dbladder("db", "list")
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.splitlines()
    assert header.split() == ["NAME", "STATE", "URL", "FOLDER"]
    assert row.split()[0] == name and "running (PID" in row and url in row
    records = json.loads(dbladder("db", "list", "--json").stdout)
    assert [r["name"] for r in records] == [name]
    assert records[0]["overrides"] == {"synchronous_commit": "off"} and records[0]["running"] is True
    folder = Path(records[0]["folder"])

    neither = dbladder("db", "stop")
    assert neither.returncode == 2 and "Error: name one managed server" in neither.stderr
    unknown = dbladder("db", "stop", "postgresql-1")
    assert unknown.returncode == 2
    assert f"no managed server named 'postgresql-1' (registered: {name};" in unknown.stderr

    stopped = dbladder("db", "stop", name)
    assert stopped.returncode == 0, stopped.stderr
    assert stopped.stdout == f"stopped {name} and removed {folder}\n"
    assert not folder.exists()
    assert dbladder("db", "list").stdout.startswith("no managed servers")


def test_db_start_refuses_sqlite_and_bad_settings(registry_dir):
    sqlite = dbladder("db", "start", "sqlite")
    assert sqlite.returncode == 2 and "'sqlite' is not one of" in sqlite.stderr
    reserved = dbladder("db", "start", "postgresql", "--setting", "port=1", "--setting", "bad name=1")
    assert reserved.returncode == 2
    assert reserved.stderr.startswith("Error: cannot use these PostgreSQL settings: ")
    assert "port is set by dbladder" in reserved.stderr
    assert "'bad name' is not a setting name" in reserved.stderr
    malformed = dbladder("db", "start", "mariadb", "--setting", "innodb_flush_log_at_trx_commit")
    assert malformed.returncode == 2 and "--setting takes NAME=VALUE" in malformed.stderr
    assert not list(registry_dir.iterdir())
