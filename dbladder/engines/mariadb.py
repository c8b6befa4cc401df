"""MariaDB, over TCP or a Unix socket, through asyncmy.

Why asyncmy: it speaks the binary protocol with server-side prepared statements and MariaDB's
COM_STMT_BULK_EXECUTE, and ships wheels. Every statement is prepared on first use on a connection
and reused from then on (seed 001: "Prepare once, on both drivers"); without that each query
would pay extra round trips and the comparison with PostgreSQL would be wrong.

Defaults are seed 001's: READ COMMITTED, set on every connection (`?isolation=repeatable-read`
to change), utf8mb4, autocommit outside `transaction()`. UPDATE counts the rows it matched, not
only those it changed (client flag FOUND_ROWS), as SQLite and PostgreSQL count.

    mariadb://root@127.0.0.1:3306/test                                  TCP (mysql:// too)
    mariadb://root@localhost/test?unix_socket=/run/mysqld/mysqld.sock   Unix socket

Loading: prepared INSERT sent by COM_STMT_BULK_EXECUTE, 10,000 rows a batch, each batch committed
on its own. On this 2-core machine (100k products, 1M orders, 2M items; other work sharing it,
so figures spread by up to 2x) whole seeds took, in seconds:
    bulk execute, a commit per batch                          6.7 - 12.2  (median 9.8)
    bulk execute, one transaction per table, checks off       8.1 - 17.1  (median 12.5)
    multi-row INSERT text, 5,000 rows, a commit per batch    14.0 - 14.6
    multi-row INSERT text, one transaction per table         18.3 - 18.8
    LOAD DATA LOCAL INFILE, 200,000-row files                12.3 - 20.1
One transaction with unique_checks and foreign_key_checks off (InnoDB's bulk path for an empty
table) was slower, not faster. LOAD DATA LOCAL does not work through asyncmy 0.2.18 at all (it
passes the file name as bytes where it wants str), so it was measured with that patched.

A snapshot (fresh data before each run, `dbladder.fresh`) is a database, `<db>_dbladder_snapshot`,
holding copies of the tables' InnoDB tablespace files; saving and restoring copy those files in
the server's data folder, so both need the server on this machine (else seeding again is used).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import os
import re
import shutil
import socket
import stat
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any, ClassVar

import asyncmy
from asyncmy import errors as driver_errors
from asyncmy.constants import CLIENT

from ..errors import (
    AuthenticationFailed,
    BadURL,
    DatabaseTimeout,
    DbladderError,
    MissingDatabase,
    NotWritable,
    ServerUnreachable,
)
from ..urls import DatabaseURL
from .base import Args, Column, EngineInfo, EngineOptions, Row, Schema, Table
from .pool import Pool

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 3306
DEFAULT_USER = "root"
# URL value -> SQL; seed 001 ran both servers with transaction-isolation=READ-COMMITTED.
ISOLATION_LEVELS = {
    "read-committed": "READ COMMITTED",
    "repeatable-read": "REPEATABLE READ",
    "read-uncommitted": "READ UNCOMMITTED",
    "serializable": "SERIALIZABLE",
}
DEFAULT_ISOLATION = "read-committed"
KNOWN_PARAMS = ("isolation", "unix_socket")

CHARSET = "utf8mb4"
# Byte-wise comparison, as SQLite's BINARY and PostgreSQL's C collation: the same `category = ?`
# matches the same rows on every engine.
COLLATION = "utf8mb4_bin"
TYPES = {"int": "INT", "bigint": "BIGINT"}
STATEMENT_CACHE_SIZE = 100  # per connection; the shop uses 8 statements
# A bulk batch stays far below max_allowed_packet (16 MB by default): at most this many bytes
# (estimated from the column types) and rows. Larger batches measured no faster.
BULK_BATCH_BYTES = 4 << 20
BULK_BATCH_ROWS = 10_000
DISCONNECT_TIMEOUT = 1.0
# Snapshots are databases named `<db>_dbladder_snapshot`. Snapshot code writes names into SQL
# and file paths as they are, so it takes only names whose file name is the name itself.
SNAPSHOT_SUFFIX = "_dbladder_snapshot"
MAX_NAME_LENGTH = 64
PLAIN_NAME = re.compile(r"[A-Za-z0-9_]+\Z")

# Server error numbers (MariaDB's include/mysqld_ername.h).
ER_DBACCESS_DENIED_ERROR = 1044
ER_ACCESS_DENIED_ERROR = 1045
ER_BAD_DB_ERROR = 1049
ER_LOCK_WAIT_TIMEOUT = 1205
# Server errors after which the server has closed the connection: shutdown, aborted connection,
# packet read/write errors and timeouts, connection killed.
FATAL_SERVER_ERRORS = {1053, 1152, 1158, 1159, 1160, 1161, 1927}


@dataclass(frozen=True)
class Settings:
    """Where and how to connect, from the URL."""

    host: str
    port: int
    unix_socket: str | None
    user: str
    password: str
    database: str
    isolation: str  # a key of ISOLATION_LEVELS

    @property
    def transport(self) -> str:
        if self.unix_socket:
            return f"unix socket {self.unix_socket}"
        return f"tcp {self.host}:{self.port}"


def parse_settings(url: DatabaseURL) -> Settings:
    """The URL's connection settings with defaults filled in; BadURL names every problem."""
    problems = []
    unknown = sorted(set(url.params) - set(KNOWN_PARAMS))
    if unknown:
        problems.append(f"unknown MariaDB setting(s) {', '.join(unknown)}; known: {', '.join(KNOWN_PARAMS)}")
    isolation = url.params.get("isolation", DEFAULT_ISOLATION).strip().lower().replace("_", "-")
    if isolation not in ISOLATION_LEVELS:
        problems.append(f"isolation must be one of {', '.join(ISOLATION_LEVELS)}, not {isolation!r}")
    unix_socket = url.params.get("unix_socket")
    if unix_socket is not None and not unix_socket.strip():
        problems.append("unix_socket must name the server's socket file, e.g. /run/mysqld/mysqld.sock")
    if not url.database:
        problems.append("the URL must name a database, e.g. mariadb://root@127.0.0.1:3306/test")
    if problems:
        raise BadURL(f"bad settings in {url.redacted!r}: " + "; ".join(problems))
    return Settings(
        host=url.host or DEFAULT_HOST,
        port=url.port or DEFAULT_PORT,
        unix_socket=unix_socket,
        user=url.user or DEFAULT_USER,
        password=url.password or "",
        database=url.database or "",
        isolation=isolation,
    )


