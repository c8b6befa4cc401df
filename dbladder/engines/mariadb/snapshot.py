"""Snapshots of the MariaDB engine.

A snapshot (fresh data before each run, `dbladder.fresh`) is a database, `<db>_dbladder_snapshot`,
holding copies of the tables' InnoDB tablespace files; saving and restoring copy those files in
the server's data folder, so both need the server on this machine (else seeding again is used).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import shutil
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ...errors import MissingDatabase, NotWritable
from .connection import MariaDBCore, _Connection

# Snapshots are databases named `<db>_dbladder_snapshot`. Snapshot code writes names into SQL
# and file paths as they are, so it takes only names whose file name is the name itself.
SNAPSHOT_SUFFIX = "_dbladder_snapshot"
MAX_NAME_LENGTH = 64
PLAIN_NAME = re.compile(r"[A-Za-z0-9_]+\Z")


class MariaDBSnapshots(MariaDBCore):
    """`save_snapshot`, `restore_snapshot` and `drop_snapshot`."""

    @asynccontextmanager
    async def _own_connection(self) -> AsyncIterator[_Connection]:
        """A connection outside the pool and without a default database, closed after the block:
        snapshots take table locks (FLUSH ... FOR EXPORT) that must never go back into the pool."""
        connection = await self._connect(with_database=False)
        try:
            # Tables are dropped, created and filled in name order, not in their foreign keys'
            # order: the copy is whole, so the keys hold again once it is done.
            await connection.run("SET SESSION foreign_key_checks = 0")
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
        so: not InnoDB, partitioned, with triggers (CREATE TABLE ... LIKE keeps none), or a name
        that is not plain. A table with foreign keys (a Django or Rails app's) is created from
        SHOW CREATE TABLE in the other database, since LIKE drops them; its references name no
        database, so they point at the copy's own tables.
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
    if await connection.query(
        f"SELECT 1 FROM information_schema.triggers WHERE trigger_schema = '{database}'"
    ):
        return None
    return sorted(str(row[0]) for row in rows)


async def _copy_tables(connection: _Connection, source: str, target: str, tables: list[str]) -> None:
    """Create `target`'s tables (absent before) as copies of `source`'s: by their tablespace files
    where the server's data folder is ours to use, else row by row inside the server."""
    keyed = {
        str(row[0])
        for row in await connection.query(
            "SELECT table_name FROM information_schema.referential_constraints "
            f"WHERE constraint_schema = '{source}'"
        )
    }
    for table in tables:
        if table in keyed:  # LIKE would drop its foreign keys
            created = await connection.query(f"SHOW CREATE TABLE {source}.{table}")
            await connection.run(f"USE {target}")
            await connection.run(str(created[0][1]))
        else:
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
