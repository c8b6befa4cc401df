"""Finding the database server's processes on this machine, for the "database" group.

By what it serves first: the process listening on the URL's Unix socket or TCP port (root, or
the server's own user, can see it; psutil.net_connections). PostgreSQL is then the postmaster
and all its children, backends included, re-read at every sample since a backend is forked per
connection; MariaDB is the one mariadbd process, whose threads serve the connections. When the
listener cannot be seen, by name (`postgres`/`postmaster`, `mariadbd`/`mysqld`), with a warning,
since another server of the same kind would be counted too. A server killed or restarted during a
run (a fault on purpose, a crash) is found again once its root process has gone, the way it was
found first, so the levels after it are measured too. A server on another machine cannot be
observed from here: the group is empty and the warning says so. SQLite runs inside the service,
so its group is empty by design, and its CPU is the service's.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from typing import Any

import psutil

from ..engines.base import EngineInfo
from ..engines.dialect import dialect_of
from ..errors import DbladderError
from ..urls import DatabaseURL, is_this_machine, parse_url
from .processes import Resolver, nothing, process_tree

SQLITE_HOW = "none of its own: SQLite runs inside the service, so its CPU is the service's"


@dataclass(frozen=True)
class DatabaseProcesses:
    """A resolver for the database group, how it was found, and a warning when it is not reliable.

    Call it like any resolver: it returns the server's process ids now.
    """

    resolve: Resolver
    how: str  # "socket /run/mysqld/mysqld.sock", "port 5432", "name", "not found", or SQLITE_HOW
    warning: str | None = None
    root_pid: int | None = None  # the postmaster or mariadbd

    def __call__(self) -> list[int]:
        return self.resolve()


def database_processes(
    engine_info_or_url: EngineInfo | dict[str, Any] | DatabaseURL | str,
) -> DatabaseProcesses:
    """The database server's processes for an engine (EngineInfo, its to_dict(), or a URL, parsed
    or as text).

    Never raises for a server it cannot find: the group is then empty and `warning` says why,
    so a run goes on without the database's CPU rather than failing on it.
    """
    try:
        url = (
            engine_info_or_url
            if isinstance(engine_info_or_url, DatabaseURL)
            else parse_url(_url_text(engine_info_or_url))
        )
    except DbladderError as exc:
        return DatabaseProcesses(nothing, "not found", f"cannot tell the database from {exc}")
    dialect = dialect_of(url)
    endpoint = dialect.endpoint(url)
    if endpoint is None:  # in-process: nothing of its own to find
        return DatabaseProcesses(nothing, SQLITE_HOW)
    socket_path, host, port = endpoint.unix_path, endpoint.host, endpoint.port
    if socket_path is None and not _is_local(host):
        return DatabaseProcesses(
            nothing,
            "not found",
            f"the {url.engine} server at {host} is not on this machine: its CPU cannot be observed, "
            "only the service's and the generator's",
        )
    names = dialect.process_names
    pid, how, problem = _listener(socket_path, port)
    warning = None
    if pid is None:
        pid = _by_name(names)
        if pid is None:
            where = f"socket {socket_path}" if socket_path else f"port {port}"
            return DatabaseProcesses(
                nothing,
                "not found",
                f"no {url.engine} server process found on this machine ({where}: {problem}; "
                f"no process named {' or '.join(names)}): the database's CPU is not observed",
            )
        how = "name"
        warning = (
            f"found the {url.engine} server by its process name {' or '.join(names)} (pid {pid}), "
            f"not by what it serves ({problem}): another server of that kind would be counted too"
        )
    # PostgreSQL forks a backend per connection under the postmaster; mariadbd has no children,
    # so the same tree covers both.
    return DatabaseProcesses(_Following(url, pid, how), how, warning, pid)


class _Following:
    """The tree of the server's root process, and once that root has gone, the tree of the server
    found again for the URL the way it was found first (`how`): while it starts again, a search by
    name would find another server of its kind on this host, so one found by what it serves is
    found again only by that. Nothing while it is down."""

    def __init__(self, url: DatabaseURL, pid: int, how: str):
        self._url, self._how = url, how
        self._root, self._tree = pid, process_tree(pid)

    def __call__(self) -> list[int]:
        if not alive(self._root):
            again = database_processes(self._url)
            if again.root_pid is None or again.how != self._how:
                return []
            self._root, self._tree = again.root_pid, process_tree(again.root_pid)
        return self._tree()


def alive(pid: int) -> bool:
    """Whether the process runs (a killed one whose parent has not reaped it yet does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _url_text(source: EngineInfo | dict[str, Any] | str) -> str:
    if isinstance(source, EngineInfo):
        return source.url
    if isinstance(source, dict):
        return str(source.get("url", ""))
    return source


def _is_local(host: str) -> bool:
    if host in ("localhost", ""):
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False  # a name other than localhost: assume another machine
    return is_this_machine(host) is True


def _listener(socket_path: str | None, port: int) -> tuple[int | None, str, str]:
    """(pid or None, how it was found, why not) of the process serving the socket or port."""
    try:
        if socket_path is not None:
            real = os.path.realpath(socket_path)
            for connection in psutil.net_connections(kind="unix"):
                if connection.laddr and os.path.realpath(str(connection.laddr)) == real and connection.pid:
                    # A connection accepted on the socket carries its path too, so the first match
                    # may be a PostgreSQL backend: the server is the oldest ancestor of its kind.
                    # A backend that ended since the listing has none: the next match is read.
                    root = _server_root(connection.pid)
                    if root is not None:
                        return root, f"socket {socket_path}", ""
            return None, "", f"no visible process serves {socket_path}"
        for connection in psutil.net_connections(kind="inet"):
            if (
                connection.status == psutil.CONN_LISTEN
                and connection.laddr
                and connection.laddr.port == port
                and connection.pid
            ):
                return connection.pid, f"port {port}", ""
        return None, "", f"no visible process listens on port {port}"
    except psutil.AccessDenied:
        return None, "", "no permission to see which process listens (run as root or the server's user)"


def _server_root(pid: int) -> int | None:
    """The topmost ancestor of `pid` that runs the same program (a backend's postmaster), or None
    when `pid` has ended (a backend whose connection closed after the sockets were listed)."""
    try:
        process = psutil.Process(pid)
        name = process.name()
        while (parent := process.parent()) is not None and parent.name() == name:
            process = parent
        return process.pid
    except psutil.NoSuchProcess:
        return None
    except psutil.AccessDenied:
        return pid


def _by_name(names: tuple[str, ...]) -> int | None:
    """The oldest process of one of these names whose parent is not of them (the server's root)."""
    candidates = []
    for process in psutil.process_iter(["name", "create_time", "ppid"]):
        try:
            if process.info["name"] not in names:
                continue
            parent = psutil.Process(process.info["ppid"]).name() if process.info["ppid"] else ""
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if parent not in names:
            candidates.append((process.info["create_time"] or 0.0, process.pid))
    return min(candidates)[1] if candidates else None