class _Connection:
    """One asyncmy connection and its prepared statements, by SQL text."""

    __slots__ = ("raw", "statements")

    def __init__(self, raw: asyncmy.Connection):
        self.raw = raw
        self.statements: dict[str, Any] = {}

    async def prepare(self, sql: str) -> Any:
        if len(self.statements) >= STATEMENT_CACHE_SIZE:
            # Dicts keep insertion order: drop the oldest, so the server's count stays bounded.
            await self.statements.pop(next(iter(self.statements))).close()
        statement = await self.raw.prepare(sql)
        self.statements[sql] = statement
        return statement

    async def run(self, sql: str) -> None:
        """A statement run once (DDL, SET, ANALYZE), by the text protocol: not worth preparing.

        Not through a cursor: a cursor logs the server's notes ("Unknown table" from DROP TABLE IF
        EXISTS) as warnings, and engines never print.
        """
        await self.raw.query(sql)

    async def query(self, sql: str) -> list[Row]:
        """The rows of a statement run once (SHOW), by the text protocol."""
        async with self.raw.cursor() as cursor:
            await cursor.execute(sql)
            return list(await cursor.fetchall())


class _Session:
    """Statements on one connection, each prepared on first use and reused."""

    __slots__ = ("_connection",)

    def __init__(self, connection: _Connection):
        self._connection = connection

    async def _execute(self, sql: str, args: Args) -> Any:
        statement = self._connection.statements.get(sql)
        if statement is None:
            statement = await self._connection.prepare(sql)
        try:
            return await statement.execute(args if isinstance(args, tuple | list) else tuple(args))
        except driver_errors.Error as exc:
            if _error_code(exc) == ER_LOCK_WAIT_TIMEOUT:
                # Only the statement is undone; the caller's transaction() rolls back the rest.
                raise DatabaseTimeout(
                    "MariaDB: a row lock stayed taken longer than innodb_lock_wait_timeout"
                ) from None
            raise

    async def fetch_one(self, sql: str, args: Args = ()) -> Row | None:
        rows = (await self._execute(sql, args)).rows
        return rows[0] if rows else None

    async def fetch_all(self, sql: str, args: Args = ()) -> list[Row]:
        return list((await self._execute(sql, args)).rows or ())

    async def execute(self, sql: str, args: Args = ()) -> int:
        return int((await self._execute(sql, args)).affected_rows)


