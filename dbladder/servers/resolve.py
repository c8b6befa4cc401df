"""From what a user writes to a managed server: `managed:ENGINE` URLs, registry look-ups, and
whether a fault (kill, restart) may be aimed at the server behind a URL.

    with managed_url("managed:postgresql?synchronous_commit=off") as url:
        run_round(config_for(url))            # any other URL passes through unchanged

    reason = fault_permission(url)            # None: dbladder started it, and may kill it
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl

from ..engine_registry import EngineKind, engine_kind
from ..errors import DbladderError
from ..roles import RoleLimits, UnmanagedRole, format_size
from ..urls import DatabaseURL, parse_url
from . import registry
from .create import managed_server
from .errors import BadServerSpec, NotManaged
from .managed import ManagedServer, kind_for, managed_engines

PREFIX = "managed:"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def is_managed_spec(text: str) -> bool:
    """Whether `text` asks for a managed server (`managed:postgresql`, `managed:mariadb?...`)."""
    return text.strip().lower().startswith(PREFIX)


def parse_managed_spec(text: str) -> tuple[str, dict[str, str]]:
    """`managed:ENGINE[?setting=value&...]` -> (engine, settings); BadServerSpec if malformed."""
    if not is_managed_spec(text):
        choices = " or ".join(f"{PREFIX}{engine}" for engine in managed_engines())
        raise BadServerSpec(f"{text!r} is not a managed server; write {choices}")
    rest = text.strip()[len(PREFIX) :]
    engine, _, query = rest.partition("?")
    try:
        settings = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=True)) if query else {}
    except ValueError:
        raise BadServerSpec(
            f"cannot read the settings in {text!r}; write managed:ENGINE?name=value&..."
        ) from None
    return kind_for(engine).engine, settings


@dataclass(frozen=True)
class ManagedDatabase:
    """A `managed:ENGINE[?settings]` database: a throwaway server dbladder starts for the round,
    whose URL replaces this one once it runs (dbladder.servers)."""

    text: str
    engine: str
    settings: dict[str, str]
    host: None = None  # not known until the server runs: it listens on loopback
    path: None = None  # a server's files are not the round's to measure

    @property
    def kind(self) -> EngineKind:
        return engine_kind(self.engine)

    @property
    def raw(self) -> str:
        """The spec as given, as a parsed URL keeps its text."""
        return self.text

    @property
    def redacted(self) -> str:
        """The spec as given: it holds no password."""
        return self.text


Database = DatabaseURL | ManagedDatabase
"""A database as a round names it, parsed: a URL, or a managed server still to start."""


def parse_database(text: str) -> Database:
    """A `--db` text parsed: the one parse of a database URL (or `managed:` spec) a command makes,
    whose value then travels in its place. BadURL or another UsageError when it does not parse."""
    if is_managed_spec(text):
        return ManagedDatabase(text, *parse_managed_spec(text))
    return parse_url(text)


@contextlib.contextmanager
def managed_server_for(
    text: str, base_dir: str | Path | None = None, limits: RoleLimits | None = None
) -> Iterator[ManagedServer | None]:
    """For a `managed:` text, a server started for the block (on the database role's CPUs and
    under its cap: `limits`) and removed after it; for any other URL, None (the URL is used as it
    is; `limits` must then be unset, see `placement_refusal`)."""
    if not is_managed_spec(text):
        refusal = placement_refusal(text, limits)
        if refusal is not None:
            raise UnmanagedRole(refusal)
        yield None
        return
    engine, settings = parse_managed_spec(text)
    with managed_server(engine, settings, base_dir, limits) as server:
        yield server


def placement_refusal(text: str, limits: RoleLimits | None) -> str | None:
    """Why the database role's CPUs or memory cap cannot be given to the database `text` names,
    on one line, or None when they can (nothing asked, or a `managed:` server dbladder starts)."""
    if limits is None or not limits.limited:
        return None
    if is_managed_spec(text):
        return _room_refusal(text, limits.memory)
    option = limits.option("database")
    try:
        parsed = parse_url(text)
    except DbladderError:
        return None  # the URL's own check says what is wrong with it
    server = server_for_url(parsed)
    if server is not None and _placed_as(server, limits):
        return None  # a managed server started in this place (a comparison's, shared by its runs)
    if parsed.kind.in_process:
        return (
            f"{option}: {parsed.kind.label} runs inside the service, not in a server of its own; "
            "give the service its place (--cpus service=...)"
        )
    return (
        f"{option}: {parsed.redacted} is a server dbladder did not start, and dbladder never pins or "
        f"caps a server it does not own; use --db managed:{parsed.engine}"
    )


def _room_refusal(text: str, cap: int | None) -> str | None:
    """Why a managed server with these settings cannot run under `cap`: its buffers and what it
    needs besides them do not fit (the kernel would kill it for memory mid-run); None if they do."""
    if cap is None:
        return None
    try:
        engine, settings = parse_managed_spec(text)
        kind = kind_for(engine)
        needed = kind.room_needed(settings)
    except BadServerSpec:
        return None  # the spec's own check says what is wrong with it
    if needed is None or cap >= needed[1]:
        return None
    value, least = needed
    return (
        f"--memory database={format_size(cap)}: a managed {kind.title} with {kind.buffers_setting}="
        f"{value} needs at least {format_size(least)} ({format_size(kind.memory_besides_buffers)} besides "
        f"its buffers), or the kernel kills it for memory; give more, or smaller buffers "
        f"(managed:{kind.engine}?{kind.buffers_setting}=...)"
    )


def _placed_as(server: ManagedServer, limits: RoleLimits) -> bool:
    cpus = tuple(server.cpus) if server.cpus is not None else None
    return cpus == limits.cpus and server.memory_limit == limits.memory


@contextlib.contextmanager
def managed_url(text: str, base_dir: str | Path | None = None) -> Iterator[str]:
    """The URL to use for the block: a managed server's for `managed:ENGINE`, else `text` itself."""
    with managed_server_for(text, base_dir) as server:
        yield server.url if server is not None else text


