"""Managed servers: a real PostgreSQL and a real MariaDB, started, written, killed with SIGKILL,
restarted and removed, through dbladder's own engines.

Every test that starts a server is marked slow: 1 to 6 s each on this machine, by its load.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from dbladder.engines import EngineOptions, opened
from dbladder.engines.base import Column, Schema, Table
from dbladder.servers import (
    ManagedServer,
    NotManaged,
    ServerStartFailed,
    fault_permission,
    find_server,
    managed_url,
    server_for_url,
    start_managed,
)

THINGS = Table("things", (Column("id", "bigint"), Column("label", "text", max_length=20)), ("id",))
SCHEMA = Schema(tables=(THINGS,))
INSERT = "INSERT INTO things (id, label) VALUES (?, ?)"
SHARED = {
    "postgresql": "postgresql://postgres@127.0.0.1:5432/postgres",
    "mariadb": "mariadb://root@127.0.0.1:3306/test",
}


def processes_in(folder: str) -> list[int]:
    """PIDs of every process whose command line mentions the folder."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if any(folder in arg for arg in process.info["cmdline"] or ()):
            found.append(process.pid)
    return found


def eventually_in_log(server: ManagedServer, text: str, timeout: float = 5) -> bool:
    """Whether `text` shows up in the server's log within `timeout` seconds (the keeper process
    writes how the server ended just after it reaps it)."""
    deadline = time.monotonic() + timeout
    while text not in server.log_path.read_text():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


async def write_then_kill(url: str, server: ManagedServer) -> None:
    """Commit row 1; start a transaction with row 2 and kill the server before it commits."""
    async with opened(url, EngineOptions(pool_size=2)) as engine:
        await engine.recreate_schema(SCHEMA)
        async with engine.transaction() as session:
            await session.execute(INSERT, (1, "committed"))
        with pytest.raises(Exception):  # noqa: B017 - the driver's own error for a dead server
            async with engine.transaction() as session:
                await session.execute(INSERT, (2, "in flight"))
                server.kill()


async def rows(url: str) -> list[tuple]:
    async with opened(url, EngineOptions(pool_size=1)) as engine, engine.read() as session:
        return [tuple(row) for row in await session.fetch_all("SELECT id, label FROM things ORDER BY id")]


async def describe(url: str):
    async with opened(url, EngineOptions(pool_size=1)) as engine:
        return await engine.describe()


@pytest.mark.slow
def test_a_committed_row_survives_kill_9_and_remove_leaves_nothing(engine, registry_dir):
    server = start_managed(engine)
    try:
        assert server.running() and server.timings["init"] > 0 and server.timings["start"] > 0
        assert server.url.startswith(
            f"{engine}://root@127.0.0.1:" if engine == "mariadb" else "postgresql://"
        )
        assert server.url.endswith(f":{server.port}/dbladder")
        info = asyncio.run(describe(server.url))
        assert info.durable, info.durability  # the durable defaults, read back from the server
        # The record another process reads says the same.
        again = find_server(server.name)
        assert (again.pid, again.port, again.settings) == (server.pid, server.port, server.settings)

        asyncio.run(write_then_kill(server.url, server))
        assert not server.running() and not psutil.pid_exists(server.pid or -1)
        assert eventually_in_log(server, "was killed by signal 9")

        seconds = server.restart()
        assert 0 < seconds < 60 and server.running()
        # Committed before the kill: kept. In flight at the kill: gone. Crash recovery ran.
        assert asyncio.run(rows(server.socket_url)) == [(1, "committed")]
        assert server.kind.crash_recovery_marker in server.log_path.read_text()
    finally:
        folder, pid = server.folder, server.pid
        server.remove()
    assert not Path(folder).exists() and not list(registry_dir.iterdir())
    assert not psutil.pid_exists(pid or -1) and processes_in(folder) == []


def shared_memory_created_by(pid: int) -> list[str]:
    """System V shared memory segments that process `pid` created (a PostgreSQL postmaster makes one)."""
    lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return [line.split()[1] for line in lines if int(line.split()[4]) == pid]


@pytest.mark.slow
def test_removing_a_killed_postgresql_releases_its_shared_memory(programs, registry_dir):
    programs("postgresql")
    server = start_managed("postgresql")
    killed = server.pid or -1
    assert shared_memory_created_by(killed)
    server.kill()
    # SIGKILL leaves the segment allocated; it is PostgreSQL's next start that releases it.
    assert shared_memory_created_by(killed)
    server.remove()
    assert shared_memory_created_by(killed) == [] and not Path(server.folder).exists()


@pytest.mark.slow
def test_a_clean_stop_and_restart_keeps_data_without_crash_recovery(programs, registry_dir):
    programs("postgresql")
    server = start_managed("postgresql")
    try:
        asyncio.run(write_rows(server.url))
        server.stop()
        assert not server.running()
        server.restart()
        assert asyncio.run(rows(server.url)) == [(1, "kept")]
        assert server.kind.crash_recovery_marker not in server.log_path.read_text()
    finally:
        server.remove()


