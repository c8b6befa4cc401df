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
from cli_support import dbladder, run_main

from dbladder.engines import EngineOptions, opened
from dbladder.servers.registry import ROOT_ENV


async def database_name(url: str) -> str:
    async with opened(url, EngineOptions(pool_size=1)) as engine, engine.read() as session:
        row = await session.fetch_one("SELECT current_database()")
        return str(row[0]) if row else ""


@pytest.mark.slow
def test_db_start_list_stop(programs, registry_dir, monkeypatch, capsys):
    programs("postgresql")
    assert os.environ[ROOT_ENV] == str(registry_dir)

    # A process of its own: the server must outlive the command that started it.
    started = dbladder("db", "start", "postgresql", "--setting", "synchronous_commit=off")
    assert started.returncode == 0, started.stderr
    url = started.stdout.strip()
    assert url.startswith("postgresql://postgres@127.0.0.1:") and url.endswith("/dbladder")
    name = "postgresql-" + url.rsplit(":", 1)[1].split("/")[0]
    # The weakened durability is said once, loudly.
    warnings = [line for line in started.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1 and "synchronous_commit" in warnings[0], started.stderr
    assert f"dbladder db stop {name}" in started.stderr
    assert asyncio.run(database_name(url)) == "dbladder"

    # Listed and stopped from another process (this one).
    code, out, _ = run_main(monkeypatch, capsys, "db", "list")
    header, row = out.splitlines()
    assert code == 0 and header.split() == ["NAME", "STATE", "URL", "FOLDER"]
    assert row.split()[0] == name and "running (PID" in row and url in row
    code, out, _ = run_main(monkeypatch, capsys, "db", "list", "--json")
    records = json.loads(out)
    assert [r["name"] for r in records] == [name]
    assert records[0]["overrides"] == {"synchronous_commit": "off"} and records[0]["running"] is True
    folder = Path(records[0]["folder"])

    code, _, err = run_main(monkeypatch, capsys, "db", "stop", "postgresql-1")
    assert code == 2 and f"no managed server named 'postgresql-1' (registered: {name};" in err

    code, out, err = run_main(monkeypatch, capsys, "db", "stop", name)
    assert (code, out, err) == (0, f"stopped {name} and removed {folder}\n", "")
    assert not folder.exists()
    assert run_main(monkeypatch, capsys, "db", "list")[1].startswith("no managed servers")


def test_db_start_refuses_sqlite_and_bad_settings(monkeypatch, capsys, registry_dir):
    code, _, err = run_main(monkeypatch, capsys, "db", "start", "sqlite")
    assert code == 2 and "'sqlite' is not one of" in err
    code, _, err = run_main(
        monkeypatch, capsys, "db", "start", "postgresql", "--setting", "port=1", "--setting", "a b=1"
    )
    assert code == 2 and err.startswith("Error: cannot use these PostgreSQL settings: ")
    assert "port is set by dbladder" in err and "'a b' is not a setting name" in err
    code, _, err = run_main(
        monkeypatch, capsys, "db", "start", "mariadb", "--setting", "innodb_flush_log_at_trx_commit"
    )
    assert code == 2 and "--setting takes NAME=VALUE" in err
    code, _, err = run_main(monkeypatch, capsys, "db", "stop")
    assert code == 2 and "Error: name one managed server" in err
    assert not list(registry_dir.iterdir())


@pytest.mark.slow
def test_a_temporary_server_whose_process_was_killed_is_listed_as_left_over(
    programs, registry_dir, monkeypatch, capsys
):
    programs("mariadb")
    code = "import time; from dbladder.servers import managed_server\n"
    code += "with managed_server('mariadb') as s:\n    print(s.name, flush=True)\n    time.sleep(60)\n"
    owner = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        name = (owner.stdout.readline() if owner.stdout else "").strip()
    finally:
        owner.kill()  # SIGKILL: its `with` block never gets to remove the server
        owner.wait()
        if owner.stdout:
            owner.stdout.close()
    assert name.startswith("mariadb-")
    _, out, _ = run_main(monkeypatch, capsys, "db", "list")
    assert f"left over by ended process {owner.pid}" in out.splitlines()[1]
    status, out, _ = run_main(monkeypatch, capsys, "db", "stop", "--all")
    assert status == 0 and out.startswith(f"stopped {name} and removed ")