def registered_servers(root: Path | None = None) -> list[ManagedServer]:
    """Every readable managed server in the registry, running or not."""
    servers = []
    for entry in registry.entries(root):
        if entry.problem is None:
            with contextlib.suppress(NotManaged):
                servers.append(ManagedServer.load(entry.folder))
    return servers


@dataclass(frozen=True)
class ServerState:
    """One registry entry as `dbladder db list` shows it: its name, what state it is in, its URL
    ("-" when it cannot be read) and its folder (or, for a broken entry, what is wrong)."""

    name: str
    state: str
    url: str
    folder: str


def server_states(root: Path | None = None) -> list[ServerState]:
    """Every registry entry's state: running (with its PID), stopped, left over by a process that
    ended, or broken (and why)."""
    states = []
    for entry in registry.entries(root):
        if entry.problem is not None:
            states.append(ServerState(entry.name, "broken", "-", entry.problem))
            continue
        try:
            server = ManagedServer.load(entry.folder)
        except NotManaged as exc:
            states.append(ServerState(entry.name, "broken", "-", str(exc)))
            continue
        state = f"running (PID {server.pid})" if server.running() else "stopped"
        if server.left_over:
            state += f", left over by ended process {server.started_by}"
        states.append(ServerState(server.name, state, server.url, str(server.folder)))
    return states


def find_server(name: str, root: Path | None = None) -> ManagedServer:
    """The registered server of that name; UnknownServer or NotManaged."""
    entry = registry.entry(name, root)
    if entry.problem is not None:
        raise NotManaged(f"managed server {name} cannot be read: {entry.problem}")
    return ManagedServer.load(entry.folder)


def remove_server(name: str, root: Path | None = None) -> Path:
    """Stop the registered server NAME and delete its folder; an entry whose folder is already gone
    is only forgotten. The folder it was in."""
    entry = registry.entry(name, root)
    if entry.problem is not None and not entry.folder.exists():
        registry.unregister(root or registry.registry_root(), name)
        return entry.folder
    server = find_server(name, root)
    server.remove()
    return Path(server.folder)


def server_for_url(url: str | DatabaseURL, root: Path | None = None) -> ManagedServer | None:
    """The registered server that a URL points at (by its socket, or by a loopback host and port,
    or the host it listens on and port)."""
    parsed = parse_url(url) if isinstance(url, str) else url
    for server in registered_servers(root):
        if server.engine != parsed.engine:
            continue
        socket_folder = parsed.params.get("host")  # PostgreSQL names the socket's folder
        socket_file = parsed.params.get("unix_socket")  # MariaDB names the file
        if socket_file is not None:
            if Path(socket_file) == server.socket_path:
                return server
        elif socket_folder is not None:
            if Path(socket_folder) == server.socket_dir and parsed.port == server.port:
                return server
        elif (parsed.host in LOOPBACK or parsed.host == server.host) and parsed.port == server.port:
            return server  # on loopback, or on the address it was started on (a cluster's db host)
    return None


def fault_permission(url: str | DatabaseURL, root: Path | None = None) -> str | None:
    """Why dbladder may NOT kill or restart the server behind `url`, or None when it may: only a
    running server that dbladder started itself (`db start`, `managed:`) is ever touched."""
    try:
        parsed = parse_url(url) if isinstance(url, str) else url
    except DbladderError as exc:
        return str(exc)
    if parsed.kind.in_process:
        return f"{parsed.kind.label} runs inside the service: there is no database server to kill"
    server = server_for_url(parsed, root)
    if server is None:
        return (
            f"{parsed.redacted} is not a server dbladder started, and dbladder never kills or restarts "
            f"a server it does not own; use --db managed:{parsed.engine} or a URL from "
            f"`dbladder db start {parsed.engine}`"
        )
    if not server.running():
        return f"managed server {server.name} is not running (dbladder db list)"
    return None
