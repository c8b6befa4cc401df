"""Creating a managed server: a folder, a port, the data folder, the settings, the first start.

    server = start_managed("postgresql", {"synchronous_commit": "off"})
    with managed_server("mariadb") as server:   # for a run's duration, removed after it
        ...

Whatever fails on the way, nothing is left behind: the half-made server is removed.
"""

from __future__ import annotations

import contextlib
import os
import random
import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import psutil

from ..errors import UsageError
from ..roles import RoleLimits, format_size, remove_leftovers
from . import registry
from .errors import NotManaged, ServerKilledForMemory, ServerLost, ServerStartFailed
from .kind import LOOPBACK, Layout, OsUser, ServerKind
from .managed import PORT_TAKEN, START_TIMEOUT, ManagedServer, kind_for, run_sync

# Ports are drawn from here, below Linux's default ephemeral range (32768-60999), so that the
# load generator's own outgoing connections cannot be holding the port when the server binds it.
PORT_RANGE = (20000, 32767)
# A start that fails because the port was taken meanwhile is retried on another port.
PORT_ATTEMPTS = 3


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _filesystem(path: Path) -> str:
    """The type of the filesystem holding `path` (ext4, tmpfs...): on tmpfs an fsync costs nothing."""
    best, kind = "", "unknown"
    for partition in psutil.disk_partitions(all=True):
        mount = partition.mountpoint
        if (str(path) == mount or str(path).startswith(mount.rstrip("/") + "/")) and len(mount) > len(best):
            best, kind = mount, partition.fstype
    return kind


def _free_port(taken: set[int], host: str = LOOPBACK) -> int:
    ephemeral = _ephemeral_range()
    for _ in range(200):
        port = random.randint(*PORT_RANGE)
        if port in taken or ephemeral[0] <= port <= ephemeral[1]:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((host, port))
            except OSError:
                continue
        return port
    raise ServerStartFailed(f"found no free port on {host} from {PORT_RANGE[0]} to {PORT_RANGE[1]}")


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return (32768, 60999)


def _registered_ports(root: Path) -> set[int]:
    ports = set()
    for entry in registry.entries(root):
        with contextlib.suppress(NotManaged):
            if entry.problem is None:
                ports.add(ManagedServer.load(entry.folder).port)
    return ports


def start_managed(
    engine: str,
    settings: dict[str, str] | None = None,
    base_dir: str | Path | None = None,
    timeout: float = START_TIMEOUT,
    limits: RoleLimits | None = None,
    host: str = LOOPBACK,
) -> ManagedServer:
    """Create and start a throwaway server (postgresql or mariadb) with a database `dbladder`:
    a new folder, a free port on 127.0.0.1 (or on `host`, another address of this machine: the
    database's machine of a cluster), a socket in the folder, the durable defaults with `settings`
    over them, on the CPUs and under the memory cap of `limits` (the database role's).
    It keeps running until `stop()` or `remove()`, also after this process exits. If anything
    fails, nothing is left behind."""
    kind = kind_for(engine)
    if host != LOOPBACK and not kind.other_hosts:
        raise UsageError(f"a managed {kind.title} server listens on {LOOPBACK} only, not {host}")
    effective = kind.settings_with(settings or {})
    binaries = kind.find_binaries()
    user = kind.os_user()
    # Resolved: the record names the folder as `load` will find it, links (/tmp -> ...) followed.
    root = registry.ensure_root(registry.registry_root()).resolve()
    base = Path(base_dir).resolve() if base_dir is not None else root
    base.mkdir(parents=True, exist_ok=True)
    if limits is not None and limits.memory is not None:
        _remove_left_over_cgroups(root)
    for attempt in range(PORT_ATTEMPTS):
        server = _create(kind, effective, settings or {}, binaries, user, root, base, host)
        try:
            if limits is not None:
                server.place(limits)
            _set_up(server, user, timeout)
            return server
        except ServerStartFailed:
            log = server.log_text()
            taken = any(marker in log for marker in PORT_TAKEN)
            server.remove()
            if not taken or attempt == PORT_ATTEMPTS - 1:
                raise
        except BaseException:
            server.remove()
            raise
    raise AssertionError("unreachable")


