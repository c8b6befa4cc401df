"""MariaDB's answers outside a session (`engines.dialect`): one mariadbd process whose threads serve
the connections, listening on a Unix socket file and TCP, with InnoDB's own buffer pool."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...errors import BadURL, TransportUnavailable
from ...urls import DatabaseURL
from ..dialect import LOOPBACK, Addresses, Dialect, Durability, Endpoint, NativeClient, ServerDialect
from . import KIND
from .connection import DEFAULT_HOST, DEFAULT_PORT, ISOLATION_LEVELS

if TYPE_CHECKING:
    from ..base import EngineInfo, EngineOptions, Row


class MariaDBDialect(ServerDialect):
    kind = KIND
    listening_sql = "SELECT @@socket, @@port, @@skip_networking, @@bind_address"
    process_names: tuple[str, ...] = ("mariadbd", "mysqld")
    orm_driver = "asyncmy"
    orm_note = (
        "AsyncSession.run_sync; SQLAlchemy's asyncmy dialect sends statements as text "
        "(no server-side prepared statements, unlike dbladder's MariaDB engine)"
    )
    native_client = NativeClient("sysbench", "apt-get install sysbench (the Debian package)")

    def transport_of(self, url: DatabaseURL) -> str:
        return "unix" if url.params.get("unix_socket") else "tcp"

    def endpoint(self, url: DatabaseURL) -> Endpoint | None:
        socket = url.params.get("unix_socket") or None
        return Endpoint(socket, url.host or DEFAULT_HOST, url.port or DEFAULT_PORT)

    async def reach(self, url: DatabaseURL, transport: str) -> DatabaseURL:
        found = await self.addresses(url)
        keep = {k: v for k, v in url.params.items() if k == "isolation"}
        if transport == "unix":
            if found.socket is None or not os.path.exists(found.socket):
                raise TransportUnavailable(
                    f"the MariaDB server of {url.redacted} has no Unix socket on this machine "
                    f"(socket = {found.socket!r})"
                )
            return url.with_host("localhost", None, {**keep, "unix_socket": found.socket})
        if found.host is None:
            raise TransportUnavailable(
                f"the MariaDB server of {url.redacted} listens on no TCP port (skip_networking is on)"
            )
        return url.with_host(found.host, found.port, keep)

    def durability(self, info: EngineInfo) -> Durability:
        flush = info.durability.get("innodb_flush_log_at_trx_commit", "?")
        if flush == "0":
            return Durability(
                "MariaDB with innodb_flush_log_at_trx_commit=0 acknowledges a commit while its redo "
                "log is still in mariadbd's memory; it is written out about once a second",
                "a kill -9 of mariadbd loses up to about a second of acknowledged commits",
            )
        if flush == "2":
            return Durability(
                "MariaDB with innodb_flush_log_at_trx_commit=2 writes a commit's redo log to the "
                "kernel before it answers and flushes it to disk about once a second",
                "a kill -9 of mariadbd cannot lose what the kernel holds; a crash of the machine could "
                "lose about a second of commits, and this run caused none",
            )
        return Durability(
            f"MariaDB with innodb_flush_log_at_trx_commit={flush} flushes the redo log at every commit",
            "a kill -9 of mariadbd cannot lose an acknowledged commit",
        )

    def page_cache(self, settings: Mapping[str, Any], machine_memory_bytes: int) -> tuple[int | None, str]:
        # InnoDB caches pages in its buffer pool only.
        pool = str(settings.get("innodb_buffer_pool_size", ""))
        if pool.isdigit():
            return int(pool), "innodb_buffer_pool_size"
        return None, "innodb_buffer_pool_size unknown"

    def orm_url(self, url: DatabaseURL, sqlite_driver: str) -> Any:
        from sqlalchemy import URL

        query = {"charset": "utf8mb4"}
        if url.params.get("unix_socket"):
            query["unix_socket"] = url.params["unix_socket"]
        return URL.create(
            "mysql+asyncmy",
            username=url.user or "root",
            password=url.password,
            host=url.host or DEFAULT_HOST,
            port=url.port,
            database=url.database,
            query=query,
        )

    def orm_arguments(self, url: DatabaseURL, options: EngineOptions) -> dict[str, Any]:
        isolation = url.params.get("isolation", "read-committed").strip().lower().replace("_", "-")
        if isolation not in ISOLATION_LEVELS:
            raise BadURL(f"isolation must be one of {', '.join(ISOLATION_LEVELS)}, not {isolation!r}")
        return {
            "isolation_level": ISOLATION_LEVELS[isolation],
            "connect_args": {"connect_timeout": options.connect_timeout},
        }

    def listening(self, row: Row) -> Addresses:
        """The socket path, the TCP host (None with skip_networking) and the port."""
        socket, port, skip_networking, bind = row
        if int(skip_networking or 0):
            host = None
        elif not bind or bind in ("*", "0.0.0.0", "::", "localhost", LOOPBACK):
            host = LOOPBACK
        else:
            host = str(bind).split(",")[0].strip()
        return Addresses(str(socket) if socket else None, host, int(port))


DIALECT: Dialect = MariaDBDialect()