class _Read:
    """`MariaDBEngine.read()`: a plain class, a few microseconds a query cheaper than an
    asynccontextmanager (as SQLite's)."""

    __slots__ = ("_connection", "_pool")

    def __init__(self, pool: Pool[_Connection]):
        self._pool = pool

    async def __aenter__(self) -> _Session:
        self._connection = await self._pool.acquire()
        return _Session(self._connection)

    async def __aexit__(self, exc_type: object, exc: BaseException | None, traceback: object) -> None:
        await _give_back(self._pool, self._connection, exc)


class MariaDBEngine:
    name: ClassVar[str] = "mariadb"

    def __init__(self, url: DatabaseURL, options: EngineOptions):
        self.url = url
        self.options = options
        self.settings = parse_settings(url)
        self._pool = self._new_pool()

    def _new_pool(self) -> Pool[_Connection]:
        return Pool(self.options.pool_size, self._connect, self._disconnect, self.options.pool_timeout)

    async def _connect(self, with_database: bool = True) -> _Connection:
        """A new connection, to the URL's database or (`with_database=False`) to none."""
        settings = self.settings
        raw = None
        try:
            # asyncmy's own timeout covers only the socket; this one covers the handshake too.
            async with asyncio.timeout(self.options.connect_timeout):
                raw = await asyncmy.connect(
                    host=settings.host,
                    port=settings.port,
                    unix_socket=settings.unix_socket,
                    user=settings.user,
                    password=settings.password,
                    database=settings.database if with_database else None,
                    charset=CHARSET,
                    autocommit=True,
                    client_flag=CLIENT.FOUND_ROWS,
                    connect_timeout=self.options.connect_timeout,
                )
                await raw.query(
                    f"SET SESSION TRANSACTION ISOLATION LEVEL {ISOLATION_LEVELS[settings.isolation]}"
                )
        except Exception as exc:
            if raw is not None:
                raw.close()
            failure = _connect_failure(exc, settings, self.options.connect_timeout)
            if failure is None:
                raise
            raise failure from None
        return _Connection(raw)

    async def _disconnect(self, connection: _Connection) -> None:
        # QUIT, so the server does not log an aborted connection; a server that does not answer
        # in time gets the socket closed instead. The pool needs this to never raise.
        try:
            async with asyncio.timeout(DISCONNECT_TIMEOUT):
                await connection.raw.ensure_closed()
        except Exception:
            connection.raw.close()

    async def open(self) -> None:
        # The first connection maps every failure to a DbladderError (_connect_failure).
        connection = await self._pool.acquire()
        await self._pool.release(connection)

    async def close(self) -> None:
        await self._pool.close()

    @asynccontextmanager
    async def _borrow(self) -> AsyncIterator[_Connection]:
        """A pooled connection itself, for statements that are not the service's (DDL, SHOW)."""
        connection = await self._pool.acquire()
        try:
            yield connection
        except BaseException as exc:
            await _give_back(self._pool, connection, exc)
            raise
        await _give_back(self._pool, connection, None)

    def read(self) -> _Read:
        return _Read(self._pool)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[_Session]:
        connection = await self._pool.acquire()
        raw = connection.raw
        usable = False
        try:
            await raw.begin()
            try:
                yield _Session(connection)
            except BaseException as exc:
                # Out of step (cancelled mid-statement, lost connection): no ROLLBACK could be
                # read back reliably; closing the connection makes the server roll back.
                if _in_step(exc):
                    await raw.rollback()
                    usable = True
                raise
            await raw.commit()
            usable = True
        finally:
            await self._pool.release(connection, broken=not (usable and raw.connected))

    async def describe(self) -> EngineInfo:
        names = (
            "version",
            "tx_isolation",
            "transaction_isolation",  # MariaDB >= 11.1; tx_isolation before
            "innodb_flush_log_at_trx_commit",
            "sync_binlog",
            "log_bin",
            "innodb_doublewrite",
            "innodb_buffer_pool_size",
            "innodb_log_file_size",
            "max_connections",
        )
        async with self._borrow() as connection:
            rows = await connection.query(
                "SHOW SESSION VARIABLES WHERE Variable_name IN (" + ", ".join(f"'{n}'" for n in names) + ")"
            )
        values = {str(name): str(value) for name, value in rows}
        isolation = values.get("transaction_isolation") or values.get("tx_isolation", "?")
        durability = {
            key: values.get(key, "?")
            for key in ("innodb_flush_log_at_trx_commit", "sync_binlog", "log_bin", "innodb_doublewrite")
        }
        problems = []
        if durability["innodb_flush_log_at_trx_commit"] != "1":
            problems.append(
                f"innodb_flush_log_at_trx_commit={durability['innodb_flush_log_at_trx_commit']}: "
                "a commit can be acknowledged before the redo log reaches the disk"
            )
        if durability["log_bin"] != "OFF" and durability["sync_binlog"] != "1":
            problems.append(
                f"log_bin={durability['log_bin']} with sync_binlog={durability['sync_binlog']}: a commit can "
                "be acknowledged before the binary log reaches the disk"
            )
        return EngineInfo(
            engine=self.name,
            url=self.url.redacted,
            server_version=values.get("version", "?"),
            driver="asyncmy",
            driver_version=version("asyncmy"),
            transport=self.settings.transport,
            isolation=isolation.lower(),
            pool_size=self.options.pool_size,
            prepared_statements=(
                f"server-side (binary protocol), prepared once per connection and reused, "
                f"up to {STATEMENT_CACHE_SIZE} per connection"
            ),
            durable=not problems,
            durability=durability,
            durability_note="; ".join(problems),
            settings={
                key: values.get(key, "?")
                for key in ("innodb_buffer_pool_size", "innodb_log_file_size", "max_connections")
            },
        )

    async def recreate_schema(self, schema: Schema) -> None:
        async with self._borrow() as connection:
            for table in reversed(schema.tables):
                await connection.run(f"DROP TABLE IF EXISTS {table.name}")
            for table in schema.tables:
                await connection.run(_create_table_sql(table))

    async def bulk_load(self, table: Table, rows: Iterable[Row]) -> None:
        placeholders = ", ".join("?" for _ in table.columns)
        sql = f"INSERT INTO {table.name} ({', '.join(table.column_names)}) VALUES ({placeholders})"
        batch_rows = _bulk_batch_rows(table)
        iterator = iter(rows)
        # The statement is not cached: it is used once. Each batch commits on its own (autocommit):
        # faster here than one transaction per table with unique_checks off (module notes).
        async with self._borrow() as connection, await connection.raw.prepare(sql) as statement:
            while batch := list(itertools.islice(iterator, batch_rows)):
                await _insert_batch(statement, batch)

    async def finish_load(self, schema: Schema) -> None:
        # AUTO_INCREMENT needs nothing: InnoDB moves it past every id inserted explicitly.
        async with self._borrow() as connection:
            for index in schema.indexes:
                await connection.run(
                    f"CREATE INDEX IF NOT EXISTS {index.name} ON {index.table} ({', '.join(index.columns)})"
                )
            await connection.run(f"ANALYZE TABLE {', '.join(t.name for t in schema.tables)}")

    async def table_exists(self, name: str) -> bool:
        async with self.read() as session:
            row = await session.fetch_one(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
                (name,),
            )
        return row is not None

    def counters(self) -> dict[str, int]:
        return {}

    @asynccontextmanager
    async def _own_connection(self) -> AsyncIterator[_Connection]:
        """A connection outside the pool and without a default database, closed after the block:
        snapshots take table locks (FLUSH ... FOR EXPORT) that must never go back into the pool."""
        connection = await self._connect(with_database=False)
        try:
            yield connection
        finally:
            await self._disconnect(connection)

    async def save_snapshot(self) -> str | None:
        """Copy every table into the database `<db>_dbladder_snapshot`.

        Where this process can reach the server's data folder (the server is on this machine and
        we may write its files), the copy is InnoDB's transportable tablespaces: FLUSH TABLES ...
        FOR EXPORT, a file copy of each .ibd and .cfg into the snapshot's tables (created LIKE the
        originals, tablespace discarded), IMPORT TABLESPACE. Elsewhere it is INSERT ... SELECT
        inside the server. Both beat seeding the seeds' data set (docs/design.md: 0.5-1.0 s and
        6.3-10.8 s against 6.9-12.5 s to re-seed); RENAME TABLE moves a table without copying it,
        so it cannot keep a copy for the next run. None (seed again) when a table cannot be copied
        so: not InnoDB, partitioned, with foreign keys or triggers (CREATE TABLE ... LIKE keeps
        neither), or a name that is not plain.
        """
        database = self.settings.database
        snapshot = snapshot_name(database)
        async with self._own_connection() as admin:
            tables = await _copyable_tables(admin, database)
            if not tables or not PLAIN_NAME.match(snapshot):
                return None
            try:
                await admin.run(f"DROP DATABASE IF EXISTS {snapshot}")
                await admin.run(f"CREATE DATABASE {snapshot}")
                await _copy_tables(admin, database, snapshot, tables)
            except BaseException:
                await self._drop_database_quietly(snapshot)
                raise
        return snapshot

    async def restore_snapshot(self, token: str) -> None:
        """Replace every table of the database with a copy of the snapshot's (copied as `save_snapshot`
        copies)."""
        snapshot = _checked_token(token)
        database = self.settings.database
        if not PLAIN_NAME.match(database):
            raise ValueError(f"MariaDB keeps no snapshot of database {database!r} (see save_snapshot)")
        await self._pool.close()
        try:
            async with self._own_connection() as admin:
                tables = await _base_tables(admin, snapshot)
                if not tables:
                    raise MissingDatabase(
                        f"MariaDB has no snapshot database {snapshot!r}; save_snapshot() makes one"
                    )
                # Tables created after the snapshot go too: the data must be the snapshot's.
                current = await _base_tables(admin, database)
                if current:
                    await admin.run("DROP TABLE IF EXISTS " + ", ".join(f"{database}.{t}" for t in current))
                await _copy_tables(admin, snapshot, database, tables)
                # As after seeding: fresh statistics for the optimizer.
                await admin.run("ANALYZE TABLE " + ", ".join(f"{database}.{t}" for t in tables))
        finally:
            self._pool = self._new_pool()
        await self.open()

    async def drop_snapshot(self, token: str) -> None:
        snapshot = _checked_token(token)
        async with self._own_connection() as admin:
            await admin.run(f"DROP DATABASE IF EXISTS {snapshot}")

    async def _drop_database_quietly(self, name: str) -> None:
        """Best-effort cleanup after a failure, on a connection of its own (the failed one may be broken)."""
        with contextlib.suppress(Exception):
            async with self._own_connection() as admin:
                await admin.run(f"DROP DATABASE IF EXISTS {name}")


