"""The one small interface every engine implements.

An engine owns a pool of connections to one database and offers three things:

* sessions: `read()` hands out a pooled connection in autocommit mode, `transaction()` one inside
  BEGIN ... COMMIT (ROLLBACK when the block raises). A `Session` runs SQL written once, with `?`
  placeholders; the engine rewrites it for its driver and prepares each statement once per
  connection (seed 001: "Prepare once, on both drivers").
* data definition: `recreate_schema()`, `bulk_load()` and `finish_load()` turn a dialect-neutral
  `Schema` into tables and load rows by the engine's fastest path.
* `describe()`: the versions and settings that decide the outcome (`dbladder engines`).

Everything that differs between SQLite, PostgreSQL and MariaDB lives in that engine's module;
nothing elsewhere asks which engine it is talking to.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Protocol

from ..errors import InvalidConfig
from ..urls import DatabaseURL

Row = tuple[Any, ...]
Args = Sequence[Any]

DEFAULT_POOL_SIZE = 100  # the seeds' pool: SetMaxOpenConns(100)


@dataclass(frozen=True)
class EngineOptions:
    """How dbladder uses a database, the same for every engine."""

    pool_size: int = DEFAULT_POOL_SIZE
    # Seconds a request may wait for a free pooled connection before it fails with PoolTimeout.
    pool_timeout: float = 5.0
    # Seconds to wait for the first connection to a server.
    connect_timeout: float = 5.0

    def validate(self) -> list[str]:
        """Every problem with these options, each naming its field."""
        problems = []
        if not 1 <= self.pool_size <= 10_000:
            problems.append(f"pool_size must be from 1 to 10000, not {self.pool_size}")
        if not self.pool_timeout > 0:
            problems.append(f"pool_timeout must be above 0 seconds, not {self.pool_timeout}")
        if not self.connect_timeout > 0:
            problems.append(f"connect_timeout must be above 0 seconds, not {self.connect_timeout}")
        return problems

    def checked(self) -> EngineOptions:
        """These options, or InvalidConfig listing every problem."""
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self


# ---------------------------------------------------------------------------------------------
# A dialect-neutral schema: workloads describe tables with these, engines render the DDL.


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # "int", "bigint" or "text"
    max_length: int = 0  # for "text": engines that index text need a bound (MariaDB VARCHAR)
    generated_id: bool = False  # the table's primary key, assigned by the database on insert


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def generated_id(self) -> Column | None:
        return next((c for c in self.columns if c.generated_id), None)


@dataclass(frozen=True)
class Index:
    name: str
    table: str
    columns: tuple[str, ...]


@dataclass(frozen=True)
class Schema:
    tables: tuple[Table, ...]
    indexes: tuple[Index, ...] = ()

    def table(self, name: str) -> Table:
        for table in self.tables:
            if table.name == name:
                return table
        raise KeyError(name)


# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EngineInfo:
    """What decides a result: versions, transport, durability and pool, as `dbladder engines` shows."""

    engine: str
    url: str  # password redacted
    server_version: str  # for SQLite, the library version actually linked
    driver: str
    driver_version: str
    transport: str
    isolation: str
    pool_size: int
    prepared_statements: str
    durable: bool  # a write is acknowledged only after it reaches the disk (seed 000's rule)
    durability: dict[str, str] = field(default_factory=dict)
    durability_note: str = ""  # why `durable` is False
    settings: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def durability_warning(self) -> str | None:
        """One loud line when writes can be acknowledged before they reach the disk."""
        if self.durable:
            return None
        return (
            f"WARNING: {self.engine} durability is weaker than 'acknowledged only after it reaches "
            f"the disk': {self.durability_note}. Results are not comparable with a durable engine."
        )


class Session(Protocol):
    """One pooled connection, for the duration of a `read()` or `transaction()` block."""

    async def fetch_one(self, sql: str, args: Args = ()) -> Row | None:
        """The first row of a query, or None."""
        ...

    async def fetch_all(self, sql: str, args: Args = ()) -> list[Row]:
        """Every row of a query."""
        ...

    async def execute(self, sql: str, args: Args = ()) -> int:
        """Run a statement; the number of rows it changed."""
        ...


class Engine(Protocol):
    """A database behind a pool. One implementation per module in `dbladder.engines`."""

    name: ClassVar[str]
    url: DatabaseURL
    options: EngineOptions

    async def open(self) -> None:
        """Check that the database is reachable and usable; raise a DbladderError naming what to fix."""
        ...

    async def close(self) -> None:
        """Close every pooled connection."""
        ...

    def read(self) -> AbstractAsyncContextManager[Session]:
        """A pooled connection in autocommit mode."""
        ...

    def transaction(self) -> AbstractAsyncContextManager[Session]:
        """A pooled connection inside one transaction: COMMIT on exit, ROLLBACK if the block raises."""
        ...

    async def describe(self) -> EngineInfo:
        """Versions and settings that decide the outcome."""
        ...

    async def recreate_schema(self, schema: Schema) -> None:
        """Drop the schema's tables if they exist and create them empty, without secondary indexes."""
        ...

    async def bulk_load(self, table: Table, rows: Iterable[Row]) -> None:
        """Append rows (in the table's column order) by the engine's fastest path."""
        ...

    async def finish_load(self, schema: Schema) -> None:
        """After loading: build the secondary indexes, move id generators past the loaded ids, analyze."""
        ...

    async def table_exists(self, name: str) -> bool:
        """Whether a table of that name exists."""
        ...

    def counters(self) -> dict[str, int]:
        """Engine-specific event counts since open (SQLite: busy waits on the file lock)."""
        ...

    async def save_snapshot(self) -> str | None:
        """Keep a restorable copy of the database's current data (after seeding) beside it.

        Returns an opaque token for `restore_snapshot` and `drop_snapshot`, or None when this
        engine (or this server, as configured) has no restore faster than seeding again. The
        snapshot's name derives from the database's, so saving again replaces the last one.
        Callers guarantee that no other client is connected to the database meanwhile.
        """
        ...

    async def restore_snapshot(self, token: str) -> None:
        """Make the database's data identical to the snapshot `token` (which stays for the next run).

        Callers guarantee that no other client is connected; the engine closes and reopens its own
        pool as it needs to and is open and usable afterwards.
        """
        ...

    async def drop_snapshot(self, token: str) -> None:
        """Remove the snapshot `token`; nothing happens if it is already gone."""
        ...
