"""SQLite, in-process, through apsw.

Why apsw: its wheel bundles a current SQLite (3.54 here, against 3.40 in this machine's stdlib
module) and it is faster for point reads (docs/design.md has the figures). Every result records
the library version actually linked.

Defaults are seed 000's connection string: journal_mode=WAL, synchronous=FULL, busy_timeout=5000,
cache_size=-10240; each can be set in the URL (`sqlite:///shop.db?synchronous=NORMAL`).

SQLite calls run inline on the caller's thread: a query is a function call, and a thread hop per
query would cost more than most queries. Writes take the file lock at BEGIN IMMEDIATE. Waiting
for that lock goes through a busy handler that does what busy_timeout does (SQLite's own backoff:
1, 2, 5, 10 ... 100 ms up to the timeout) and counts every sleep, so a run can show how often the
service slept on the lock (seed 000: "Sleeping on the lock").

A snapshot (fresh data before each run, `dbladder.fresh`) is a sibling file,
`<file>.dbladder_snapshot`, saved with SQLite's backup API and put back by a file copy.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import ClassVar

import apsw

from ..errors import BadURL, DatabaseTimeout, MissingDatabase, NotWritable
from ..urls import DatabaseURL
from .base import Args, Column, EngineInfo, EngineOptions, Row, Schema, Table
from .pool import Pool

JOURNAL_MODES = ("WAL", "DELETE", "TRUNCATE", "PERSIST", "MEMORY", "OFF")
SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")
SYNCHRONOUS_BY_NUMBER = dict(enumerate(SYNCHRONOUS))
DEFAULT_SETTINGS = {
    "journal_mode": "WAL",
    "synchronous": "FULL",
    "busy_timeout": "5000",
    "cache_size": "-10240",
}

# sqlite3.c, sqliteDefaultBusyCallback: the sleep before each retry, then 100 ms from there on.
BUSY_DELAYS_MS = (1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100)
STATEMENT_CACHE_SIZE = 100

TYPES = {"int": "INTEGER", "bigint": "INTEGER", "text": "TEXT"}

# A snapshot is a sibling file named after the database: `shop.db.dbladder_snapshot`.
SNAPSHOT_SUFFIX = ".dbladder_snapshot"
PARTIAL_SUFFIX = ".partial"  # a snapshot being written
RESTORING_SUFFIX = ".dbladder_restoring"  # a copy of the snapshot before it replaces the database
# Files SQLite keeps beside a database file; each belongs to that one file.
SIDE_FILE_SUFFIXES = ("-wal", "-shm", "-journal")


def parse_settings(url: DatabaseURL) -> dict[str, str]:
    """The URL's settings merged over the defaults, normalised; BadURL names every bad one."""
    problems = []
    unknown = sorted(set(url.params) - set(DEFAULT_SETTINGS))
    if unknown:
        problems.append(
            f"unknown SQLite setting(s) {', '.join(unknown)}; known: {', '.join(DEFAULT_SETTINGS)}"
        )
    settings = dict(DEFAULT_SETTINGS)
    for key in DEFAULT_SETTINGS:
        if key in url.params:
            settings[key] = url.params[key].strip().upper()
    if settings["journal_mode"] not in JOURNAL_MODES:
        problems.append(
            f"journal_mode must be one of {', '.join(JOURNAL_MODES)}, not {settings['journal_mode']!r}"
        )
    sync = settings["synchronous"]
    if sync.isdigit() and int(sync) in SYNCHRONOUS_BY_NUMBER:
        settings["synchronous"] = SYNCHRONOUS_BY_NUMBER[int(sync)]
    elif sync not in SYNCHRONOUS:
        problems.append(f"synchronous must be one of {', '.join(SYNCHRONOUS)} (or 0-3), not {sync!r}")
    for key in ("busy_timeout", "cache_size"):
        try:
            number = int(settings[key])
        except ValueError:
            problems.append(f"{key} must be a whole number, not {settings[key]!r}")
            continue
        if key == "busy_timeout" and number < 0:
            problems.append(f"busy_timeout must be 0 or more milliseconds, not {number}")
    if problems:
        raise BadURL(f"bad settings in {url.raw!r}: " + "; ".join(problems))
    return settings


