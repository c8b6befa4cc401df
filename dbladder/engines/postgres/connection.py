"""The core of the PostgreSQL engine: the URL's endpoint, connections, sessions, placeholders,
and the engine's open/close/read/transaction/describe. Loading and snapshots build on
`PostgresCore` in their own modules; `PostgresEngine` (this package's `__init__`) puts the three
together.
"""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, ClassVar

import asyncpg

from ...errors import AuthenticationFailed, BadURL, DuplicateKey, MissingDatabase, ServerUnreachable
from ...urls import DatabaseURL
from ..base import NO_STATEMENT, EngineInfo, EngineOptions, Row, SqlParams, StatementProblem
from ..pool import Pool

if TYPE_CHECKING:
    from asyncpg.prepared_stmt import PreparedStatement

DEFAULT_USER = "postgres"
DEFAULT_DATABASE = "postgres"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 5432
SSL_MODES = ("disable", "prefer")
URL_PARAMS = ("host", "sslmode")
STATEMENTS_PER_CONNECTION = 200

DURABILITY_SETTINGS = ("fsync", "synchronous_commit", "wal_level", "full_page_writes")
OTHER_SETTINGS = ("shared_buffers", "max_connections", "effective_cache_size", "max_wal_size")


def rewrite_placeholders(sql: str) -> str:
    """`?` placeholders as PostgreSQL's `$1, $2 ...`; a `?` inside quotes or a comment is kept."""
    out = []
    number = 0
    i = 0
    length = len(sql)
    while i < length:
        char = sql[i]
        if char in "'\"":
            end = i + 1
            while True:
                end = sql.find(char, end)
                if end == -1:
                    end = length
                    break
                if sql.startswith(char, end + 1):  # a doubled quote is an escaped one
                    end += 2
                    continue
                end += 1
                break
            out.append(sql[i:end])
            i = end
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            end = length if end == -1 else end
            out.append(sql[i:end])
            i = end
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            end = length if end == -1 else end + 2
            out.append(sql[i:end])
            i = end
        elif char == "?":
            number += 1
            out.append(f"${number}")
            i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _changed_rows(status: str) -> int:
    """The row count of a command tag: "UPDATE 3" -> 3, "INSERT 0 1" -> 1, "CREATE TABLE" -> 0."""
    last = status.rpartition(" ")[2]
    return int(last) if last.isdigit() else 0


class _Endpoint:
    """Where and as whom to connect, from the URL; BadURL names anything it cannot use."""

    def __init__(self, url: DatabaseURL):
        unknown = sorted(set(url.params) - set(URL_PARAMS))
        if unknown:
            raise BadURL(
                f"unknown PostgreSQL URL parameter(s) {', '.join(unknown)} in {url.redacted!r}; "
                f"known: host (the Unix socket folder), sslmode ({' or '.join(SSL_MODES)})"
            )
        self.sslmode = url.params.get("sslmode", "prefer")
        if self.sslmode not in SSL_MODES:
            raise BadURL(
                f"sslmode must be {' or '.join(SSL_MODES)}, not {self.sslmode!r}, in {url.redacted!r}"
            )
        socket_folder = url.params.get("host")
        if socket_folder is not None:
            if not socket_folder.startswith("/"):
                raise BadURL(
                    f"?host= names a Unix socket folder (e.g. /var/run/postgresql), not {socket_folder!r}; "
                    "for TCP write the host in the URL: postgresql://user@127.0.0.1:5432/db"
                )
            if url.host:
                raise BadURL(f"{url.redacted!r} names both a TCP host and ?host= (a socket folder); keep one")
        self.socket_folder = socket_folder
        self.host = socket_folder or url.host or DEFAULT_HOST
        self.port = url.port or DEFAULT_PORT
        self.user = url.user or DEFAULT_USER
        self.password = url.password
        self.password_source = url.password_source
        self.database = url.database or DEFAULT_DATABASE

    def __repr__(self) -> str:  # no password
        return f"<PostgreSQL endpoint {self.user}@{self.address}/{self.database}>"

    @property
    def password_hint(self) -> str:
        """What to check when the server refuses the user, naming where the password came from."""
        if self.password_source:
            return f"check the user name, and the password in {self.password_source}"
        return "no password in the URL or PGPASSWORD: give one there or in ~/.pgpass"

    @property
    def address(self) -> str:
        if self.socket_folder:
            return f"{self.socket_folder}/.s.PGSQL.{self.port}"
        return f"{self.host}:{self.port}"

    @property
    def transport(self) -> str:
        if self.socket_folder:
            return f"unix socket {self.socket_folder}"
        return f"tcp {self.host}:{self.port}"


