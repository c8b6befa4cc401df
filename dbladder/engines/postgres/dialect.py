"""PostgreSQL's answers outside a session (`engines.dialect`): a postmaster that forks a backend per
connection, listening on a Unix socket folder (libpq's `.s.PGSQL.<port>`) and TCP."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...errors import BadURL, TransportUnavailable
from ...urls import DatabaseURL
from ..dialect import LOOPBACK, Addresses, Dialect, Durability, Endpoint, NativeClient, ServerDialect
from . import KIND
from .connection import DEFAULT_HOST, DEFAULT_PORT

if TYPE_CHECKING:
    from ..base import EngineInfo, EngineOptions, Row


class PostgresDialect(ServerDialect):
    kind = KIND
    listening_sql = (
        "SELECT current_setting('unix_socket_directories'), current_setting('listen_addresses'), "
        "current_setting('port')"
    )
    process_names: tuple[str, ...] = ("postgres", "postmaster")
    orm_driver = "asyncpg"
    orm_note = (
        "AsyncSession.run_sync; asyncpg's own prepared-statement cache; BEGIN is a round trip of its own"
    )
    native_client = NativeClient(
        "pgbench", "it comes with the PostgreSQL client: apt-get install postgresql-client"
    )

    def transport_of(self, url: DatabaseURL) -> str:
        return "unix" if url.params.get("host") else "tcp"

    def endpoint(self, url: DatabaseURL) -> Endpoint | None:
        port = url.port or DEFAULT_PORT
        folder = url.params.get("host")
        if folder:  # libpq's convention: the socket is .s.PGSQL.<port> in that folder
            return Endpoint(f"{folder.rstrip('/')}/.s.PGSQL.{port}", "", port)
        return Endpoint(None, url.host or DEFAULT_HOST, port)

    async def reach(self, url: DatabaseURL, transport: str) -> DatabaseURL:
        found = await self.addresses(url)
        if transport == "unix":
            if found.socket is None:
                raise TransportUnavailable(
                    f"the PostgreSQL server of {url.redacted} has no Unix socket "
                    "(unix_socket_directories is empty)"
                )
            socket = f"{found.socket}/.s.PGSQL.{found.port}"
            if not os.path.exists(socket):
                raise TransportUnavailable(f"the PostgreSQL server's socket {socket} is not on this machine")
            named_port = found.port if found.port != DEFAULT_PORT else None
            return url.with_host("", named_port, {"host": found.socket})
        if found.host is None:
            raise TransportUnavailable(
                f"the PostgreSQL server of {url.redacted} listens on no TCP address "
                "(listen_addresses is empty)"
            )
        keep = {k: v for k, v in url.params.items() if k == "sslmode"}
        return url.with_host(found.host, found.port, keep)

    def durability(self, info: EngineInfo) -> Durability:
        sync = info.durability.get("synchronous_commit", "?")
        fsync = info.durability.get("fsync", "?")
        if sync == "off":
            return Durability(
                "PostgreSQL with synchronous_commit=off acknowledges a commit before its WAL record "
                "is written out; the WAL writer writes it within wal_writer_delay x 3",
                "a kill -9 of the server loses the commits still in its WAL buffers (shared memory): "
                "up to about 0.6 s of them with the default wal_writer_delay of 200 ms",
            )
        promise = f"PostgreSQL with synchronous_commit={sync}, fsync={fsync} writes a commit's WAL "
        promise += "and flushes it before it answers" if fsync == "on" else "before it answers (no fsync)"
        loses = (
            "a kill -9 of the server cannot lose an acknowledged commit"
            if fsync == "on"
            else "a kill -9 of the server cannot lose one (the kernel holds it); a crash of the "
            "machine could, and this run caused none"
        )
        return Durability(promise, loses)

    def page_cache(self, settings: Mapping[str, Any], machine_memory_bytes: int) -> tuple[int | None, str]:
        # shared_buffers sits in front of the operating system's page cache, which holds the rest.
        return machine_memory_bytes, "the machine's memory (reads go through the page cache)"

    def orm_url(self, url: DatabaseURL, sqlite_driver: str) -> Any:
        from sqlalchemy import URL

        unknown = sorted(set(url.params) - {"host", "sslmode"})
        if unknown:
            raise BadURL(f"the ORM workload does not know the PostgreSQL setting(s) {', '.join(unknown)}")
        folder = url.params.get("host")
        query = {"host": folder} if folder else {}
        if "sslmode" in url.params:
            query["ssl"] = url.params["sslmode"]
        return URL.create(
            "postgresql+asyncpg",
            username=url.user or "postgres",
            password=url.password,
            host=None if folder else (url.host or DEFAULT_HOST),
            port=None if folder else url.port,
            database=url.database,
            query=query,
        )

    def orm_arguments(self, url: DatabaseURL, options: EngineOptions) -> dict[str, Any]:
        return {"connect_args": {"timeout": options.connect_timeout}}

    def listening(self, row: Row) -> Addresses:
        """The socket folder (the first that is not abstract), the TCP host (None: none), the port."""
        folders = [f.strip() for f in str(row[0]).split(",") if f.strip() and not f.strip().startswith("@")]
        listen = [a.strip() for a in str(row[1]).split(",") if a.strip()]
        if not listen:
            host = None
        elif "*" in listen or "0.0.0.0" in listen or "localhost" in listen or LOOPBACK in listen:
            host = LOOPBACK
        else:
            host = listen[0]
        return Addresses(folders[0] if folders else None, host, int(row[2]))


DIALECT: Dialect = PostgresDialect()