class _Connection:
    """One apsw connection and the engine's busy-wait counter."""

    def __init__(self, path: str, settings: dict[str, str], counts: dict[str, int]):
        self.db = apsw.Connection(
            path,
            flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE,
            statementcachesize=STATEMENT_CACHE_SIZE,
        )
        self._counts = counts
        self._busy_timeout_ms = int(settings["busy_timeout"])
        self.db.set_busy_handler(self._on_busy)
        # journal_mode answers with the mode it got: a read-only or in-memory file can refuse WAL.
        self.db.execute(f"PRAGMA journal_mode={settings['journal_mode']}").fetchall()
        self.db.execute(f"PRAGMA synchronous={settings['synchronous']}")
        self.db.execute(f"PRAGMA cache_size={int(settings['cache_size'])}")

    def _on_busy(self, prior_calls: int) -> bool:
        """Sleep as busy_timeout would, counting the sleep; False once the timeout is spent."""
        delay = BUSY_DELAYS_MS[min(prior_calls, len(BUSY_DELAYS_MS) - 1)]
        slept = sum(BUSY_DELAYS_MS[:prior_calls]) + 100 * max(0, prior_calls - len(BUSY_DELAYS_MS))
        if slept >= self._busy_timeout_ms:
            return False
        delay = min(delay, self._busy_timeout_ms - slept)
        self._counts["busy_waits"] += 1
        time.sleep(delay / 1000)
        return True

    def close(self) -> None:
        self.db.close()


class _Session:
    """Statements on one connection; apsw prepares each SQL text once and keeps it in its cache."""

    __slots__ = ("_db",)

    def __init__(self, db: apsw.Connection):
        self._db = db

    async def fetch_one(self, sql: str, args: Args = ()) -> Row | None:
        for row in self._db.execute(sql, args):
            return row
        return None

    async def fetch_all(self, sql: str, args: Args = ()) -> list[Row]:
        return self._db.execute(sql, args).fetchall()

    async def execute(self, sql: str, args: Args = ()) -> int:
        self._db.execute(sql, args)
        return self._db.changes()


class _Read:
    """`SQLiteEngine.read()` as a plain class: the generator of an asynccontextmanager cost a third of
    the service's GET /products/{id} (16.6 -> 11.0 us in-process; docs/design.md, "The web service")."""

    __slots__ = ("_connection", "_pool")

    def __init__(self, pool: Pool[_Connection]):
        self._pool = pool

    async def __aenter__(self) -> _Session:
        self._connection = await self._pool.acquire()
        return _Session(self._connection.db)

    async def __aexit__(self, *exc_info: object) -> None:
        await self._pool.release(self._connection)


