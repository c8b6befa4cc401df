"""SQLite's answers outside a session (`engines.dialect`): a library inside the service's process,
with no server, no connection and no process of its own."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ...errors import TransportUnavailable
from ...urls import DatabaseURL
from ..dialect import Dialect, Durability, Endpoint, NativeClient
from . import KIND

if TYPE_CHECKING:
    from ..base import EngineInfo, EngineOptions


class SQLiteDialect:
    kind = KIND
    # SQLite's data lives in the service's processes: stopping them, or the single writer, is what
    # stops the process that holds the data.
    data_holders: tuple[str, ...] = ("kill-service", "restart-service", "kill-writer")
    process_names: tuple[str, ...] = ()
    native_client = NativeClient("apsw", None)  # a dependency of dbladder

    def transport_of(self, url: DatabaseURL) -> str:
        return "inproc"

    def endpoint(self, url: DatabaseURL) -> Endpoint | None:
        return None

    async def reach(self, url: DatabaseURL, transport: str) -> DatabaseURL:
        raise TransportUnavailable(f"SQLite has no transport but inproc, not {transport}")

    def durability(self, info: EngineInfo) -> Durability:
        settings = info.durability
        sync = settings.get("synchronous", "?")
        journal = settings.get("journal_mode", "?")
        if info.durable:
            promise = f"SQLite with journal_mode={journal}, synchronous={sync} syncs every commit to disk"
        else:
            promise = (
                f"SQLite with journal_mode={journal}, synchronous={sync} acknowledges a commit once it "
                "has handed it to the kernel (write()), before it is on disk"
            )
        loses = (
            "neither a kill -9 of the process nor a crash of the machine can lose an acknowledged commit"
            if info.durable
            else "a kill -9 of the process cannot lose a commit the kernel already holds; "
            "only a crash of the machine or a power cut could, and this run caused neither"
        )
        if journal in ("MEMORY", "OFF"):
            loses = f"with journal_mode={journal} a kill -9 in the middle of a write can corrupt the file"
        return Durability(promise, loses)

    def page_cache(self, settings: Mapping[str, Any], machine_memory_bytes: int) -> tuple[int | None, str]:
        # SQLite reads through the operating system's page cache.
        return machine_memory_bytes, "the machine's memory (reads go through the page cache)"

    def orm_url(self, url: DatabaseURL, sqlite_driver: str) -> Any:
        from sqlalchemy import URL

        return URL.create(f"sqlite+{sqlite_driver}", database=url.path)

    def orm_engine(self, url: DatabaseURL, options: EngineOptions, sqlite_driver: str) -> Any:
        # Imported here: only the ORM workload needs SQLAlchemy, and it is slow to import.
        from sqlalchemy import Engine, create_engine, event
        from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

        from .connection import parse_settings

        settings = parse_settings(url)
        pool: dict[str, Any] = {
            "pool_size": options.pool_size,
            "max_overflow": 0,
            "pool_timeout": options.pool_timeout,
        }
        # pysqlite's own busy timeout: it waits on SQLite's lock as busy_timeout does.
        connect_args = {"timeout": int(settings["busy_timeout"]) / 1000}
        target = self.orm_url(url, sqlite_driver)
        engine: AsyncEngine | Engine
        if sqlite_driver == "aiosqlite":
            engine = create_async_engine(target, connect_args=connect_args, **pool)
        else:
            engine = create_engine(target, connect_args=connect_args, **pool)
        sync_engine = engine.sync_engine if isinstance(engine, AsyncEngine) else engine
        event.listen(sync_engine, "connect", _pragmas(settings))
        return engine

    def orm_data_layer(self) -> dict[str, str]:
        return {
            "driver": f"sqlite3 (the standard library's), SQLite {sqlite3.sqlite_version}",
            "note": "a plain Session inline on the event loop; SQLAlchemy has no apsw dialect, so the "
            "SQLite library is the system's, not the one dbladder's engine links",
        }


def _pragmas(settings: dict[str, str]) -> Callable[[Any, Any], None]:
    """The connect hook that applies dbladder's SQLite settings to each new connection."""

    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        for name in ("journal_mode", "synchronous", "cache_size"):
            cursor.execute(f"PRAGMA {name}={settings[name]}")
        cursor.close()

    return on_connect


DIALECT: Dialect = SQLiteDialect()
