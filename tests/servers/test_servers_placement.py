"""A managed server on the database role's CPUs and in its memory cgroup: the postmaster and every
backend it forks after the start, MariaDB and its threads; the cgroup gone with the server. And a
server dbladder did not start is never pinned or capped."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from dbladder.engines import EngineOptions, opened
from dbladder.roles import RoleLimits, UnmanagedRole, format_cpus, memory_problem
from dbladder.servers import ServerKilledForMemory, managed_server, managed_server_for, placement_refusal

CPU = max(os.sched_getaffinity(0))


def cpus_allowed(pid: int) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"no Cpus_allowed_list for {pid}")


async def hold_connections(url: str, count: int, then) -> object:
    """Open `count` connections (PostgreSQL forks a backend for each), run `then()` while they are open."""
    async with opened(url, EngineOptions(pool_size=count)) as engine:

        async def touch() -> None:
            async with engine.read() as session:
                await session.fetch_one("SELECT 1", ())
                await asyncio.sleep(0.3)

        task = asyncio.gather(*(touch() for _ in range(count)))
        await asyncio.sleep(0.15)
        result = then()
        await task
        return result


@pytest.mark.slow
def test_the_server_and_every_backend_run_on_the_database_cpus(registry_dir, engine) -> None:
    limits = RoleLimits(cpus=(CPU,))
    with managed_server(engine, limits=limits) as server:
        assert server.pid is not None

        def family() -> list[tuple[list[str], str, list[set[int]]]]:
            # Read while the connections are open: once they close, their backends are gone. A
            # helper that ends between the listing and the reading (an autovacuum worker) is not
            # checked; the backends held open cannot end meanwhile.
            root = psutil.Process(server.pid)
            read = []
            for process in [root, *root.children(recursive=True)]:
                try:
                    threads = [os.sched_getaffinity(thread.id) for thread in process.threads()]
                    read.append((process.cmdline(), cpus_allowed(process.pid), threads))
                except (psutil.NoSuchProcess, ProcessLookupError, FileNotFoundError):
                    continue
            return read

        processes = asyncio.run(hold_connections(server.url, 4, family))
        assert isinstance(processes, list)
        if engine == "postgresql":
            # The postmaster's helpers and at least one backend per connection, forked after the start.
            assert len(processes) >= 1 + 4
        for command, allowed, threads in processes:
            assert allowed == format_cpus([CPU]), command
            assert all(cpus == {CPU} for cpus in threads), command


@pytest.mark.slow
def test_the_server_runs_in_its_memory_cgroup_which_goes_with_it(registry_dir, programs) -> None:
    problem = memory_problem()
    if problem is not None:
        pytest.skip(problem)
    programs("postgresql")
    with managed_server("postgresql", limits=RoleLimits(memory=256 << 20)) as server:
        group = server.memory_cgroup()
        assert group is not None and group.folder.is_dir()
        members = asyncio.run(hold_connections(server.url, 3, group.members))
        assert isinstance(members, list)
        root = psutil.Process(server.pid)
        everyone = {root.pid, *(child.pid for child in root.children(recursive=True))}
        assert server.pid in members and len(members) >= 4
        assert everyone <= set(members)
        folder = group.folder
    assert not folder.exists()


def test_the_machines_own_server_is_never_pinned() -> None:
    text = "postgresql://postgres@127.0.0.1:5432/postgres"
    refusal = placement_refusal(text, RoleLimits(cpus=(0,)))
    assert refusal == (
        "--cpus database: postgresql://postgres@127.0.0.1:5432/postgres is a server dbladder did not "
        "start, and dbladder never pins or caps a server it does not own; use --db managed:postgresql"
    )
    assert placement_refusal("mariadb://root@127.0.0.1:3306/x", RoleLimits(memory=1 << 30)).startswith(
        "--memory database: "
    )
    assert "SQLite runs inside the service" in (
        placement_refusal("sqlite:///x.db", RoleLimits(cpus=(0,))) or ""
    )
    assert placement_refusal(text, RoleLimits()) is None
    assert placement_refusal("managed:postgresql", RoleLimits(cpus=(0,))) is None
    with pytest.raises(UnmanagedRole), managed_server_for(text, limits=RoleLimits(cpus=(0,))):
        pass


HOLD = """
import sys, time
from dbladder.roles import RoleLimits
from dbladder.servers import managed_server
with managed_server("postgresql", limits=RoleLimits(memory=256 << 20)) as server:
    print(server.cgroup, flush=True)
    time.sleep(60)
