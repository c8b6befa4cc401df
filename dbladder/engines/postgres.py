"""PostgreSQL, over the network or a Unix socket, through asyncpg.

    postgresql://user@127.0.0.1:5432/db          TCP
    postgresql:///db?host=/var/run/postgresql    Unix socket: `host` names the socket's folder

The user defaults to `postgres`, the database to `postgres`, the TCP address to 127.0.0.1:5432.
Besides `host`, the URL takes `sslmode=disable` or `sslmode=prefer` (asyncpg's default: TLS when
the server offers it); `describe()` says which the connection got.

Connections come from dbladder's shared pool, not asyncpg's, so every engine queues the same way.
They stay in autocommit; `transaction()` wraps a block in BEGIN ... COMMIT. SQL arrives with `?`
placeholders and is rewritten to `$1, $2 ...` once per text; every statement is prepared once
per connection and kept with it (`_Session` says why our own dict and not asyncpg's cache).
Seeding loads rows with binary COPY and builds the primary keys after the data is in.

A snapshot (fresh data before each run, `dbladder.fresh`) is a database, `<db>_dbladder_snapshot`,
made from this one as a template; a restore drops this one and makes it from the snapshot again.
"""

from __future__ import annotations

import hashlib
import os
import socket
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, ClassVar

import asyncpg

from ..errors import AuthenticationFailed, BadURL, MissingDatabase, ServerUnreachable
from ..urls import DatabaseURL
from .base import Args, Column, EngineInfo, EngineOptions, Row, Schema, Table
from .pool import Pool

if TYPE_CHECKING:
    from asyncpg.prepared_stmt import PreparedStatement

DEFAULT_USER = "postgres"
DEFAULT_DATABASE = "postgres"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 5432
SSL_MODES = ("disable", "prefer")
URL_PARAMS = ("host", "sslmode")
STATEMENTS_PER_CONNECTION = 200
# Snapshots are databases named `<db>_dbladder_snapshot`; CREATE and DROP DATABASE run from the
# first of these that is not the database itself.
SNAPSHOT_SUFFIX = "_dbladder_snapshot"
MAX_IDENTIFIER_BYTES = 63  # NAMEDATALEN - 1
MAINTENANCE_DATABASES = ("postgres", "template1")

DURABILITY_SETTINGS = ("fsync", "synchronous_commit", "wal_level", "full_page_writes")
OTHER_SETTINGS = ("shared_buffers", "max_connections", "effective_cache_size", "max_wal_size")

TYPES = {"int": "INTEGER", "bigint": "BIGINT", "text": "TEXT"}


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
        self.database = url.database or DEFAULT_DATABASE

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

    __slots__ = ("raw", "statements")

    def __init__(self, raw: asyncpg.Connection):
        self.raw = raw
        self.statements: dict[str, PreparedStatement] = {}


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

    __slots__ = ("_raw", "_rewrite", "_statements", "broken")

    def __init__(self, connection: _Connection, rewrite: dict[str, str]):
        self._raw = connection.raw
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

    def _replannable(self, sql: str) -> bool:
        """After InvalidCachedStatementError (a table changed shape under the statement): forget it,
        and whether to prepare it again and retry; not inside a transaction, which the error aborted."""
        self._statements.pop(sql, None)
        return not self._raw.is_in_transaction()

    async def fetch_one(self, sql: str, args: Args = ()) -> Row | None:
        try:
            statement = self._statements.get(sql) or await self._prepare(sql)
            try:
                record = await statement.fetchrow(*args)
            except asyncpg.InvalidCachedStatementError:
                if not self._replannable(sql):
                    raise
                record = await (await self._prepare(sql)).fetchrow(*args)
        except asyncpg.PostgresError:
            raise
        except BaseException:
            self.broken = True
            raise
        return None if record is None else tuple(record)

    async def fetch_all(self, sql: str, args: Args = ()) -> list[Row]:
        try:
            statement = self._statements.get(sql) or await self._prepare(sql)
            try:
                records = await statement.fetch(*args)
            except asyncpg.InvalidCachedStatementError:
                if not self._replannable(sql):
                    raise
                records = await (await self._prepare(sql)).fetch(*args)
        except asyncpg.PostgresError:
            raise
        except BaseException:
            self.broken = True
            raise
        return [tuple(record) for record in records]

    async def execute(self, sql: str, args: Args = ()) -> int:
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
        self._connection = await self._pool.acquire()
        self._session = _Session(self._connection, self._rewrite)
        return self._session

    async def __aexit__(self, *exc_info: object) -> None:
        await self._pool.release(
            self._connection, broken=_left_broken(self._connection, self._session.broken)
        )


