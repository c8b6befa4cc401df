"""The core of the SQLite engine: settings, connections, sessions, and the engine's
open/close/read/transaction/describe. Loading and snapshots build on `SQLiteCore` in their own
modules; `SQLiteEngine` (this package's `__init__`) puts the three together.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import ClassVar

import apsw
import apsw.ext

from ...errors import BadURL, DatabaseTimeout, DuplicateKey, MissingDatabase, NotWritable
from ...urls import DatabaseURL
from ..base import (
    MORE_THAN_ONE_STATEMENT,
    NO_STATEMENT,
    EngineInfo,
    EngineOptions,
    Row,
    SqlParams,
    StatementProblem,
)
from ..pool import Pool

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
# Extended result codes of a second row with the same key: a UNIQUE index (or a rowid table's
# composite key, which is one), and a WITHOUT ROWID table's or an INTEGER PRIMARY KEY's own key.
DUPLICATE_KEY_RESULTS = (apsw.SQLITE_CONSTRAINT_UNIQUE, apsw.SQLITE_CONSTRAINT_PRIMARYKEY)


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


def as_duplicate_key(exc: apsw.ConstraintError) -> DuplicateKey | None:
    """DuplicateKey for a UNIQUE or PRIMARY KEY failure, else None (NOT NULL, CHECK: other errors)."""
    if exc.extendedresult in DUPLICATE_KEY_RESULTS:  # type: ignore[attr-defined]
        return DuplicateKey(f"SQLite: {exc}")
    return None


class _Connection:
    """One apsw connection and the engine's busy-wait counter."""

    def __init__(self, path: str, settings: dict[str, str], counts: dict[str, int], create: bool = True):
        self.db = apsw.Connection(
            path,
            flags=apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0),
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

    async def fetch_one(self, sql: str, args: SqlParams = ()) -> Row | None:
        for row in self._db.execute(sql, args):
            return row
        return None

    async def fetch_all(self, sql: str, args: SqlParams = ()) -> list[Row]:
        return self._db.execute(sql, args).fetchall()

    async def execute(self, sql: str, args: SqlParams = ()) -> int:
        self._db.execute(sql, args)
        return self._db.changes()


class _Read:
    """`SQLiteEngine.read()` as a plain class: the generator of an asynccontextmanager cost a third of
    the service's GET /products/{id} (16.6 -> 11.0 us in-process; docs/design.md, "The web service")."""

    __slots__ = ("_connection", "_pool")

    def __init__(self, pool: Pool[_Connection]):
        self._pool = pool

    async def __aenter__(self) -> _Session:
        connection = self._pool.acquire_now()
        self._connection = await self._pool.acquire() if connection is None else connection
        return _Session(self._connection.db)

    async def __aexit__(self, *exc_info: object) -> None:
        if not self._pool.release_now(self._connection):
            await self._pool.release(self._connection)


class SQLiteCore:
    """Settings, pool and sessions: what loading and snapshots build on."""

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
        return _Connection(self.path, self.settings, self._counts, self.options.create)

    async def _disconnect(self, connection: _Connection) -> None:
        connection.close()

    async def open(self) -> None:
        if not self.options.create and not os.path.exists(self.path):
            raise MissingDatabase(f"the SQLite file {self.path} does not exist; `dbladder seed` creates it")
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
            except apsw.ConstraintError as exc:
                db.execute("ROLLBACK")
                duplicate = as_duplicate_key(exc)
                if duplicate is not None:
                    raise duplicate from exc
                raise
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

    def counters(self) -> dict[str, int]:
        return dict(self._counts)

    async def check_statements(self, statements: Sequence[str]) -> list[StatementProblem]:
        connection = await self._pool.acquire()
        try:
            problems = [_prepare_problem(connection.db, sql) for sql in statements]
        finally:
            await self._pool.release(connection)
        return [problem for problem in problems if problem is not None]


def _prepare_problem(db: apsw.Connection, sql: str) -> StatementProblem | None:
    """What SQLite says preparing `sql`, which it compiles against the schema but never runs.

    apsw has no prepare-only call; `apsw.ext.query_info` prepares the statement, binds NULLs and
    stops it, by an execution tracer that answers False, before its first step.
    """
    try:
        details = apsw.ext.query_info(db, sql)
        if not details.has_vdbe:  # blank, or only a comment
            return StatementProblem(sql, NO_STATEMENT)
        # The servers refuse a text of two statements; SQLite would prepare the first only.
        if details.query_remaining and apsw.ext.query_info(db, details.query_remaining).has_vdbe:
            return StatementProblem(sql, MORE_THAN_ONE_STATEMENT)
    except apsw.Error as exc:
        return StatementProblem.refused(sql, str(exc))
    return None