def snapshot_name(database: str) -> str:
    """`<database>_dbladder_snapshot`, shortened with a hash of the name to fit MariaDB's 64 characters."""
    name = database + SNAPSHOT_SUFFIX
    if len(name) <= MAX_NAME_LENGTH:
        return name
    digest = hashlib.sha256(database.encode()).hexdigest()[:8]
    return f"{database[: MAX_NAME_LENGTH - len(SNAPSHOT_SUFFIX) - len(digest) - 1]}_{digest}{SNAPSHOT_SUFFIX}"


def _checked_token(token: str) -> str:
    """The snapshot database of a token; refuses anything else, so a mistake cannot drop a database."""
    if not (token.endswith(SNAPSHOT_SUFFIX) and PLAIN_NAME.match(token)):
        raise ValueError(f"not a MariaDB snapshot token: {token!r}")
    return token


async def _base_tables(connection: _Connection, database: str) -> list[str]:
    """The base tables of a database with a plain name (so it can be written into SQL as it is)."""
    rows = await connection.query(
        "SELECT table_name FROM information_schema.tables "
        f"WHERE table_schema = '{database}' AND table_type = 'BASE TABLE' ORDER BY table_name"
    )
    return [str(row[0]) for row in rows]


async def _copyable_tables(connection: _Connection, database: str) -> list[str] | None:
    """The database's tables if each can be copied whole either way (see `save_snapshot`) and
    come back the same through CREATE TABLE ... LIKE; None if any cannot."""
    if not PLAIN_NAME.match(database):
        return None  # MariaDB encodes other characters in file names (@002d)
    rows = await connection.query(
        "SELECT table_name, table_type, engine, create_options FROM information_schema.tables "
        f"WHERE table_schema = '{database}' AND table_type <> 'VIEW'"
    )
    for name, table_type, engine, create_options in rows:
        if table_type != "BASE TABLE" or engine != "InnoDB" or not PLAIN_NAME.match(str(name)):
            return None
        if "partitioned" in str(create_options or ""):
            return None
    for catalog, column in (("referential_constraints", "constraint_schema"), ("triggers", "trigger_schema")):
        sql = f"SELECT 1 FROM information_schema.{catalog} WHERE {column} = '{database}'"
        if await connection.query(sql):
            return None
    return sorted(str(row[0]) for row in rows)