def _remove_left_over_cgroups(root: Path) -> None:
    """Remove the servers a killed run left in memory cgroups, then the cgroups: a group is only
    removed once no process is in it, and these servers' runs will never remove them."""
    for entry in registry.entries(root):
        with contextlib.suppress(NotManaged):
            if entry.problem is None:
                server = ManagedServer.load(entry.folder)
                if server.left_over and server.cgroup is not None:
                    server.remove()
    remove_leftovers()


def _create(
    kind: ServerKind,
    settings: dict[str, str],
    overrides: dict[str, str],
    binaries: dict[str, str],
    user: OsUser | None,
    root: Path,
    base: Path,
    host: str = LOOPBACK,
) -> ManagedServer:
    """A new, registered, empty instance folder and its first record."""
    taken = _registered_ports(root)
    while True:
        port = _free_port(taken, host)
        name = f"{kind.engine}-{port}"
        folder = base / name
        kind.check_socket_path(Layout(folder), port)
        try:
            folder.mkdir(mode=0o755)
        except FileExistsError:
            taken.add(port)
            continue
        try:
            registry.register(root, name, folder)
        except FileExistsError:
            folder.rmdir()
            taken.add(port)
            continue
        break
    if user is not None:
        user.own(folder)
    server = ManagedServer(
        engine=kind.engine,
        name=name,
        folder=str(folder),
        port=port,
        settings=settings,
        overrides={kind.normalise(k): str(v) for k, v in overrides.items()},
        server_version=kind.version(binaries),
        binaries=binaries,
        os_user=user.name if user is not None else None,
        registry=str(root),
        filesystem=_filesystem(folder),
        created=_now(),
        started_by=os.getpid(),
        host=host,
    )
    server.save()
    return server


def _set_up(server: ManagedServer, user: OsUser | None, timeout: float) -> None:
    """initdb or install-db, start, create the `dbladder` database; each step timed."""
    kind, layout = server.kind, server.layout
    began = time.monotonic()
    kind.create(layout, server.binaries, user, server.port, server.settings, server.host)
    created = time.monotonic()
    server.timings["init"] = round(created - began, 3)
    server.start(timeout)
    started = time.monotonic()
    server.timings["start"] = round(started - created, 3)
    run_sync(lambda: kind.connect(layout, server.port, create_database=True))
    server.timings["database"] = round(time.monotonic() - started, 3)
    server.save()


@contextlib.contextmanager
def managed_server(
    engine: str,
    settings: dict[str, str] | None = None,
    base_dir: str | Path | None = None,
    limits: RoleLimits | None = None,
    host: str = LOOPBACK,
) -> Iterator[ManagedServer]:
    """A throwaway server for the duration of the block, removed after it (also on error or Ctrl-C)."""
    server = start_managed(engine, settings, base_dir, limits=limits, host=host)
    try:
        server.temporary = True
        server.save()
        yield server
    except ServerLost:  # the run has told it already, with its level and where the rest is
        raise
    except Exception as exc:
        # Whatever the block met (a driver's "server has gone away" mid-seed), the kill for memory
        # is the cause to tell, while the group that counted it is still there.
        killed = killed_for_memory(server)
        if killed is not None:
            raise killed from exc
        raise
    finally:
        server.remove()


def killed_for_memory(server: ManagedServer) -> ServerKilledForMemory | None:
    """The error to raise when the kernel has killed a process of the server for passing its
    memory cap, or None (no cap, no kill, or a kernel that does not count them)."""
    group = server.memory_cgroup()
    kills = group.oom_kills() if group is not None else None
    if group is None or not kills:
        return None
    kind = server.kind
    return ServerKilledForMemory(
        f"the managed {kind.title} server {server.name} was killed for memory: its cap of "
        f"{format_size(group.limit)} (--memory database=...) is too small for it with "
        f"{kind.buffers_setting}={server.settings.get(kind.buffers_setting, '?')} and this data; "
        f"give it more, or smaller buffers (managed:{kind.engine}?{kind.buffers_setting}=...)"
    )
