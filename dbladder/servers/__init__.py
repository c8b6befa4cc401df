"""Throwaway PostgreSQL and MariaDB servers that dbladder starts and owns.

Fault injection (kill -9 of the database server, restarts) runs only on these, never on a
machine's shared servers; and a user with the server programs installed but no server running
gets every engine from one command (`--db managed:postgresql`). `docs/servers.md` explains the
design and what a kill means for each engine.
"""

from __future__ import annotations

from .create import managed_server, start_managed
from .errors import (
    BadServerSpec,
    NotManaged,
    ServerBinariesMissing,
    ServerKilledForMemory,
    ServerLost,
    ServerStartFailed,
    ServerStopFailed,
    ServerUserMissing,
    UnknownServer,
)
from .managed import ManagedServer, kind_for, managed_engines
from .registry import registry_root
from .resolve import (
    Database,
    ManagedDatabase,
    ServerState,
    fault_permission,
    find_server,
    is_managed_spec,
    managed_server_for,
    managed_url,
    parse_database,
    parse_managed_spec,
    placement_refusal,
    registered_servers,
    remove_server,
    server_for_url,
    server_states,
)
from .watch import ServerWatch

__all__ = [
    "BadServerSpec",
    "Database",
    "ManagedDatabase",
    "ManagedServer",
    "NotManaged",
    "ServerBinariesMissing",
    "ServerKilledForMemory",
    "ServerLost",
    "ServerStartFailed",
    "ServerState",
    "ServerStopFailed",
    "ServerUserMissing",
    "ServerWatch",
    "UnknownServer",
    "fault_permission",
    "find_server",
    "is_managed_spec",
    "kind_for",
    "managed_engines",
    "managed_server",
    "managed_server_for",
    "managed_url",
    "parse_database",
    "parse_managed_spec",
    "placement_refusal",
    "registered_servers",
    "registry_root",
    "remove_server",
    "server_for_url",
    "server_states",
    "start_managed",
]