class SQLiteEngine:
    name: ClassVar[str] = "sqlite"

    def __init__(self, url: DatabaseURL, options: EngineOptions):
        self.url = url
        self.options = options
        self.settings = parse_settings(url)
        self.path = os.path.abspath(url.path or "")
        self._counts = {"busy_waits": 0}
        self._pool = self._new_pool()

    def _new_pool(self) -> Pool[_Connection]:
        return Pool(self.options.pool_size, self._connect, self._disconnect, self.options.pool_timeout)

    async def _connect(self) -> _Connection:
        return _Connection(self.path, self.settings, self._counts)

    async def _disconnect(self, connection: _Connection) -> None:
        connection.close()

    async def open(self) -> None:
        folder = Path(self.path).parent
        if not folder.is_dir():
            raise NotWritable(f"cannot create the SQLite file {self.path}: folder {folder} does not exist")
        if not os.access(folder, os.W_OK) or (
            os.path.exists(self.path) and not os.access(self.path, os.W_OK)
        ):
            raise NotWritable(f"cannot write the SQLite file {self.path}: permission denied")
        try:
            connection = await self._pool.acquire()
        except apsw.Error as exc:
            raise NotWritable(f"cannot open the SQLite file {self.path}: {exc}") from None
        try:
            mode = str(connection.db.execute("PRAGMA journal_mode").fetchall()[0][0]).upper()
            connection.db.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except apsw.NotADBError:
            await self._pool.release(connection, broken=True)
            raise NotWritable(f"{self.path} is not a SQLite database") from None
        await self._pool.release(connection)
        if mode != self.settings["journal_mode"]:
            raise NotWritable(
                f"SQLite refused journal_mode={self.settings['journal_mode']} on {self.path} (got {mode})"
            )

    async def close(self) -> None:
        await self._pool.close()

    def read(self) -> _Read:
        return _Read(self._pool)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[_Session]:
        connection = await self._pool.acquire()
        db = connection.db
        try:
            # IMMEDIATE takes the write lock up front: a deferred transaction that reads first
            # could fail to upgrade later without the busy handler being called.
            try:
                db.execute("BEGIN IMMEDIATE")
            except apsw.BusyError:
                # The busy handler gave up: a timeout, which the service answers with 503.
                raise DatabaseTimeout(
                    f"the SQLite write lock stayed busy for busy_timeout={self.settings['busy_timeout']} ms"
                ) from None
            try:
                yield _Session(db)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        finally:
            await self._pool.release(connection, broken=db.in_transaction)

    async def describe(self) -> EngineInfo:
        async with self.read() as session:
            values = {
                key: str((await session.fetch_one(f"PRAGMA {key}") or ("?",))[0])
                for key in ("journal_mode", "synchronous", "cache_size", "page_size")
            }
        values["journal_mode"] = values["journal_mode"].upper()
        values["synchronous"] = SYNCHRONOUS_BY_NUMBER.get(int(values["synchronous"]), values["synchronous"])
        durable = values["synchronous"] in ("FULL", "EXTRA") and values["journal_mode"] not in (
            "OFF",
            "MEMORY",
        )
        note = (
            ""
            if durable
            else (
                f"journal_mode={values['journal_mode']}, synchronous={values['synchronous']}: "
                "a commit can be acknowledged before it reaches the disk"
            )
        )
        return EngineInfo(
            engine=self.name,
            url=self.url.redacted,
            server_version=apsw.sqlite_lib_version(),
            driver="apsw",
            driver_version=apsw.apsw_version(),
            transport=f"in-process file {self.path}",
            isolation="serializable (one writer at a time; readers see a snapshot)",
            pool_size=self.options.pool_size,
            prepared_statements=f"apsw statement cache, {STATEMENT_CACHE_SIZE} per connection",
            durable=durable,
            durability={k: values[k] for k in ("journal_mode", "synchronous")},
            durability_note=note,
            settings={
                # SQLite reports 0: the timeout is kept by dbladder's counting busy handler instead.
                "busy_timeout": self.settings["busy_timeout"],
                "cache_size": values["cache_size"],
                "page_size": values["page_size"],
            },
        )

    async def recreate_schema(self, schema: Schema) -> None:
        async with self.read() as session:
            for table in reversed(schema.tables):
                await session.execute(f"DROP TABLE IF EXISTS {table.name}")
            for table in schema.tables:
                await session.execute(_create_table_sql(table))

    async def bulk_load(self, table: Table, rows: Iterable[Row]) -> None:
        placeholders = ", ".join("?" for _ in table.columns)
        sql = f"INSERT INTO {table.name} ({', '.join(table.column_names)}) VALUES ({placeholders})"
        connection = await self._pool.acquire()
        db = connection.db
        try:
            # executemany over the whole stream: one prepared statement, one transaction, one sync.
            with db:
                db.executemany(sql, rows)
        finally:
            await self._pool.release(connection)

    async def finish_load(self, schema: Schema) -> None:
        async with self.read() as session:
            for index in schema.indexes:
                await session.execute(
                    f"CREATE INDEX IF NOT EXISTS {index.name} ON {index.table} ({', '.join(index.columns)})"
                )
            await session.execute("ANALYZE")
            # Move what the load wrote to the WAL into the database file, so the first run starts clean.
            await session.fetch_all("PRAGMA wal_checkpoint(TRUNCATE)")

    async def table_exists(self, name: str) -> bool:
        async with self.read() as session:
            row = await session.fetch_one(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
            )
        return row is not None

    def counters(self) -> dict[str, int]:
        return dict(self._counts)

    async def save_snapshot(self) -> str:
        """Copy the database to `<file>.dbladder_snapshot` with SQLite's online backup.

        The backup API copies every page inside one read transaction, WAL frames included, so the
        copy is consistent without a checkpoint first and whatever another process does. A file
        copy is right only after a checkpoint and while no writer exists, which this engine cannot
        see for other processes; it was faster (0.09-0.12 s against 0.23-0.39 s for the seeds'
        104 MB, docs/design.md), but a save happens once per round. The copy is written under a
        temporary name and renamed, so a snapshot file is never half written.
        """
        snapshot = self.path + SNAPSHOT_SUFFIX
        partial = snapshot + PARTIAL_SUFFIX
        connection = await self._pool.acquire()
        try:
            await asyncio.to_thread(_backup, connection.db, partial)
        except BaseException:
            _remove_with_side_files(partial)
            raise
        finally:
            await self._pool.release(connection)
        _remove_side_files(snapshot)
        os.replace(partial, snapshot)
        _sync_folder(snapshot)
        return snapshot

    async def restore_snapshot(self, token: str) -> None:
        """Close the pool, put a copy of the snapshot in place of the database file, reopen.

        A file copy (the kernel copies in place; 0.18-0.20 s for 104 MB, synced) rather than a
        backup into the open database: in WAL mode that writes every page to the WAL and a
        checkpoint writes it again (0.48-0.90 s). Nothing else has the file open (the caller's
        promise). The WAL, shared-memory and journal files left beside the old file belong to it:
        kept, SQLite would replay them into the new file, so they go before the copy takes its place.
        """
        snapshot = _checked_token(token)
        if not os.path.isfile(snapshot):
            raise MissingDatabase(f"no SQLite snapshot {snapshot}; save_snapshot() makes one")
        await self._pool.close()
        partial = self.path + RESTORING_SUFFIX
        try:
            await asyncio.to_thread(_copy_durably, snapshot, partial)
            _remove_side_files(self.path)
            os.replace(partial, self.path)
            _sync_folder(self.path)
        except BaseException:
            _remove_with_side_files(partial)
            raise
        finally:
            self._pool = self._new_pool()
        await self.open()

    async def drop_snapshot(self, token: str) -> None:
        snapshot = _checked_token(token)
        _remove_with_side_files(snapshot)
        _remove_with_side_files(snapshot + PARTIAL_SUFFIX)
        _remove_with_side_files(self.path + RESTORING_SUFFIX)


