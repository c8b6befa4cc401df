"""What differs between the engines outside a session, behind one small interface.

A session (`base.Session`) hides how each engine runs SQL; a `Dialect` holds the rest of what
dbladder asks of an engine by name: what its durability settings promise, where its server
listens and how the service can reach it by another transport, which processes to look for on
the machine, where its pages are cached, and the SQLAlchemy engine the ORM workload reaches it
through. One dialect per engine package (`sqlite/dialect.py`, `postgres/dialect.py`,
`mariadb/dialect.py`), named by its registration (`dbladder.engine_registry`); `dialect_of(url)`
finds it, so nothing outside `engines/` (and the server programs of `servers/`, which are an
engine's by nature) asks which engine it is talking to.

The plain facts (the engine's label, whether it runs in-process or has a server) are the URL's
`kind` (`dbladder.engine_registry.EngineKind`), which reports may read too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, Protocol

from ..engine_registry import EngineKind, engine_kind, load
from ..urls import DatabaseURL

if TYPE_CHECKING:
    from .base import EngineInfo, EngineOptions, Row

LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class Endpoint:
    """Where a server listens, as its URL says: a Unix socket path, else a TCP host and port."""

    unix_path: str | None
    host: str  # "" with a Unix socket when the URL names no host
    port: int


@dataclass(frozen=True)
class NativeClient:
    """The engine's own benchmark client, the bare reference `dbladder bench` measures against."""

    program: str  # "apsw" (a loop in Python on the driver), "pgbench", "sysbench"
    install: str | None  # how to install it; None when it comes with dbladder


@dataclass(frozen=True)
class Durability:
    """What an engine's durability settings promise, and what a kill -9 of the process that holds
    the data can therefore lose (the kernel's page cache survives a process, not the machine)."""

    promise: str
    loses: str


@dataclass(frozen=True)
class Addresses:
    """Where a server says it listens: its Unix socket (for PostgreSQL the folder, for MariaDB
    the file) and its TCP host; None where it does not listen that way."""

    socket: str | None
    host: str | None
    port: int


class Dialect(Protocol):
    """One engine's answers to what dbladder asks of it outside a session."""

    kind: EngineKind
    # Faults (`run/faults.py`) that stop the process holding the data: for SQLite the service's.
    data_holders: tuple[str, ...]
    # The names of the server's processes, for finding it when what it serves cannot be seen.
    process_names: tuple[str, ...]
    native_client: NativeClient

    def transport_of(self, url: DatabaseURL) -> str:
        """How a URL reaches the database: inproc, unix or tcp."""
        ...

    def endpoint(self, url: DatabaseURL) -> Endpoint | None:
        """Where the URL's server listens (None for an in-process engine); never raises."""
        ...

    async def reach(self, url: DatabaseURL, transport: str) -> DatabaseURL:
        """The same database over `transport` (unix or tcp, not the URL's own), from where the
        server says it listens; TransportUnavailable when it does not listen that way. A server
        engine only: the caller refuses in-process engines first."""
        ...

    def durability(self, info: EngineInfo) -> Durability:
        """What the durability settings in `info` promise and what a process kill can lose."""
        ...

    def page_cache(self, settings: Mapping[str, Any], machine_memory_bytes: int) -> tuple[int | None, str]:
        """(bytes, basis) of the memory that can hold the database's pages, where it is known."""
        ...

    def orm_engine(self, url: DatabaseURL, options: EngineOptions, sqlite_driver: str) -> Any:
        """The SQLAlchemy engine (asyncio, or plain for SQLite over pysqlite) the ORM workload
        reaches this database through, with dbladder's settings and pool size."""
        ...

    def orm_url(self, url: DatabaseURL, sqlite_driver: str) -> Any:
        """The SQLAlchemy URL for `url`."""
        ...

    def orm_data_layer(self) -> dict[str, str]:
        """The driver the ORM uses for this engine, and what differs from dbladder's own engine."""
        ...


def dialect_of(what: DatabaseURL | EngineKind | str) -> Dialect:
    """The dialect of a URL's engine, of an engine kind, or of an engine named as a result names it
    (`sqlite`, `postgresql`, `mariadb`, or one another package registers; UnknownEngine otherwise)."""
    if isinstance(what, DatabaseURL):
        kind = what.kind
    elif isinstance(what, EngineKind):
        kind = what
    else:
        kind = engine_kind(what)
    dialect: Dialect = load(kind.dialect)
    return dialect


async def server_addresses(url: DatabaseURL, sql: str) -> Row:
    """The one row a server's query of its own listening settings gives, on a connection of its own."""
    from . import EngineOptions, opened  # the engines package imports this module

    async with opened(url, EngineOptions(pool_size=1)) as engine, engine.read() as session:
        row = await session.fetch_one(sql)
    assert row is not None  # a SELECT without FROM always gives one row
    return row


class ServerDialect:
    """What the dialects of the database servers (PostgreSQL's, MariaDB's) share: a kill or restart
    of the server is the fault that stops the process holding the data; where the server listens
    is one query of its own settings on a connection of its own (`listening_sql`, read by
    `listening`); and the ORM workload's SQLAlchemy engine is the server's URL (`orm_url`) with
    dbladder's pool, plus the driver's own arguments (`orm_arguments`), on its driver
    (`orm_driver`, `orm_note`)."""

    data_holders: tuple[str, ...] = ("kill-db", "restart-db")
    listening_sql: str
    """The query of the server's own listening settings, one row."""
    orm_driver: str
    """The package SQLAlchemy's dialect for the server drives it with."""
    orm_note: str
    """What differs between that driver and dbladder's own engine."""

    def listening(self, row: Row) -> Addresses:
        """Where the server says it listens, from the row of `listening_sql`."""
        raise NotImplementedError

    async def addresses(self, url: DatabaseURL) -> Addresses:
        """Where the server of `url` listens: socket, TCP host, port; None: not that way."""
        return self.listening(await server_addresses(url, self.listening_sql))

    def orm_url(self, url: DatabaseURL, sqlite_driver: str) -> Any:
        raise NotImplementedError

    def orm_arguments(self, url: DatabaseURL, options: EngineOptions) -> dict[str, Any]:
        """The driver's own arguments to SQLAlchemy's engine: its connect timeout, its isolation."""
        raise NotImplementedError

    def orm_engine(self, url: DatabaseURL, options: EngineOptions, sqlite_driver: str) -> Any:
        # Imported here: only the ORM workload needs SQLAlchemy, and it is slow to import.
        from sqlalchemy.ext.asyncio import create_async_engine

        return create_async_engine(
            self.orm_url(url, sqlite_driver),
            pool_size=options.pool_size,
            max_overflow=0,
            pool_timeout=options.pool_timeout,
            **self.orm_arguments(url, options),
        )

    def orm_data_layer(self) -> dict[str, str]:
        return {"driver": f"{self.orm_driver} {package_version(self.orm_driver)}", "note": self.orm_note}


def package_version(package: str) -> str:
    """An installed package's version, or "?"."""
    try:
        return version(package)
    except PackageNotFoundError:
        return "?"