async def _copy_tables(connection: _Connection, source: str, target: str, tables: list[str]) -> None:
    """Create `target`'s tables (absent before) as copies of `source`'s: by their tablespace files
    where the server's data folder is ours to use, else row by row inside the server."""
    for table in tables:
        await connection.run(f"CREATE TABLE {target}.{table} LIKE {source}.{table}")
    datadir = await _local_datadir(connection, source, target)
    if datadir is not None and await _exported_here(connection, datadir, source, tables):
        for table in tables:
            await connection.run(f"ALTER TABLE {target}.{table} DISCARD TABLESPACE")
        await _copy_tablespaces(connection, datadir, source, target, tables)
        return
    for table in tables:
        await connection.run(f"INSERT INTO {target}.{table} SELECT * FROM {source}.{table}")
    # The copy moves AUTO_INCREMENT past the copied ids; the source's may be further on (rows
    # deleted at the end), and the next id must be the same.
    rows = await connection.query(
        "SELECT table_name, auto_increment FROM information_schema.tables "
        f"WHERE table_schema = '{source}' AND auto_increment IS NOT NULL"
    )
    for table, next_id in rows:
        if str(table) in tables:
            await connection.run(f"ALTER TABLE {target}.{table} AUTO_INCREMENT = {int(next_id)}")