def _checked_token(token: str) -> str:
    """The snapshot path of a token; refuses anything else, so a mistake cannot remove a database."""
    if not token.endswith(SNAPSHOT_SUFFIX):
        raise ValueError(f"not a SQLite snapshot token: {token!r}")
    return token


def _backup(source: apsw.Connection, path: str) -> None:
    """Copy the whole of `source` into a new file at `path` (removed first if a failed try left it)."""
    _remove_with_side_files(path)
    target = apsw.Connection(path)
    try:
        # One step of every page: one read transaction on the source, so one consistent state.
        # The target commits with synchronous=FULL (SQLite's default), so the copy is on disk.
        with target.backup("main", source, "main") as backup:
            backup.step(-1)
    finally:
        target.close()


def _copy_durably(source: str, target: str) -> None:
    """Copy a file and force it to the disk: otherwise the kernel writes the copy back during the run."""
    shutil.copyfile(source, target)
    descriptor = os.open(target, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _sync_folder(path: str) -> None:
    """Make a rename or removal in the folder of `path` durable."""
    descriptor = os.open(os.path.dirname(path), os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _remove_side_files(path: str) -> None:
    for suffix in SIDE_FILE_SUFFIXES:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path + suffix)


def _remove_with_side_files(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)
    _remove_side_files(path)


def _column_sql(column: Column) -> str:
    if column.generated_id:
        # Only "INTEGER PRIMARY KEY" makes the column the rowid, which SQLite assigns on insert.
        return f"{column.name} INTEGER PRIMARY KEY"
    return f"{column.name} {TYPES[column.type]} NOT NULL"


def _create_table_sql(table: Table) -> str:
    parts = [_column_sql(c) for c in table.columns]
    if table.generated_id is None:
        parts.append(f"PRIMARY KEY ({', '.join(table.primary_key)})")
    return f"CREATE TABLE {table.name} ({', '.join(parts)})"
