"""The core of the MariaDB engine: settings, connections, sessions, and the engine's
open/close/read/transaction/describe. Loading and snapshots build on `MariaDBCore` in their own
modules; `MariaDBEngine` (this package's `__init__`) puts the three together.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any, ClassVar

import asyncmy
from asyncmy import errors as driver_errors
from asyncmy.constants import CLIENT

from ...errors import (
    AuthenticationFailed,
    BadURL,
    DatabaseTimeout,
    DbladderError,
    DuplicateKey,
    MissingDatabase,
    ServerUnreachable,
)
from ...urls import DatabaseURL
from ..base import EngineInfo, EngineOptions, Row, SqlParams, StatementProblem
from ..pool import Pool

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 3306
DEFAULT_USER = "root"
# URL value -> SQL; "Postgres vs MariaDB on two dedicated CPUs" ran both servers with
# transaction-isolation=READ-COMMITTED.
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
STATEMENT_CACHE_SIZE = 100  # per connection; the shop uses 8 statements
DISCONNECT_TIMEOUT = 1.0

# Server error numbers (MariaDB's include/mysqld_ername.h).
ER_DBACCESS_DENIED_ERROR = 1044
ER_ACCESS_DENIED_ERROR = 1045
ER_BAD_DB_ERROR = 1049
ER_LOCK_WAIT_TIMEOUT = 1205
ER_DUP_ENTRY = 1062  # a second row with the same primary key or unique index values
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
    password: str = field(repr=False)
    database: str
    isolation: str  # a key of ISOLATION_LEVELS
    password_source: str | None = None  # "the URL", "MYSQL_PWD", "~/.my.cnf", or None: no password

    @property
    def password_hint(self) -> str:
        """What to check when the server refuses the user, naming where the password came from."""
        if self.password_source:
            return f"check the user name, and the password in {self.password_source}"
        return "no password was given: put it in MYSQL_PWD or in ~/.my.cnf ([client] password=...)"

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
        password_source=url.password_source,
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

    async def _execute(self, sql: str, args: SqlParams) -> Any:
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

    async def fetch_one(self, sql: str, args: SqlParams = ()) -> Row | None:
        rows = (await self._execute(sql, args)).rows
        return rows[0] if rows else None

    async def fetch_all(self, sql: str, args: SqlParams = ()) -> list[Row]:
        return list((await self._execute(sql, args)).rows or ())

    async def execute(self, sql: str, args: SqlParams = ()) -> int:
        return int((await self._execute(sql, args)).affected_rows)


class _Read:
    """`MariaDBEngine.read()`: a plain class, a few microseconds a query cheaper than an
    asynccontextmanager (as SQLite's)."""

    __slots__ = ("_connection", "_pool")

    def __init__(self, pool: Pool[_Connection]):
        self._pool = pool

    async def __aenter__(self) -> _Session:
        connection = self._pool.acquire_now()
        self._connection = await self._pool.acquire() if connection is None else connection
        return _Session(self._connection)

    async def __aexit__(self, exc_type: object, exc: BaseException | None, traceback: object) -> None:
        broken = _left_broken(self._connection, exc)
        if broken or not self._pool.release_now(self._connection):
            await self._pool.release(self._connection, broken=broken)


class MariaDBCore:
    """Settings, pool and sessions: what loading and snapshots build on."""

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
                duplicate = as_duplicate_key(exc)
                if duplicate is not None:
                    raise duplicate from exc
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

    def counters(self) -> dict[str, int]:
        return {}

    async def check_statements(self, statements: Sequence[str]) -> list[StatementProblem]:
        """Each text prepared on the server (COM_STMT_PREPARE, as sessions prepare it) and closed
        again; the server itself refuses a text of two statements."""
        problems = []
        async with self._borrow() as connection:
            for sql in statements:
                try:
                    statement = await connection.raw.prepare(sql)
                except driver_errors.Error as exc:
                    if not _in_step(exc):  # the connection failed, not the statement
                        raise
                    message = exc.args[1] if len(exc.args) > 1 else str(exc)
                    problems.append(StatementProblem.refused(sql, str(message)))
                    continue
                await statement.close()
        return problems


def as_duplicate_key(exc: BaseException) -> DuplicateKey | None:
    """DuplicateKey for the server's error 1062 (a repeated primary key or unique index), else None."""
    if _error_code(exc) != ER_DUP_ENTRY:
        return None
    return DuplicateKey(f"MariaDB: {exc.args[1] if len(exc.args) > 1 else exc}")


def _error_code(exc: BaseException) -> int | None:
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


async def _give_back(pool: Pool[_Connection], connection: _Connection, exc: BaseException | None) -> None:
    """Return a connection to the pool, or close it if `exc` may have left it out of step."""
    await pool.release(connection, broken=_left_broken(connection, exc))


def _left_broken(connection: _Connection, exc: BaseException | None) -> bool:
    """Whether a connection must be closed rather than reused: lost, or `exc` may have left it out
    of step."""
    return not ((exc is None or _in_step(exc)) and connection.raw.connected)


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
            f"{where} refused user {settings.user!r}: {message}; {settings.password_hint}"
        )
    if code == ER_BAD_DB_ERROR:
        return MissingDatabase(
            f"{where} has no database {settings.database!r}; create it with: "
            f"mariadb -e 'CREATE DATABASE `{settings.database}`'"
        )
    return None
