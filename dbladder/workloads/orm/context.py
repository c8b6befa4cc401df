"""The ORM's engine for one dbladder database, and an exact count of the SQL each request sends.

`open_context(url, options)` builds a SQLAlchemy engine from a dbladder `DatabaseURL`: asyncio
with asyncpg for PostgreSQL and asyncmy for MariaDB, the standard library's driver inline for
SQLite (`OrmContext` says why), with dbladder's settings: SQLite's pragmas from the URL (WAL,
synchronous=FULL, busy_timeout, cache_size, as dbladder's own SQLite engine), MariaDB at READ
COMMITTED with utf8mb4, the pool's size and timeout from dbladder's `EngineOptions`.

Counting is exact, not estimated: a `before_cursor_execute` listener on the engine counts every
statement the ORM hands to the driver, and `commit`/`rollback` listeners count the transactions it
ends, into the counter of the request that is running (a context variable, which SQLAlchemy's
greenlets inherit). Every endpoint runs inside `OrmContext.request(name)`, which adds its counts to
that operation's totals.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import URL, Engine, event
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker
from sqlalchemy.orm import sessionmaker

from ...engines.base import EngineOptions
from ...engines.dialect import dialect_of
from ...urls import DatabaseURL

T = TypeVar("T")


@dataclass
class QueryCount:
    """What one request (or a sum of requests) sent through the ORM.

    `round_trips` is what crossed to the server and back: every statement, every COMMIT and
    ROLLBACK, every BEGIN on a driver that sends one as a message of its own (asyncpg), and the
    pool's ROLLBACK when a connection goes back to it, on a driver that sends one even after the
    session's own (asyncmy); SQLite, in-process, has none (`OrmContext` sets which). Checked
    against what the latency relay forwards (tests/workloads/test_orm_transport.py).
    """

    requests: int = 0
    statements: int = 0  # SQL statements handed to the driver
    transactions: int = 0  # commits and rollbacks the ORM issued
    begins: int = 0  # transactions the ORM began (a message of its own on asyncpg only)
    resets: int = 0  # connections the pool rolled back on their return (a message on asyncmy only)
    round_trips: int = 0
    most_statements: int = 0  # the largest number of statements in one request

    def add(self, other: QueryCount) -> None:
        self.requests += other.requests
        self.statements += other.statements
        self.transactions += other.transactions
        self.begins += other.begins
        self.resets += other.resets
        self.round_trips += other.round_trips
        self.most_statements = max(self.most_statements, other.most_statements)

    def to_dict(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "statements": self.statements,
            "transactions": self.transactions,
            "begins": self.begins,
            "resets": self.resets,
            "round_trips": self.round_trips,
            "most_statements": self.most_statements,
        }


_current: contextvars.ContextVar[QueryCount | None] = contextvars.ContextVar("orm_query_count", default=None)


def _on_statement(*_: Any) -> None:
    count = _current.get()
    if count is not None:
        count.statements += 1


def _on_transaction_end(*_: Any) -> None:
    count = _current.get()
    if count is not None:
        count.transactions += 1


def _on_begin(*_: Any) -> None:
    count = _current.get()
    if count is not None:
        count.begins += 1


def _on_reset(_dbapi_connection: Any, _record: Any, state: Any) -> None:
    count = _current.get()
    # A reset after the transaction was already rolled back, or one that may not do I/O, sends nothing.
    if count is not None and state.asyncio_safe and not state.transaction_was_reset:
        count.resets += 1


@contextmanager
def counting() -> Iterator[QueryCount]:
    """Count what the ORM sends inside the block (in this task and the greenlets it starts).

    Blocks nest: what an inner block counted counts in the enclosing one too.
    """
    outer = _current.get()
    count = QueryCount(requests=1)
    token = _current.set(count)
    try:
        yield count
    finally:
        _current.reset(token)
        count.most_statements = count.statements
        if outer is not None:
            outer.statements += count.statements
            outer.transactions += count.transactions
            outer.begins += count.begins
            outer.resets += count.resets


class OrmContext:
    """What the app's endpoints run with: the ORM engine, its sessions, and per-operation counts.

    An endpoint is ordinary synchronous ORM code, `fn(session, *args)`, where touching a relationship
    that is not loaded sends its SELECT (the ORM's own lazy loading). `run()` runs it:

    * PostgreSQL and MariaDB: inside `AsyncSession.run_sync` on the asyncio engine (asyncpg, asyncmy):
      each lazy load awaits the driver through SQLAlchemy's greenlet, and the event loop serves
      other requests meanwhile.
    * SQLite: on a plain `Session` with the standard library's driver, inline on the event loop, as
      dbladder's own SQLite engine runs its queries: a query is a function call in this process.
      SQLAlchemy's asyncio driver for SQLite (aiosqlite) hands every statement to a thread and
      back, which measured 2x the CPU per statement (docs/orm.md) and would give SQLite a
      round trip per query that it does not have.
    """

    def __init__(self, engine: AsyncEngine | Engine, in_process: bool):
        self.engine = engine
        dialect = engine.dialect
        # What a request sends to a server: asyncpg sends BEGIN as a message of its own before a
        # transaction's first statement and nothing for a rollback outside one; asyncmy leaves
        # BEGIN implicit and sends every rollback; pysqlite sends nothing anywhere.
        self._in_process = in_process
        self._begin_is_round_trip = dialect.driver == "asyncpg"
        self._reset_is_round_trip = dialect.driver != "asyncpg"
        sync_engine = engine.sync_engine if isinstance(engine, AsyncEngine) else engine
        # expire_on_commit=False: a new finding's id can be read after its commit without a SELECT.
        self._async_sessions = (
            async_sessionmaker(engine, expire_on_commit=False) if isinstance(engine, AsyncEngine) else None
        )
        self._sync_sessions = (
            None if isinstance(engine, AsyncEngine) else sessionmaker(engine, expire_on_commit=False)
        )
        self._totals: dict[str, QueryCount] = {}
        event.listen(sync_engine, "before_cursor_execute", _on_statement)
        event.listen(sync_engine, "commit", _on_transaction_end)
        event.listen(sync_engine, "rollback", _on_transaction_end)
        event.listen(sync_engine, "begin", _on_begin)
        event.listen(sync_engine.pool, "reset", _on_reset)

    async def run(self, operation: str, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn(session, *args)` in a new session, counting its SQL under `operation`."""
        with self.request(operation):
            if self._async_sessions is not None:
                async with self._async_sessions() as session:
                    return await session.run_sync(fn, *args)
            assert self._sync_sessions is not None  # one of the two is always set
            with self._sync_sessions() as sync_session:
                return fn(sync_session, *args)

    @contextmanager
    def request(self, operation: str) -> Iterator[QueryCount]:
        """Count one request of `operation` and add it to that operation's totals (failed ones too)."""
        count = QueryCount()
        try:
            with counting() as count:
                yield count
        finally:
            if not self._in_process:
                count.round_trips = (
                    count.statements
                    + count.transactions
                    + (count.begins if self._begin_is_round_trip else 0)
                    + (count.resets if self._reset_is_round_trip else 0)
                )
            self._totals.setdefault(operation, QueryCount()).add(count)

    def totals(self) -> dict[str, QueryCount]:
        """A copy of the counts so far, per operation (a level's figures are two snapshots' difference)."""
        copies = {}
        for name, total in self._totals.items():
            copy = QueryCount()
            copy.add(total)
            copies[name] = copy
        return copies

    def query_counts(self) -> dict[str, dict[str, int]]:
        """The totals as plain numbers per operation: requests, statements, round trips (and the
        transactions and begins they include), for `Workload.query_counts`."""
        return {
            name: {
                "requests": total.requests,
                "statements": total.statements,
                "round_trips": total.round_trips,
                "transactions": total.transactions,
                "begins": total.begins,
                "resets": total.resets,
            }
            for name, total in self._totals.items()
        }

    async def close(self) -> None:
        if isinstance(self.engine, AsyncEngine):
            await self.engine.dispose()
        else:
            self.engine.dispose()


def sqlalchemy_url(url: DatabaseURL, sqlite_driver: str = "pysqlite") -> URL:
    """The SQLAlchemy URL for a dbladder database URL: asyncpg, asyncmy, and pysqlite or aiosqlite."""
    made: URL = dialect_of(url).orm_url(url, sqlite_driver)
    return made


def create_orm_engine(
    url: DatabaseURL, options: EngineOptions | None = None, sqlite_driver: str = "pysqlite"
) -> AsyncEngine | Engine:
    """The ORM engine for `url` with dbladder's settings and pool size (the engine's dialect makes it).

    SQLite gets a plain engine over pysqlite (`OrmContext` says why), or with
    `sqlite_driver="aiosqlite"` the asyncio one (benchmarks/orm_choice.py measures both); the
    servers get asyncio engines.
    """
    made: AsyncEngine | Engine = dialect_of(url).orm_engine(url, options or EngineOptions(), sqlite_driver)
    return made


async def open_context(
    url: DatabaseURL, options: EngineOptions | None = None, sqlite_driver: str = "pysqlite"
) -> OrmContext:
    """The endpoints' context for a database (connections open as requests need them)."""
    return OrmContext(create_orm_engine(url, options, sqlite_driver), in_process=url.kind.in_process)