async def _local_datadir(connection: _Connection, *databases: str) -> str | None:
    """The server's data folder if this process sees the databases' folders in it and may copy
    files in and out of them as the server's owner; None otherwise. That the folder is this
    server's and not a look-alike is proved by `_exported_here`."""
    rows = await connection.query("SELECT @@datadir, @@innodb_file_per_table")
    if not rows or str(rows[0][1]) not in ("1", "ON"):
        return None
    datadir = str(rows[0][0])
    for database in databases:
        folder = os.path.join(datadir, database)
        try:
            owner = os.stat(folder).st_uid
        except OSError:
            return None
        if os.geteuid() not in (0, owner) or not os.access(folder, os.R_OK | os.W_OK | os.X_OK):
            return None
    return datadir


def _export_files(datadir: str, database: str, tables: list[str]) -> list[str]:
    """The files FLUSH TABLES ... FOR EXPORT leaves for each table: its tablespace and its .cfg."""
    return [os.path.join(datadir, database, f"{table}.{kind}") for table in tables for kind in ("ibd", "cfg")]


async def _exported_here(connection: _Connection, datadir: str, database: str, tables: list[str]) -> bool:
    """Whether an export of the tables shows up in `datadir`: a .cfg exists only while its table
    is exported, so this proves the folder is the server's own."""
    await _start_export(connection, datadir, database, tables)
    try:
        return all(os.path.isfile(path) for path in _export_files(datadir, database, tables))
    finally:
        await connection.run("UNLOCK TABLES")