class PostgresEngine:
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
                f"{where} refused user {end.user!r}: {_first_line(exc)}; "
                "check the user name and password in the URL"
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
        finally:
            await self._pool.release(connection, broken=_left_broken(connection, session.broken))

    async def describe(self) -> EngineInfo:
        names = ("server_version", "default_transaction_isolation", *DURABILITY_SETTINGS, *OTHER_SETTINGS)
        async with self.read() as session:
            values = {name: str((await session.fetch_one(f"SHOW {name}") or ("?",))[0]) for name in names}
            ssl_row = await session.fetch_one("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
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

    async def recreate_schema(self, schema: Schema) -> None:
        async with self.transaction() as session:
            for table in reversed(schema.tables):
                await session.execute(f"DROP TABLE IF EXISTS {table.name} CASCADE")
            for table in schema.tables:
                await session.execute(_create_table_sql(table))

    async def bulk_load(self, table: Table, rows: Iterable[Row]) -> None:
        # One binary COPY per table, fed straight from the row iterator: asyncpg encodes rows into
        # 512 kB CopyData messages and waits whenever the socket's buffer is full, so memory stays
        # at one generated chunk plus one message, and generating overlaps the server's inserting.
        # Measured (100k products, 1M orders, 2M items; 2 cores, PostgreSQL 15, 3 runs each):
        #   streamed, keys built after the load       orders 0.4-0.7 s, items 0.8-1.4 s, peak RSS 88 MB
        #   lists of 100k rows, one COPY per list     orders 0.7-1.1 s, items 1.2-1.9 s, peak RSS 91 MB
        #   lists of 500k rows, one COPY per list     orders 0.7-1.2 s, items 1.5-1.9 s, peak RSS 255 MB
        #   primary keys in place during the COPY     orders 1.3-2.2 s, items 2.6-3.9 s
        # Building the three primary keys afterwards takes 0.7 s, so the keys come in finish_load.
        connection = await self._pool.acquire()
        broken = False
        try:
            await connection.raw.copy_records_to_table(
                table.name, records=rows, columns=list(table.column_names)
            )
        except asyncpg.PostgresError:
            raise
        except BaseException:
            broken = True
            raise
        finally:
            await self._pool.release(connection, broken=_left_broken(connection, broken))

    async def finish_load(self, schema: Schema) -> None:
        async with self.read() as session:
            # One build at a time: PostgreSQL already sorts each build with parallel workers
            # (max_parallel_maintenance_workers); two builds side by side measured no faster.
            for table in schema.tables:
                if not await _has_primary_key(session, table):
                    await session.execute(_primary_key_sql(table))
            for index in schema.indexes:
                await session.execute(
                    f"CREATE INDEX IF NOT EXISTS {index.name} ON {index.table} ({', '.join(index.columns)})"
                )
            for table in schema.tables:
                generated = table.generated_id
                if generated is not None:
                    # Rows loaded with explicit ids leave the identity sequence at 1: move it past them.
                    await session.execute(
                        f"SELECT setval(pg_get_serial_sequence('{table.name}', '{generated.name}'), "
                        f"coalesce(max({generated.name}), 0) + 1, false) FROM {table.name}"
                    )
            # VACUUM as well as ANALYZE (0.33 s against 0.20 s for the 3.1M seeded rows): it sets the
            # hint bits and the visibility map now, so the first run's reads do not dirty every
            # page they touch, index-only scans can skip the heap, and autovacuum has nothing left
            # to do in the middle of a run. VACUUM cannot run inside a transaction block: the
            # session is in autocommit, and a statement without arguments goes as a simple query.
            await session.execute(f"VACUUM ANALYZE {', '.join(t.name for t in schema.tables)}")

    async def table_exists(self, name: str) -> bool:
        async with self.read() as session:
            row = await session.fetch_one(
                "SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = ?", (name,)
            )
        return row is not None

    def counters(self) -> dict[str, int]:
        return {}

    @asynccontextmanager
    async def _maintenance(self) -> AsyncIterator[asyncpg.Connection]:
        """A connection to another database of the server, for CREATE and DROP DATABASE of this one."""
        database = next(name for name in MAINTENANCE_DATABASES if name != self.endpoint.database)
        connection = await self._connect(database)
        try:
            yield connection.raw
        finally:
            await connection.raw.close()

    async def save_snapshot(self) -> str | None:
        """`CREATE DATABASE <db>_dbladder_snapshot TEMPLATE <db>`: a file-level copy by the server.

        None when the user may not both create databases and drop this one (what a restore does).
        """
        database = self.endpoint.database
        snapshot = snapshot_name(database)
        # A template must have no other session while it is copied: our own pool's go first.
        await self._pool.close()
        try:
            async with self._maintenance() as admin:
                allowed = await admin.fetchval(
                    "SELECT r.rolsuper OR (r.rolcreatedb AND pg_has_role(r.oid, d.datdba, 'MEMBER')) "
                    "FROM pg_roles r, pg_database d WHERE r.rolname = current_user AND d.datname = $1",
                    database,
                )
                if not allowed:
                    return None
                await admin.execute(f"DROP DATABASE IF EXISTS {_quote(snapshot)} WITH (FORCE)")
                await admin.execute(_copy_database_sql(admin, snapshot, database))
        finally:
            self._pool = self._new_pool()
        return snapshot

    async def restore_snapshot(self, token: str) -> None:
        """Drop the database and create it again from the snapshot, with the same owner.

        Database-level settings (ALTER DATABASE ... SET) and grants on the database itself are not
        part of a template copy; the data, schema, sequences and statistics are.
        """
        snapshot = _checked_token(token)
        database = self.endpoint.database
        await self._pool.close()
        try:
            async with self._maintenance() as admin:
                if not await admin.fetchval("SELECT true FROM pg_database WHERE datname = $1", snapshot):
                    raise MissingDatabase(
                        f"PostgreSQL has no snapshot database {snapshot!r}; save_snapshot() makes one"
                    )
                owner = await admin.fetchval(
                    "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = $1", database
                )
                # FORCE ends any session a caller forgot (a service that did not stop).
                await admin.execute(f"DROP DATABASE IF EXISTS {_quote(database)} WITH (FORCE)")
                await admin.execute(_copy_database_sql(admin, database, snapshot, owner))
        finally:
            self._pool = self._new_pool()
        await self.open()

    async def drop_snapshot(self, token: str) -> None:
        snapshot = _checked_token(token)
        async with self._maintenance() as admin:
            await admin.execute(f"DROP DATABASE IF EXISTS {_quote(snapshot)} WITH (FORCE)")


def snapshot_name(database: str) -> str:
    """`<database>_dbladder_snapshot`, shortened with a hash of the name to fit an identifier."""
    name = database + SNAPSHOT_SUFFIX
    if len(name.encode()) <= MAX_IDENTIFIER_BYTES:
        return name
    digest = hashlib.sha256(database.encode()).hexdigest()[:8]
    room = MAX_IDENTIFIER_BYTES - len(SNAPSHOT_SUFFIX) - len(digest) - 1
    head = database.encode()[:room].decode(errors="ignore")
    return f"{head}_{digest}{SNAPSHOT_SUFFIX}"


def _checked_token(token: str) -> str:
    """The snapshot database of a token; refuses anything else, so a mistake cannot drop a database."""
    if not token.endswith(SNAPSHOT_SUFFIX):
        raise ValueError(f"not a PostgreSQL snapshot token: {token!r}")
    return token


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _copy_database_sql(admin: asyncpg.Connection, new: str, template: str, owner: str | None = None) -> str:
    """CREATE DATABASE `new` as a copy of `template`.

    STRATEGY FILE_COPY (PostgreSQL 15 and later; older servers have no other): the server
    checkpoints, copies the files and syncs them, so nothing is left to write back during the
    run. The default since 15, WAL_LOG, writes every page to the WAL and to shared buffers and
    leaves the checkpoint of the whole copy to fall into the run, unless a CHECKPOINT follows
    (which needs superuser or pg_checkpoint). With that checkpoint counted, the two took the same
    time within this machine's noise: a whole restore of the seeds' 289 MB, median of 3, was
    1.9 and 2.7 s with FILE_COPY against 2.6 and 2.1 s with WAL_LOG (docs/design.md).
    """
    sql = f"CREATE DATABASE {_quote(new)} TEMPLATE {_quote(template)}"
    if admin.get_server_version().major >= 15:
        sql += " STRATEGY FILE_COPY"
    if owner:
        sql += f" OWNER {_quote(owner)}"
    return sql


def _left_broken(connection: _Connection, interrupted: bool) -> bool:
    """Whether a connection must not go back to the pool: interrupted mid-statement, closed, or
    still inside a transaction."""
    return interrupted or connection.raw.is_closed() or connection.raw.is_in_transaction()


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


async def _has_primary_key(session: _Session, table: Table) -> bool:
    row = await session.fetch_one(
        "SELECT 1 FROM pg_index WHERE indrelid = to_regclass(?) AND indisprimary", (table.name,)
    )
    return row is not None


def _column_sql(column: Column) -> str:
    if column.generated_id:
        return f"{column.name} BIGINT GENERATED BY DEFAULT AS IDENTITY"
    if column.type == "text" and column.max_length:
        return f"{column.name} VARCHAR({column.max_length}) NOT NULL"
    return f"{column.name} {TYPES[column.type]} NOT NULL"


def _create_table_sql(table: Table) -> str:
    return f"CREATE TABLE {table.name} ({', '.join(_column_sql(c) for c in table.columns)})"


def _primary_key_sql(table: Table) -> str:
    return f"ALTER TABLE {table.name} ADD PRIMARY KEY ({', '.join(table.primary_key)})"