class _Connection:
    """One asyncpg connection and the statements prepared on it, by SQL text as the workload wrote it."""

    __slots__ = ("raw", "session", "statements")

    def __init__(self, raw: asyncpg.Connection):
        self.raw = raw
        self.statements: dict[str, PreparedStatement] = {}
        # The session reads use on this connection, made once (`_Read`), not once per read.
        self.session: _Session | None = None


class _Session:
    """Statements on one connection, each prepared on it once and kept in its `statements`.

    Our own dict of `connection.prepare()` statements rather than asyncpg's statement cache
    (`connection.fetchrow(sql, *args)`): the dict is the faster of the two for a point read.
    Measured for the shop's product_by_id, 40 interleaved rounds of 2,000 sequential reads each
    way, PostgreSQL 15 on this 2-core machine while other jobs loaded it (so the wall-clock
    medians are noisy; the fastest round and the client CPU per read are the steadier figures):
      on one held connection     fastest round: cache 65-73 us, dict 63-71 us
                                 client CPU:    cache 50-57 us, dict 47-53 us (median)
      through read() and pool    fastest round: cache 83-90 us, dict 81-88 us
                                 client CPU:    cache 71-75 us, dict 69-73 us (median)
    A small, steady gain of 1-3 us per statement, over TCP and the Unix socket alike. A statement
    without arguments run by `execute` (DDL, VACUUM) goes as a simple query, unprepared.
    """

    __slots__ = ("_protocol", "_raw", "_rewrite", "_statements", "broken")

    def __init__(self, connection: _Connection, rewrite: dict[str, str]):
        self._raw = connection.raw
        self._protocol = connection.raw._protocol
        self._statements = connection.statements
        self._rewrite = rewrite
        # Set when a statement ended other than by a PostgreSQL error (cancelled, connection
        # lost, argument rejected): the protocol may be mid-message, so the connection is dropped.
        self.broken = False

    def _sql(self, sql: str) -> str:
        rewritten = self._rewrite.get(sql)
        if rewritten is None:
            rewritten = self._rewrite[sql] = rewrite_placeholders(sql)
        return rewritten

    async def _prepare(self, sql: str) -> PreparedStatement:
        """Prepare `sql` on this connection (again, if it was), keeping at most STATEMENTS_PER_CONNECTION."""
        self._statements.pop(sql, None)
        if len(self._statements) >= STATEMENTS_PER_CONNECTION:
            # The oldest goes; asyncpg closes it on the server once nothing refers to it.
            del self._statements[next(iter(self._statements))]
        statement = self._statements[sql] = await self._raw.prepare(self._sql(sql))
        return statement

    def _rows(self, statement: PreparedStatement, args: SqlParams, limit: int) -> Awaitable[Any]:
        """Awaitable of (rows, ...) of a prepared statement (at most `limit` rows, 0 for all),
        straight from asyncpg's protocol; the caller takes `[0]`.

        `PreparedStatement.fetchrow/fetch` wrap this one call in four Python frames, a lambda and a
        connection check per query; calling it directly saved about 7 us of client CPU per request
        in direct mode (35.2 / 37.9 -> 28.6 / 31.0 us, docs/direct.md). A plain function handing
        on asyncpg's own coroutine, not a coroutine of ours around it: one frame fewer per query.
        It leans on two private names of asyncpg, `_protocol` and `_state`:
        tests/engines/test_postgres.py fails if they move.
        """
        return self._protocol.bind_execute(  # type: ignore[no-any-return]
            statement._state, args if isinstance(args, tuple) else tuple(args), "", limit, True, None
        )

    def _replannable(self, sql: str) -> bool:
        """After InvalidCachedStatementError (a table changed shape under the statement): forget it,
        and whether to prepare it again and retry; not inside a transaction, which the error aborted."""
        self._statements.pop(sql, None)
        return not self._raw.is_in_transaction()

    async def fetch_one(self, sql: str, args: SqlParams = ()) -> Row | None:
        try:
            statement = self._statements.get(sql) or await self._prepare(sql)
            try:
                rows = (await self._rows(statement, args, 1))[0]
            except asyncpg.InvalidCachedStatementError:
                if not self._replannable(sql):
                    raise
                rows = (await self._rows(await self._prepare(sql), args, 1))[0]
        except asyncpg.PostgresError:
            raise
        except BaseException:
            self.broken = True
            raise
        # A Record's slice is a tuple: a third of tuple(record)'s cost, which iterates it.
        return rows[0][:] if rows else None

    async def fetch_all(self, sql: str, args: SqlParams = ()) -> list[Row]:
        try:
            statement = self._statements.get(sql) or await self._prepare(sql)
            try:
                records = (await self._rows(statement, args, 0))[0]
            except asyncpg.InvalidCachedStatementError:
                if not self._replannable(sql):
                    raise
                records = (await self._rows(await self._prepare(sql), args, 0))[0]
        except asyncpg.PostgresError:
            raise
        except BaseException:
            self.broken = True
            raise
        return [record[:] for record in records]

    async def execute(self, sql: str, args: SqlParams = ()) -> int:
        try:
            if not args:
                return _changed_rows(await self._raw.execute(self._sql(sql)))
            statement = self._statements.get(sql) or await self._prepare(sql)
            try:
                await statement.fetch(*args)
            except asyncpg.InvalidCachedStatementError:
                if not self._replannable(sql):
                    raise
                statement = await self._prepare(sql)
                await statement.fetch(*args)
        except asyncpg.PostgresError:
            raise
        except BaseException:
            self.broken = True
            raise
        return _changed_rows(statement.get_statusmsg())