async def _start_export(connection: _Connection, datadir: str, database: str, tables: list[str]) -> None:
    # A .cfg left by an earlier failure would pass for the export's; the export writes it anew.
    for table in tables:
        _remove_if_present(os.path.join(datadir, database, f"{table}.cfg"))
    # Quiesces the tables (their changes flushed to the .ibd files) and writes each one's .cfg
    # (columns, indexes, AUTO_INCREMENT) until UNLOCK TABLES; readers may go on meanwhile.
    await connection.run(f"FLUSH TABLES {', '.join(f'{database}.{t}' for t in tables)} FOR EXPORT")


async def _copy_tablespaces(
    connection: _Connection, datadir: str, source: str, target: str, tables: list[str]
) -> None:
    """Copy the tablespaces of `source`'s tables into `target`'s discarded ones and import them."""
    await _start_export(connection, datadir, source, tables)
    try:
        sources = _export_files(datadir, source, tables)
        if not all(os.path.isfile(path) for path in sources):
            raise NotWritable(f"MariaDB's export of {source!r} did not appear in {datadir}")
        owner = os.stat(os.path.join(datadir, target))
        targets = _export_files(datadir, target, tables)
        await asyncio.to_thread(
            _copy_files, list(zip(sources, targets, strict=True)), owner.st_uid, owner.st_gid
        )
    finally:
        await connection.run("UNLOCK TABLES")
    for table in tables:
        await connection.run(f"ALTER TABLE {target}.{table} IMPORT TABLESPACE")
        # IMPORT reads the .cfg and leaves it; the server never removes it.
        _remove_if_present(os.path.join(datadir, target, f"{table}.cfg"))


