"""The one small interface every engine implements.

An engine owns a pool of connections to one database and offers three things:

* sessions: `read()` hands out a pooled connection in autocommit mode, `transaction()` one inside
  BEGIN ... COMMIT (ROLLBACK when the block raises). A `Session` runs SQL written once, with `?`
  placeholders; the engine rewrites it for its driver and prepares each statement once per
  connection ("Postgres vs MariaDB on two dedicated CPUs": "Prepare once, on both drivers").
* data definition: `recreate_schema()`, `bulk_load()` and `finish_load()` turn a dialect-neutral
  `Schema` into tables and load rows by the engine's fastest path; `check_statements()` asks the
  engine whether it can prepare a workload's SQL, before anything is loaded.
* `describe()`: the versions and settings that decide the outcome (`dbladder engines`).

Everything that differs between SQLite, PostgreSQL and MariaDB lives in that engine's module;
nothing elsewhere asks which engine it is talking to.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Protocol

from ..errors import InvalidConfig
from ..types import Row, SqlParams
from ..urls import DatabaseURL

DEFAULT_POOL_SIZE = 100  # the seeds' pool: SetMaxOpenConns(100)


@dataclass(frozen=True)
class EngineOptions:
    """How dbladder uses a database, the same for every engine."""

    pool_size: int = DEFAULT_POOL_SIZE
    # Seconds a request may wait for a free pooled connection before it fails with PoolTimeout.
    pool_timeout: float = 5.0
    # Seconds to wait for the first connection to a server.
    connect_timeout: float = 5.0
    # False: only look at a database that exists (`dbladder engines`). SQLite then refuses a file
    # that is not there instead of creating one; the servers never create a database on open.
    create: bool = True

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


# The column types a schema may use (see `Column`).
COLUMN_TYPES = ("int", "bigint", "double", "bool", "text")
INT_RANGE = (-(2**31), 2**31 - 1)  # "int": a 32-bit integer, PostgreSQL's INTEGER and MariaDB's INT
DOUBLE_MAX = sys.float_info.max  # "double": finite, so from -DOUBLE_MAX to DOUBLE_MAX
# Names are written into SQL as they are, unquoted, so they are plain identifiers.
PLAIN_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class Column:
    """One column, in a type that every engine stores, checks and returns alike.

    `type` is one of COLUMN_TYPES:

    * "int": a whole number from -2,147,483,648 to 2,147,483,647 (INTEGER, INT; SQLite, whose
      INTEGER is 64-bit, checks the range). Give Python ints: SQLite refuses 1.5, the servers
      round it, each its own way.
    * "bigint": a 64-bit whole number (BIGINT; SQLite's INTEGER).
    * "double": a finite 64-bit floating-point number (DOUBLE PRECISION, DOUBLE, SQLite's REAL);
      every engine refuses NaN and the infinities (MariaDB cannot store them; SQLite and
      PostgreSQL check the range).
    * "bool": 0 or 1, stored and read back as an int (SMALLINT, TINYINT, INTEGER, each checked to
      be 0 or 1). PostgreSQL's BOOLEAN would read back as True/False and compare only with
      booleans, so SQL written once (`WHERE done = 1`) would not run on every engine.
    * "text": a string; with `max_length`, of at most that many characters (VARCHAR(n); SQLite
      checks length()). Text that an engine indexes needs the bound (MariaDB); without one,
      MariaDB's TEXT holds at most 65,535 bytes.

    Every column is NOT NULL. Each engine checks every value it stores (SQLite tables are
    STRICT), so a row of the wrong type is refused on all three, not only on the servers.
    """

    name: str
    type: str
    max_length: int = 0  # for "text": engines that index text need a bound (MariaDB VARCHAR)
    generated_id: bool = False  # the table's primary key, assigned by the database on insert


@dataclass(frozen=True)
class Table:
    """A table: its columns (every one NOT NULL) and its primary key.

    `clustered` stores the rows in primary-key order, for a table whose key is not a generated
    id and whose rows are small (a pair of ids, a timestamp): SQLite makes it a WITHOUT ROWID
    table, which keeps each row once, in its key's B-tree, instead of twice (a rowid table and
    the key's index). InnoDB stores every table that way already and PostgreSQL has no such
    table, so for them it changes nothing. Chirp's likes, 5 million rows: 150 MB instead of 248,
    loaded in 3.3 s instead of 4.5 (docs/chirp.md).
    """

    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]
    clustered: bool = False

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def generated_id(self) -> Column | None:
        return next((c for c in self.columns if c.generated_id), None)

    def validate(self) -> list[str]:
        """Every problem with this table, each naming the table and, where it is one, the column."""
        where = f"table {self.name!r}"
        problems = []
        if not PLAIN_IDENTIFIER.match(self.name):
            problems.append(f"{where}: the name must be letters, digits and _ (not starting with a digit)")
        if not self.columns:
            problems.append(f"{where}: has no columns")
        names = [c.name for c in self.columns]
        for name in sorted({n for n in names if names.count(n) > 1}):
            problems.append(f"{where}: column {name!r} appears more than once")
        for column in self.columns:
            problems.extend(
                f"{where}, column {column.name!r}: {problem}" for problem in _column_problems(column)
            )
        if not self.primary_key:
            problems.append(f"{where}: the primary key names no column")
        for name in self.primary_key:
            if name not in names:
                problems.append(f"{where}: the primary key names {name!r}, which is not a column")
        generated = [c.name for c in self.columns if c.generated_id]
        if len(generated) > 1:
            problems.append(f"{where}: only one column can be a generated id, not {', '.join(generated)}")
        elif generated and self.primary_key != (generated[0],):
            problems.append(
                f"{where}: the generated id {generated[0]!r} must be the whole primary key, "
                f"not {', '.join(self.primary_key) or 'none'}"
            )
        if generated and self.clustered:
            # SQLite assigns ids only to a rowid table's INTEGER PRIMARY KEY.
            problems.append(f"{where}: a clustered table cannot have a generated id ({generated[0]!r})")
        return problems


def _column_problems(column: Column) -> list[str]:
    problems = []
    if not PLAIN_IDENTIFIER.match(column.name):
        problems.append("the name must be letters, digits and _ (not starting with a digit)")
    if column.type not in COLUMN_TYPES:
        problems.append(f"unknown type {column.type!r}; the types are {', '.join(COLUMN_TYPES)}")
    if column.max_length and column.type != "text":
        problems.append(f"max_length applies to text only, not to {column.type!r}")
    if column.max_length < 0:
        problems.append(f"max_length must be 0 (no bound) or more, not {column.max_length}")
    if column.generated_id and column.type not in ("int", "bigint"):
        problems.append(f"a generated id is a whole number (int or bigint), not {column.type!r}")
    return problems


@dataclass(frozen=True)
class Index:
    """A secondary index, built after the load; `unique` refuses a second row with the same values."""

    name: str
    table: str
    columns: tuple[str, ...]
    unique: bool = False

    def create_sql(self) -> str:
        """CREATE [UNIQUE] INDEX IF NOT EXISTS, the same text on every engine."""
        kind = "UNIQUE INDEX" if self.unique else "INDEX"
        return f"CREATE {kind} IF NOT EXISTS {self.name} ON {self.table} ({', '.join(self.columns)})"


@dataclass(frozen=True)
class Schema:
    tables: tuple[Table, ...]
    indexes: tuple[Index, ...] = ()

    def table(self, name: str) -> Table:
        for table in self.tables:
            if table.name == name:
                return table
        raise KeyError(name)

    def validate(self) -> list[str]:
        """Every problem with the schema (unknown column types, names that are not columns, ...),
        each naming the table and column or index it is about."""
        problems = []
        names = [t.name for t in self.tables]
        for name in sorted({n for n in names if names.count(n) > 1}):
            problems.append(f"table {name!r} appears more than once")
        for table in self.tables:
            problems.extend(table.validate())
        for index in self.indexes:
            where = f"index {index.name!r}"
            if not PLAIN_IDENTIFIER.match(index.name):
                problems.append(
                    f"{where}: the name must be letters, digits and _ (not starting with a digit)"
                )
            if index.table not in names:
                problems.append(f"{where}: no table {index.table!r} in the schema")
                continue
            columns = self.table(index.table).column_names
            if not index.columns:
                problems.append(f"{where}: names no column")
            for column in index.columns:
                if column not in columns:
                    problems.append(f"{where}: table {index.table!r} has no column {column!r}")
        return problems

    def checked(self) -> Schema:
        """This schema, or InvalidConfig listing every problem."""
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self


@dataclass(frozen=True)
class StatementProblem:
    """A SQL text that an engine refused to prepare (`Engine.check_statements`)."""

    statement: str
    message: str  # the engine's own error, its first line

    @classmethod
    def refused(cls, statement: str, message: str) -> StatementProblem:
        """The problem with the first line of the engine's message (PostgreSQL adds hints below)."""
        lines = message.strip().splitlines()
        return cls(statement, lines[0] if lines else "refused without a message")


NO_STATEMENT = "no SQL statement in the text"
MORE_THAN_ONE_STATEMENT = "more than one SQL statement in the text"


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
    # A write is acknowledged only after it reaches the disk (the rule of "Postgres vs SQLite under load").
    durable: bool
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

    async def fetch_one(self, sql: str, args: SqlParams = ()) -> Row | None:
        """The first row of a query, or None."""
        ...

    async def fetch_all(self, sql: str, args: SqlParams = ()) -> list[Row]:
        """Every row of a query."""
        ...

    async def execute(self, sql: str, args: SqlParams = ()) -> int:
        """Run a statement; the number of rows it changed."""
        ...


class Engine(Protocol):
    """A database behind a pool. One implementation per module in `dbladder.engines`."""

    name: ClassVar[str]
    load_streams: ClassVar[int]
    """How many `bulk_load` calls seeding runs side by side for one table, each on its own
    connection and with its own share of the rows (1: the engine takes one writer at a time)."""
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
        """A pooled connection inside one transaction: COMMIT on exit, ROLLBACK if the block raises.

        A statement that would store a second row with the same primary key or unique index values
        ends the block with errors.DuplicateKey, after the rollback."""
        ...

    async def describe(self) -> EngineInfo:
        """Versions and settings that decide the outcome."""
        ...

    async def recreate_schema(self, schema: Schema) -> None:
        """Drop the schema's tables if they exist and create them empty, without secondary indexes.

        Raises InvalidConfig, listing every problem, for a schema that does not validate."""
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

    async def check_statements(self, statements: Sequence[str]) -> list[StatementProblem]:
        """Prepare each SQL text (written with `?` placeholders) without running it, on one pooled
        connection; one StatementProblem, in order, for each text the engine refuses. A text must
        hold exactly one statement."""
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


@dataclass(frozen=True)
class ActivityReading:
    """One look at what the database was doing (`ActivityProbe.read`).

    `sessions` counts the run's sessions by what they were doing at that moment (PostgreSQL:
    "active", "Lock", "IO", ...); `totals` holds the server's own cumulative counters and gauges
    (checkpoints, row lock waits, the WAL's size). `t` is time.perf_counter() when it was taken.
    """

    t: float
    sessions: dict[str, int] = field(default_factory=dict)
    totals: dict[str, float] = field(default_factory=dict)


class ActivityProbe(Protocol):
    """An engine's look at what its database is doing, on a connection (or file) of its own.

    One implementation per engine package (`activity.py`); `engines.activity.ActivitySampler`
    runs it in a background thread and turns its readings into per-window figures.
    """

    engine: ClassVar[str]
    default_interval: ClassVar[float]  # seconds between readings, measured cheap (module doc)

    async def open(self) -> None:
        """Connect; raise a DbladderError naming what to fix."""
        ...

    async def read(self) -> ActivityReading:
        """What the database is doing now (the reading's `t` is set by the caller)."""
        ...

    async def close(self) -> None:
        """Disconnect; never raises."""
        ...

    def figures(self, readings: Sequence[ActivityReading]) -> dict[str, float]:
        """A window's figures from its readings, the first one being the window's baseline
        (taken at or before its start), so counters are differences from it."""
        ...