class _Read:
    """`PostgresEngine.read()` as a plain class, as in the SQLite engine: an asynccontextmanager's
    generator cost 4-5 us of client CPU per product_by_id (median 54-56 against 59-60 us, 40
    interleaved rounds of 2,000 reads over the Unix socket)."""

    __slots__ = ("_connection", "_pool", "_rewrite", "_session")

    def __init__(self, pool: Pool[_Connection], rewrite: dict[str, str]):
        self._pool = pool
        self._rewrite = rewrite

    async def __aenter__(self) -> _Session:
        connection = self._pool.acquire_now()
        if connection is None:
            connection = await self._pool.acquire()
        self._connection = connection
        # One session per connection, kept on it: making one per read was 3 of its Python calls.
        session = connection.session
        if session is None:
            session = connection.session = _Session(connection, self._rewrite)
        else:
            session.broken = False
        self._session = session
        return session

    async def __aexit__(self, *exc_info: object) -> None:
        broken = _left_broken(self._connection, self._session.broken)
        if broken or not self._pool.release_now(self._connection):
            await self._pool.release(self._connection, broken=broken)


class PostgresCore:
    """Endpoint, pool and sessions: what loading and snapshots build on."""

    name: ClassVar[str] = "postgresql"

    def __init__(self, url: DatabaseURL, options: EngineOptions):
        self.url = url
        self.options = options
        self.endpoint = _Endpoint(url)
        self._rewrite: dict[str, str] = {}
        self._pool = self._new_pool()

    def _new_pool(self) -> Pool[_Connection]:
        return Pool(self.options.pool_size, self._connect, self._disconnect, self.options.pool_timeout)

    async def _connect(self, database: str | None = None) -> _Connection:
        """A new connection (to the URL's database unless told another), or the dbladder error that
        says what to fix."""
        end = self.endpoint
        database = database or end.database
        where = f"PostgreSQL at {end.address}"
        try:
            raw = await asyncpg.connect(
                host=end.host,
                port=end.port,
                user=end.user,
                password=end.password,
                database=database,
                ssl=end.sslmode,
                timeout=self.options.connect_timeout,
            )
        except asyncpg.InvalidCatalogNameError:
            raise MissingDatabase(
                f"{where} has no database {database!r}; create it with: createdb "
                f"-h {end.socket_folder or end.host} -p {end.port} -U {end.user} {database}"
            ) from None
        except asyncpg.InvalidAuthorizationSpecificationError as exc:
            # 28P01 (bad password) and 28000 (no such role, or pg_hba.conf has no entry).
            raise AuthenticationFailed(
                f"{where} refused user {end.user!r}: {_first_line(exc)}; {end.password_hint}"
            ) from None
        except (
            asyncpg.TooManyConnectionsError,  # max_connections reached
            asyncpg.CannotConnectNowError,  # starting up or shutting down
            asyncpg.PostgresConnectionError,  # SQLSTATE class 08: the connection failed
        ) as exc:
            raise ServerUnreachable(f"{where} is not accepting connections: {_first_line(exc)}") from None
        except TimeoutError:
            raise ServerUnreachable(
                f"{where} did not answer within {self.options.connect_timeout:g} s; "
                "check that the server is running and the address is right"
            ) from None
        except socket.gaierror:
            raise ServerUnreachable(
                f"cannot resolve the host name {end.host!r} of {where}; check the URL"
            ) from None
        except OSError as exc:  # refused, reset, no socket file, permission denied ...
            if end.socket_folder:
                hint = "check that the server is running and ?host= names the folder of its socket"
            else:
                hint = "check that the server is running and listens on that address and port"
            reason = os.strerror(exc.errno) if exc.errno else str(exc)
            raise ServerUnreachable(f"cannot connect to {where} ({reason}); {hint}") from None
        return _Connection(raw)

    async def _disconnect(self, connection: _Connection) -> None:
        # terminate() rather than close(): close() waits for a reply that a connection in a bad
        # state may never send.
        connection.raw.terminate()

    async def open(self) -> None:
        async with self.read() as session:
            await session.fetch_one("SELECT 1")

    async def close(self) -> None:
        await self._pool.close()

    def read(self) -> _Read:
        return _Read(self._pool, self._rewrite)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[_Session]:
        connection = await self._pool.acquire()
        session = _Session(connection, self._rewrite)
        try:
            # asyncpg's transaction() sends BEGIN, then COMMIT, or ROLLBACK when the block raises;
            # a ROLLBACK that failed leaves the connection in the transaction, and so broken.
            async with connection.raw.transaction():
                yield session
        except asyncpg.UniqueViolationError as exc:
            raise DuplicateKey(f"PostgreSQL: {_first_line(exc)}") from exc
        finally:
            await self._pool.release(connection, broken=_left_broken(connection, session.broken))

    async def describe(self) -> EngineInfo:
        names = ("server_version", "default_transaction_isolation", *DURABILITY_SETTINGS, *OTHER_SETTINGS)
        # One round trip for every setting and the TLS state, as SHOW words each one: over a far
        # route (a relay adding 150 ms each way) a SHOW apiece cost the service 4 s to start.
        settings = ", ".join(f"current_setting('{name}')" for name in names)
        async with self.read() as session:
            row = await session.fetch_one(
                f"SELECT {settings}, (SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid())"
            )
        found = tuple(row) if row is not None else ("?",) * (len(names) + 1)
        values = {name: str(value) for name, value in zip(names, found, strict=False)}
        ssl_row = found[len(names) :]
        durable = values["fsync"] == "on" and values["synchronous_commit"] != "off"
        problems = []
        if values["fsync"] != "on":
            problems.append(f"fsync={values['fsync']}: the server never forces writes to the disk")
        if values["synchronous_commit"] == "off":
            problems.append(
                "synchronous_commit=off: a commit is acknowledged before its WAL reaches the disk"
            )
        transport = self.endpoint.transport
        if ssl_row and ssl_row[0]:
            transport += " (TLS)"
        return EngineInfo(
            engine=self.name,
            url=self.url.redacted,
            server_version=values["server_version"],
            driver="asyncpg",
            driver_version=asyncpg.__version__,
            transport=transport,
            isolation=values["default_transaction_isolation"],
            pool_size=self.options.pool_size,
            prepared_statements=(
                f"server-side, prepared once per connection and reused (up to {STATEMENTS_PER_CONNECTION})"
            ),
            durable=durable,
            durability={name: values[name] for name in DURABILITY_SETTINGS},
            durability_note="; ".join(problems),
            settings={name: values[name] for name in OTHER_SETTINGS},
        )

    def counters(self) -> dict[str, int]:
        return {}

    async def check_statements(self, statements: Sequence[str]) -> list[StatementProblem]:
        """Each text prepared (parsed, analysed against the schema, planned) by the server and not
        kept: asyncpg's `prepare()` does not cache, and the server drops the statement once
        the object is gone. PostgreSQL itself refuses a text of two statements."""
        problems = []
        connection = await self._pool.acquire()
        interrupted = False
        try:
            for sql in statements:
                if not sql.strip():  # PostgreSQL prepares an empty text without a word
                    problems.append(StatementProblem(sql, NO_STATEMENT))
                    continue
                try:
                    await connection.raw.prepare(rewrite_placeholders(sql))
                except asyncpg.PostgresError as exc:
                    problems.append(StatementProblem.refused(sql, str(exc)))
        except BaseException:
            interrupted = True
            raise
        finally:
            await self._pool.release(connection, broken=_left_broken(connection, interrupted))
        return problems


def _left_broken(connection: _Connection, interrupted: bool) -> bool:
    """Whether a connection must not go back to the pool: interrupted mid-statement, closed, or
    still inside a transaction."""
    return interrupted or connection.raw.is_closed() or connection.raw.is_in_transaction()


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