def _copy_files(files: list[tuple[str, str]], uid: int, gid: int) -> None:
    """Copy each (source, target) pair as the server's own file (owner and mode), synced to the
    disk: the server opens it as itself, and the run should not pay for writing it back."""
    for source, target in files:
        shutil.copyfile(source, target)
        os.chmod(target, stat.S_IMODE(os.stat(source).st_mode))
        os.chown(target, uid, gid)
        descriptor = os.open(target, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _remove_if_present(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def _error_code(exc: BaseException) -> int | None:
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


async def _give_back(pool: Pool[_Connection], connection: _Connection, exc: BaseException | None) -> None:
    """Return a connection to the pool, or close it if `exc` may have left it out of step."""
    usable = exc is None or _in_step(exc)
    await pool.release(connection, broken=not (usable and connection.raw.connected))


def _in_step(exc: BaseException) -> bool:
    """Whether a connection is still in step with the server after `exc` ended a block.

    A server error arrives as one whole ERR packet, and our own errors (OutOfStock) are raised
    between statements. Anything else - a client-side error (2000-2999: lost connection, out of
    sync), a cancelled await that may have left a reply unread - means the connection is closed.
    """
    if isinstance(exc, DbladderError):
        return True
    if isinstance(exc, driver_errors.Error):
        code = _error_code(exc)
        return code is not None and code not in FATAL_SERVER_ERRORS and not (code == 0 or 2000 <= code < 3000)
    return False


def _connect_failure(exc: BaseException, settings: Settings, timeout: float) -> DbladderError | None:
    """The DbladderError for a connection that failed, or None for an unexpected failure."""
    where = f"MariaDB at {settings.transport}"
    # asyncmy wraps socket errors in OperationalError 2003, the OSError as its cause.
    cause = exc.__cause__ if isinstance(exc.__cause__, OSError) else exc
    if isinstance(cause, TimeoutError):
        return ServerUnreachable(
            f"{where} did not answer within {timeout:g} s (connect_timeout); is the server up and reachable?"
        )
    if isinstance(cause, socket.gaierror):
        return ServerUnreachable(f"cannot connect to MariaDB: no such host {settings.host!r}; check the URL")
    if isinstance(cause, FileNotFoundError):
        return ServerUnreachable(
            f"cannot connect to MariaDB: no socket file {settings.unix_socket}; is the server running, "
            "and is that its socket (SHOW VARIABLES LIKE 'socket')?"
        )
    if isinstance(cause, ConnectionRefusedError):
        return ServerUnreachable(
            f"{where} refused the connection; is the server running and listening there?"
        )
    if isinstance(cause, OSError):
        return ServerUnreachable(f"cannot connect to {where}: {cause.strerror or cause}")
    code = _error_code(exc)
    message = exc.args[1] if len(exc.args) > 1 else str(exc)
    if code in (ER_ACCESS_DENIED_ERROR, ER_DBACCESS_DENIED_ERROR):
        return AuthenticationFailed(
            f"{where} refused user {settings.user!r}: {message}; check the user and password in the URL"
        )
    if code == ER_BAD_DB_ERROR:
        return MissingDatabase(
            f"{where} has no database {settings.database!r}; create it with: "
            f"mariadb -e 'CREATE DATABASE `{settings.database}`'"
        )
    return None


def _bulk_batch_rows(table: Table) -> int:
    """Rows per COM_STMT_BULK_EXECUTE: a packet of at most BULK_BATCH_BYTES."""
    # Per value: a type byte and 8 bytes for a number; up to 4 bytes a character and a length for text.
    row_bytes = sum(1 + (4 * (c.max_length or 1024) + 3 if c.type == "text" else 8) for c in table.columns)
    return max(1, min(BULK_BATCH_ROWS, BULK_BATCH_BYTES // row_bytes))


async def _insert_batch(statement: Any, batch: list[Row]) -> None:
    try:
        await statement.execute_bulk(batch)
    except (ValueError, driver_errors.NotSupportedError):
        # Raised before anything is sent: a column mixing types or all NULL, or a server without
        # bulk execution (MySQL). Row by row is slower, and right.
        for row in batch:
            await statement.execute(row)


def _column_sql(column: Column) -> str:
    if column.generated_id:
        return f"{column.name} BIGINT NOT NULL AUTO_INCREMENT"
    if column.type == "text":
        # Unbounded text cannot be indexed whole; the schema bounds every text column it indexes.
        return f"{column.name} {f'VARCHAR({column.max_length})' if column.max_length else 'TEXT'} NOT NULL"
    return f"{column.name} {TYPES[column.type]} NOT NULL"


def _create_table_sql(table: Table) -> str:
    parts = [_column_sql(c) for c in table.columns]
    parts.append(f"PRIMARY KEY ({', '.join(table.primary_key)})")
    return (
        f"CREATE TABLE {table.name} ({', '.join(parts)}) "
        f"ENGINE=InnoDB DEFAULT CHARSET={CHARSET} COLLATE={COLLATION}"
    )
