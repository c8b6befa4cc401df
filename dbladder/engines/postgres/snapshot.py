"""Snapshots of the PostgreSQL engine: a database, `<db>_dbladder_snapshot`, made from this one
as a template; a restore drops this one and makes it from the snapshot again (docs/design.md,
"Fresh data for every run")."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

from ...errors import MissingDatabase
from .connection import PostgresCore

# Snapshots are databases named `<db>_dbladder_snapshot`; CREATE and DROP DATABASE run from the
# first of these that is not the database itself.
SNAPSHOT_SUFFIX = "_dbladder_snapshot"
MAX_IDENTIFIER_BYTES = 63  # NAMEDATALEN - 1
MAINTENANCE_DATABASES = ("postgres", "template1")


class PostgresSnapshots(PostgresCore):
    """`save_snapshot`, `restore_snapshot` and `drop_snapshot`."""

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