"""


def start_holder() -> tuple[subprocess.Popen[str], Path]:
    holder = subprocess.Popen([sys.executable, "-c", HOLD], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    line = holder.stdout.readline().strip()
    holder.stdout.close()
    assert line, "the holder did not start its server"
    return holder, Path(line)


@pytest.fixture
def capped(registry_dir, programs) -> Path:
    problem = memory_problem()
    if problem is not None:
        pytest.skip(problem)
    programs("postgresql")
    return registry_dir


@pytest.mark.slow
def test_the_cgroup_is_gone_after_ctrl_c(capped) -> None:
    holder, group = start_holder()
    assert group.is_dir()
    holder.send_signal(signal.SIGINT)
    assert holder.wait(timeout=60) != 0
    assert not group.exists()


@pytest.mark.slow
def test_the_cgroup_of_a_killed_run_is_removed_by_the_next(capped) -> None:
    holder, group = start_holder()
    holder.kill()
    holder.wait()
    assert group.is_dir()  # the server still runs in it: nobody was left to end either
    with managed_server("postgresql", limits=RoleLimits(memory=256 << 20)) as server:
        assert not group.exists()
        assert server.cgroup is not None and Path(server.cgroup).is_dir()
    assert not Path(server.cgroup).exists()


def test_a_cap_below_a_managed_servers_buffers_and_what_it_needs_besides_is_refused() -> None:
    # PostgreSQL needs 96M besides its shared buffers, MariaDB 128M besides its pool (measured,
    # docs/design.md): below that the kernel kills the server for memory mid-run.
    refusal = placement_refusal("managed:postgresql", RoleLimits(memory=128 << 20))
    assert refusal == (
        "--memory database=128M: a managed PostgreSQL with shared_buffers=128MB needs at least 224M "
        "(96M besides its buffers), or the kernel kills it for memory; give more, or smaller buffers "
        "(managed:postgresql?shared_buffers=...)"
    )
    assert placement_refusal("managed:postgresql", RoleLimits(memory=224 << 20)) is None
    assert placement_refusal("managed:postgresql?shared_buffers=16MB", RoleLimits(memory=128 << 20)) is None
    # A bare shared_buffers counts 8 kB blocks: 4096 of them are 32 MB, 8192 are 64 MB.
    assert placement_refusal("managed:postgresql?shared_buffers=4096", RoleLimits(memory=128 << 20)) is None
    assert placement_refusal("managed:postgresql?shared_buffers=8192", RoleLimits(memory=128 << 20))
    assert (placement_refusal("managed:mariadb", RoleLimits(memory=128 << 20)) or "").startswith(
        "--memory database=128M: a managed MariaDB with innodb_buffer_pool_size=128M needs at least 256M"
    )
    assert (
        placement_refusal("managed:mariadb?innodb_buffer_pool_size=32M", RoleLimits(memory=256 << 20)) is None
    )
    assert placement_refusal("managed:mariadb?innodb_buffer_pool_size=1G", RoleLimits(memory=1 << 30))
    # A value the check cannot read is the server's to refuse when it starts; CPUs alone need no room.
    assert placement_refusal("managed:postgresql?shared_buffers=lots", RoleLimits(memory=128 << 20)) is None
    assert placement_refusal("managed:postgresql", RoleLimits(cpus=(0,))) is None


async def fill_shared_buffers(url: str) -> None:
    """Write some 200 MB through the server's shared buffers: each buffer it dirties is memory
    charged to its cgroup, until the 128 MB of buffers are all in use."""
    async with opened(url, EngineOptions(pool_size=1)) as engine, engine.transaction() as session:
        # INSERT, not CREATE TABLE AS or COPY: those write through a small ring of buffers.
        await session.execute("CREATE TABLE filler (pad text NOT NULL)")
        await session.execute("INSERT INTO filler SELECT repeat('x', 1000) FROM generate_series(1, 200000)")


@pytest.mark.slow
def test_a_server_killed_for_memory_says_so_in_one_line(capped) -> None:
    # Started past the placement's check (which refuses this cap for 128MB of shared buffers, see
    # above), the server is killed by the kernel once its buffers fill: the error says so, not the
    # driver's lost connection.
    with (
        pytest.raises(ServerKilledForMemory) as raised,
        managed_server("postgresql", limits=RoleLimits(memory=128 << 20)) as server,
    ):
        asyncio.run(fill_shared_buffers(server.url))
    message = str(raised.value)
    assert message.startswith(
        f"the managed PostgreSQL server {server.name} was killed for memory: its cap of 128M"
    )
    assert "shared_buffers=128MB" in message and "\n" not in message
    assert not Path(str(server.cgroup)).exists()