async def write_rows(url: str) -> None:
    async with opened(url, EngineOptions(pool_size=1)) as engine:
        await engine.recreate_schema(SCHEMA)
        async with engine.transaction() as session:
            await session.execute(INSERT, (1, "kept"))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("spec", "setting", "weak", "line"),
    [
        (
            "managed:postgresql?synchronous_commit=off",
            "synchronous_commit",
            "off",
            "synchronous_commit = 'off'",
        ),
        (
            "managed:mariadb?innodb-flush-log-at-trx-commit=0",
            "innodb_flush_log_at_trx_commit",
            "0",
            "innodb-flush-log-at-trx-commit=0",
        ),
    ],
)
def test_managed_url_applies_settings_and_removes_the_server_after_the_block(
    spec, setting, weak, line, programs, registry_dir
):
    programs(spec.split(":")[1].split("?")[0])
    with managed_url(spec) as url:
        server = server_for_url(url)
        assert server is not None and server.overrides == {setting: weak} and server.settings[setting] == weak
        assert server.temporary and not server.left_over  # this process will remove it
        # Written out once, after the defaults, so the override is the value the server reads.
        written = server.settings_path.read_text().splitlines()
        assert line in written and sum(setting.replace("_", "-") in x or setting in x for x in written) == 1
        info = asyncio.run(describe(url))
        assert info.durability[setting] == weak and info.durable is False
        # Fault tests may aim at this server, and only while it runs.
        assert fault_permission(url) is None and fault_permission(server.socket_url) is None
        folder = server.folder
    assert not Path(folder).exists() and not list(registry_dir.iterdir())
    assert "not a server dbladder started" in (fault_permission(url) or "")


def test_managed_url_passes_other_urls_through(registry_dir):
    with managed_url("sqlite:///shop.db") as url:
        assert url == "sqlite:///shop.db"
    assert not list(registry_dir.iterdir())


@pytest.mark.parametrize("engine_name", ["postgresql", "mariadb"])
def test_fault_permission_refuses_servers_dbladder_did_not_start(engine_name, registry_dir):
    reason = fault_permission(SHARED[engine_name])
    assert reason is not None and "not a server dbladder started" in reason
    assert f"managed:{engine_name}" in reason
    assert "no database server" in (fault_permission("sqlite:///shop.db") or "")
    assert "not a database URL" in (fault_permission("shop.db") or "")


@pytest.mark.slow
def test_a_server_that_cannot_start_leaves_nothing_behind(programs, registry_dir):
    programs("postgresql")
    with pytest.raises(ServerStartFailed, match="shared_buffers"):
        start_managed("postgresql", {"shared_buffers": "lots"})
    assert not list(registry_dir.iterdir())


def test_a_process_that_is_not_ours_is_never_signalled(registry_dir, tmp_path):
    # A record whose PID now belongs to an unrelated process, as after a reboot or PID reuse.
    folder = registry_dir / "postgresql-20001"
    folder.mkdir()
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        server = ManagedServer(
            engine="postgresql",
            name="postgresql-20001",
            folder=str(folder),
            port=20001,
            settings={},
            overrides={},
            server_version="",
            binaries={"postgres": "/usr/lib/postgresql/15/bin/postgres"},
            os_user=None,
            registry=str(registry_dir),
            filesystem="ext4",
            created="",
            started_by=os.getpid(),
            pid=sleeper.pid,
        )
        server.save()
        assert not server.running()
        with pytest.raises(NotManaged, match="not running"):
            server.kill()
        assert "not running" in (fault_permission("postgresql://postgres@127.0.0.1:20001/x") or "")
        server.remove()
        assert sleeper.poll() is None, "the unrelated process must survive"
        assert not folder.exists()
    finally:
        sleeper.send_signal(signal.SIGKILL)
        sleeper.wait()


@pytest.mark.slow
def test_the_database_group_follows_a_server_killed_and_started_again(engine, registry_dir):
    # What a run's observer (and a db agent) samples as the database's processes after a kill-db
    # or restart-db: the server's new root and its tree, not the killed root's (which has none).
    from dbladder.observe.database import database_processes

    server = start_managed(engine)
    try:
        found = database_processes(server.url)
        first = server.pid
        assert found.how == f"port {server.port}" and found.root_pid == first
        assert first in found()
        server.kill()
        assert not server.running()
        assert found() == []  # down: nothing of it runs
        server.restart()
        assert server.pid != first
        members = found()
        assert server.pid in members and first not in members
        assert set(members) <= {
            server.pid,
            *(c.pid for c in psutil.Process(server.pid).children(recursive=True)),
        }
    finally:
        server.remove()
