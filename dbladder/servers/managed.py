"""Throwaway database servers that dbladder starts, owns, kills, restarts and removes.

    server = start_managed("postgresql", {"synchronous_commit": "off"})   # create.py
    server.url          # postgresql://postgres@127.0.0.1:23456/dbladder
    server.kill()       # SIGKILL: no process gets to clean up, as in a crash
    server.restart()    # the same data folder; PostgreSQL and InnoDB run crash recovery
    server.remove()     # end it, delete the folder: nothing is left

A server lives in its own folder under the registry (`registry.py`); `server.json` there records
everything another process needs (`dbladder db list`, `db stop`) and everything a result should
carry (`record()`: version, settings, timings, filesystem). Only processes whose command line names
the instance's own folder are ever signalled.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import shutil
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

import psutil

from ..engine_registry import load, registered
from ..roles import MemoryCgroup, RoleLimits
from . import processes, registry
from .errors import BadServerSpec, NotManaged, ServerStartFailed, ServerStopFailed
from .kind import DATABASE, LOOPBACK, Layout, ServerKind, last_lines

START_TIMEOUT = 60.0
STOP_TIMEOUT = 60.0
KILL_TIMEOUT = 10.0
# Marks of the log lines that say why a server did not start (PostgreSQL reports a bad setting as
# LOG "invalid value ...", then FATAL "configuration file ... contains errors").
# How each server says that its port is taken (a start that fails so is retried on another port).
PORT_TAKEN = ("Address already in use", "could not bind", "Can't start server: Bind on TCP/IP port")
_COMPLAINTS = ("FATAL:", "PANIC:", "ERROR:", "[ERROR]", "invalid value", "could not", *PORT_TAKEN)

T = TypeVar("T")


def managed_engines() -> tuple[str, ...]:
    """The engines dbladder can start a server of: those whose registration names one."""
    return tuple(kind.name for kind in registered().kinds.values() if kind.managed_server is not None)


def kind_for(engine: str) -> ServerKind:
    """The server kind of an engine named as in URLs (aliases too: postgres, mysql), as its
    registration names it (`dbladder.engine_registry`), or BadServerSpec."""
    registry = registered()
    scheme = engine.strip().lower()
    kind = registry.kinds.get(registry.schemes.get(scheme, ""))
    if kind is not None and kind.in_process:
        raise BadServerSpec(f"{kind.label} has no server to start: use a file, {scheme}:///shop.db")
    if kind is None or kind.managed_server is None:
        raise BadServerSpec(f"no managed server for {engine!r}; choose {' or '.join(managed_engines())}")
    return _server_kind(kind.managed_server)


@functools.cache  # one instance per kind, as the servers' code has always shared it
def _server_kind(locator: str) -> ServerKind:
    server_kind: ServerKind = load(locator)()
    return server_kind


def run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to completion from synchronous code, also when the caller's thread already
    runs an event loop (then in a thread of its own)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


@dataclass
class ManagedServer:
    """One throwaway server: where it is, how it was set up, and its process while it runs."""

    engine: str
    name: str
    folder: str
    port: int
    settings: dict[str, str]  # everything written to the settings file beyond address and port
    overrides: dict[str, str]  # the caller's part of `settings`
    server_version: str
    binaries: dict[str, str]
    os_user: str | None  # the OS user the server runs as; None: the user that started it
    registry: str
    filesystem: str
    created: str
    started_by: int  # PID of the process that created it
    pid: int | None = None
    timings: dict[str, float] = field(default_factory=dict)  # seconds: init, start, database, restart
    # Started for a block (`managed_server`, `managed:` URLs): should end with the process that
    # started it, so one that outlives it was left over (the process was killed).
    temporary: bool = False
    # Its place on the machine (`--cpus database=...`, `--memory database=...`): the CPUs it and
    # every backend run on (None: any) and its memory cgroup (folder, cap in bytes, cgroup version).
    cpus: list[int] | None = None
    cgroup: str | None = None
    memory_limit: int | None = None
    cgroup_version: int | None = None
    host: str = LOOPBACK
    """The address it listens on besides its socket: loopback unless started with another."""

    @property
    def left_over(self) -> bool:
        """A temporary server whose starting process has ended: nobody will remove it."""
        return self.temporary and not psutil.pid_exists(self.started_by)

    # --- where things are

    @property
    def kind(self) -> ServerKind:
        return kind_for(self.engine)

    @property
    def layout(self) -> Layout:
        return Layout(Path(self.folder))

    @property
    def data_dir(self) -> Path:
        return self.layout.data

    @property
    def socket_dir(self) -> Path:
        return Path(self.folder)

    @property
    def socket_path(self) -> Path:
        return self.kind.socket_path(self.layout, self.port)

    @property
    def log_path(self) -> Path:
        return self.layout.log

    @property
    def settings_path(self) -> Path:
        return self.kind.settings_path(self.layout)

    @property
    def database(self) -> str:
        return DATABASE

    @property
    def url(self) -> str:
        """The TCP URL of its `dbladder` database, for any dbladder command's --db."""
        return self.kind.url(self.port, self.host)

    @property
    def socket_url(self) -> str:
        """The same database over the Unix socket."""
        return self.kind.socket_url(self.layout, self.port)

    # --- the record

    def record(self) -> dict[str, Any]:
        """Everything about this server as JSON-ready data (what `server.json` holds), with its URLs."""
        return {**asdict(self), "url": self.url, "socket_url": self.socket_url, "running": self.running()}

    def save(self) -> None:
        """Write `server.json` atomically, so a reader never sees half of it."""
        path = self.layout.record
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(json.dumps(asdict(self), indent=2) + "\n")
        os.replace(temporary, path)

    @classmethod
    def load(cls, folder: str | Path) -> ManagedServer:
        """The server recorded in `folder`, or NotManaged when there is no readable record."""
        path = Path(folder) / "server.json"
        try:
            data = json.loads(path.read_text())
            known = {f.name for f in fields(cls)}
            server = cls(**{k: v for k, v in data.items() if k in known})
        except (OSError, ValueError, TypeError) as exc:
            raise NotManaged(f"{path} is not a readable dbladder server record ({exc})") from None
        if server.engine not in managed_engines() or Path(server.folder) != Path(folder).resolve():
            raise NotManaged(f"{path} does not describe a dbladder server in {folder}")
        return server

    def memory_cgroup(self) -> MemoryCgroup | None:
        """The memory cgroup it runs in, or None when it has no cap."""
        if self.cgroup is None or self.memory_limit is None:
            return None
        return MemoryCgroup(Path(self.cgroup), self.memory_limit, self.cgroup_version or 1)

    def place(self, limits: RoleLimits) -> None:
        """Take the database role's CPUs and memory cap (a cgroup of its own, made now), before
        its first start; CgroupUnavailable if the cap cannot be made."""
        self.cpus = list(limits.cpus) if limits.cpus is not None else None
        if limits.memory is not None:
            group = MemoryCgroup.create("database", limits.memory)
            self.cgroup, self.memory_limit, self.cgroup_version = (
                str(group.folder),
                group.limit,
                group.version,
            )
        self.save()

    # --- the process

    def running(self) -> bool:
        """Whether the recorded process runs and is this instance's server."""
        return processes.is_ours(self.pid, self.kind.program, self.kind.identity_argument(self.layout))

    def log_size(self) -> int:
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0

    def log_text(self, offset: int = 0) -> str:
        """The server's log, from byte `offset` on."""
        try:
            with self.log_path.open("rb") as log:
                log.seek(offset)
                return log.read().decode(errors="replace")
        except OSError:
            return ""

    def log_tail(self, offset: int = 0) -> str:
        """What the log (from `offset`) says went wrong, on one line: its last complaints, else
        its last lines."""
        text = self.log_text(offset)
        complaints = [line for line in text.splitlines() if any(mark in line for mark in _COMPLAINTS)]
        return last_lines("\n".join(complaints)) if complaints else last_lines(text)

    def start(self, timeout: float = START_TIMEOUT) -> float:
        """Start the server on its data folder and wait until it accepts connections (after a
        kill, crash recovery runs first); the seconds that took. Does nothing if it runs."""
        if self.running():
            return 0.0
        began = time.monotonic()
        user = self.kind.os_user()
        command = self.kind.command(self.layout, self.binaries)
        offset = self.log_size()
        group = self.memory_cgroup()
        if group is not None:
            group.ensure()
        procs = group.procs if group is not None else None
        self.pid = processes.launch(command, self.log_path, self.layout.folder, user, self.cpus, procs)
        self.save()
        try:
            run_sync(lambda: self._wait_ready(began + timeout, offset))
        except BaseException:
            self._discard()
            raise
        return time.monotonic() - began

    async def _wait_ready(self, deadline: float, log_offset: int) -> None:
        delay = 0.01
        while True:
            try:
                await self.kind.connect(self.layout, self.port, create_database=False)
                return
            except Exception as exc:
                what = f"{self.kind.title} server {self.name}"
                if not processes.alive(self.pid or 0):
                    raise ServerStartFailed(
                        f"{what} exited while starting: {self.log_tail(log_offset)} (log: {self.log_path})"
                    ) from None
                if time.monotonic() >= deadline:
                    raise ServerStartFailed(
                        f"{what} did not accept connections in time "
                        f"({type(exc).__name__}: {exc}); last log lines: {self.log_tail(log_offset)} "
                        f"(log: {self.log_path})"
                    ) from None
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, 0.1)

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop the server cleanly (PostgreSQL: fast shutdown with a checkpoint; MariaDB: normal
        shutdown), or ServerStopFailed if it is still running after `timeout` seconds."""
        pid = self.pid
        if pid is not None and self.running():
            waitable = processes.as_waitable(pid)
            processes.signal_server(pid, self.kind.stop_signal)
            if not processes.wait_gone(waitable, timeout):
                raise ServerStopFailed(
                    f"{self.kind.title} server {self.name} (PID {pid}) did not stop within {timeout:g} s"
                )
        self._forget_process()

    def kill(self) -> None:
        """SIGKILL the server and every process it started (PostgreSQL: the postmaster and its
        backends; MariaDB: mariadbd), as a crash would: no shutdown, no checkpoint, no process
        left to finish anything. NotManaged if it is not running."""
        if not self.running():
            raise NotManaged(f"{self.kind.title} server {self.name} is not running: nothing to kill")
        self._force_down()

    def _force_down(self) -> None:
        pid = self.pid
        if pid is not None and self.running():
            family = processes.kill_family(pid)
            if not processes.wait_gone(family, KILL_TIMEOUT):
                raise ServerStopFailed(
                    f"{self.kind.title} server {self.name} survived SIGKILL for {KILL_TIMEOUT:g} s"
                )
        self._forget_process()

    def _discard(self) -> None:
        """End the server quickly, its data no longer wanted: `discard_signal`, SIGKILL if that
        does not end it within STOP_TIMEOUT seconds."""
        pid = self.pid
        if pid is not None and self.running():
            waitable = processes.as_waitable(pid)
            processes.signal_server(pid, self.kind.discard_signal)
            if processes.wait_gone(waitable, STOP_TIMEOUT):
                self._forget_process()
        self._force_down()

    def _forget_process(self) -> None:
        self.pid = None
        if self.layout.folder.is_dir():
            self.save()

    def restart(self, timeout: float = START_TIMEOUT) -> float:
        """Start again on the same data folder (stopping it cleanly first if it runs) and wait
        until it accepts connections; the seconds from launch until then."""
        self.stop()
        seconds = self.start(timeout)
        self.timings["restart"] = round(seconds, 3)
        self.save()
        return seconds

    def remove(self) -> None:
        """End the server and delete its folder and registry entry, leaving nothing behind: no
        process, no file, no shared memory. The data is discarded, so the ending is quick
        (`discard_signal`); a PostgreSQL that was killed is started once first, because only its
        own start releases the shared memory the kill left allocated."""
        if not self.running() and self.kind.crash_leftovers(self.layout):
            with contextlib.suppress(ServerStartFailed):
                self.start()
        self._discard()
        # A process that is still ours here would hold files open; never delete under a live server.
        if self.running():
            raise ServerStopFailed(f"{self.kind.title} server {self.name} is still running; not removing it")
        if self.layout.folder.is_dir():
            shutil.rmtree(self.folder)
        registry.unregister(Path(self.registry), self.name)
        group = self.memory_cgroup()
        if group is not None:
            group.remove()
