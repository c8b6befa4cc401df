"""Empty PostgreSQL databases for the tests, each handed to one test at a time and emptied between.

CREATE DATABASE copies template1 (7.5 MB, every page written to the WAL and synced) and DROP
DATABASE removes the files again: together 0.3-0.5 s on a quiet machine, for each of the seventy
tests of the quick lane that ask for PostgreSQL. Emptying a database a test has finished with (its
schemas dropped, its statistics reset) takes a few hundredths of that, so the next test gets it
instead, but only when it is then indistinguishable from a new one: the same owner, grants,
settings and schemas, no object made by a user, no other session connected and no database named
after it (a snapshot left behind). Otherwise it is dropped, as every one was before.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
from database_support import unique_name

from dbladder.urls import DatabaseURL

# Objects with an oid at or above FirstNormalObjectId were made after initdb: by a user, an
# extension or a test. A new database has none in any of these catalogs.
FIRST_USER_OID = 16384
USER_CATALOGS = (
    "pg_class", "pg_type", "pg_proc", "pg_constraint", "pg_trigger", "pg_rewrite", "pg_policy",
    "pg_extension", "pg_event_trigger", "pg_publication", "pg_default_acl", "pg_largeobject_metadata",
    "pg_operator", "pg_opclass", "pg_opfamily", "pg_cast", "pg_collation", "pg_conversion",
    "pg_language", "pg_ts_config", "pg_ts_dict", "pg_foreign_data_wrapper", "pg_foreign_server",
    "pg_statistic_ext", "pg_transform",
)  # fmt: skip
USER_OBJECTS = " + ".join(f"(SELECT count(*) FROM {c} WHERE oid >= {FIRST_USER_OID})" for c in USER_CATALOGS)
# Schemas a session makes for its temporary tables stay behind, empty, once it has ended.
TEMPORARY_SCHEMAS = r"nspname LIKE 'pg\_temp\_%' OR nspname LIKE 'pg\_toast\_temp\_%'"
SYSTEM_SCHEMAS = ("pg_catalog", "information_schema", "pg_toast")
FINGERPRINT_SQL = f"""
SELECT json_build_object(
  'database', (SELECT json_build_array(pg_get_userbyid(datdba), datacl::text, datconnlimit, datallowconn,
                                       datistemplate, dattablespace, encoding, datcollate, datctype)
               FROM pg_database WHERE datname = current_database()),
  'settings', (SELECT json_agg(setconfig::text ORDER BY setrole) FROM pg_db_role_setting
               WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())),
  'schemas', (SELECT json_agg(json_build_array(nspname, pg_get_userbyid(nspowner), nspacl::text,
                                               obj_description(oid, 'pg_namespace')) ORDER BY nspname)
              FROM pg_namespace WHERE NOT ({TEMPORARY_SCHEMAS})),
  'objects', ({USER_OBJECTS})
)::text
"""
# What a new database's public schema is (PostgreSQL 15 and later; older servers differ, and then
# the fingerprint differs and the database is dropped instead).
NEW_PUBLIC_SCHEMA = (
    "CREATE SCHEMA public AUTHORIZATION pg_database_owner; "
    "GRANT USAGE ON SCHEMA public TO PUBLIC; "
    "COMMENT ON SCHEMA public IS 'standard public schema'"
)
SESSIONS_GONE_SECONDS = 0.5  # a closed client's backend leaves pg_stat_activity within milliseconds


class PostgresDatabases:
    """`take()` an empty database's name, `give_back(name)` when the test is over, `close()` at the
    end of the session (drops what is left)."""

    def __init__(self, admin: DatabaseURL) -> None:
        self.admin = admin
        self.free: list[str] = []
        self.new_fingerprint: str | None = None

    def take(self) -> str:
        if self.free:
            return self.free.pop()
        name = unique_name()
        asyncio.run(self._create(name))
        return name

    def give_back(self, name: str) -> None:
        if asyncio.run(self._emptied(name)):
            self.free.append(name)
        else:
            asyncio.run(self._drop(name))

    def close(self) -> None:
        while self.free:
            asyncio.run(self._drop(self.free.pop()))

    async def _create(self, name: str) -> None:
        async with self._connection() as admin:
            await admin.execute(f'CREATE DATABASE "{name}"')
        if self.new_fingerprint is None:
            async with self._connection(name) as connection:
                self.new_fingerprint = await connection.fetchval(FINGERPRINT_SQL)

    async def _drop(self, name: str) -> None:
        async with self._connection() as admin:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    async def _emptied(self, name: str) -> bool:
        """Empty the database and say whether it is now as new; False leaves it to be dropped."""
        try:
            async with self._connection() as admin:
                if not await self._alone(admin, name):
                    return False
                siblings = await admin.fetchval(
                    "SELECT count(*) FROM pg_database WHERE datname <> $1 AND starts_with(datname, $1)", name
                )
                if siblings:
                    return False
            async with self._connection(name) as connection:
                schemas = await connection.fetch(
                    f"SELECT quote_ident(nspname) AS name FROM pg_namespace WHERE NOT ({TEMPORARY_SCHEMAS}) "
                    "AND nspname <> ALL($1::text[])",
                    list(SYSTEM_SCHEMAS),
                )
                if schemas:
                    names = ", ".join(row["name"] for row in schemas)
                    await connection.execute(f"DROP SCHEMA {names} CASCADE; {NEW_PUBLIC_SCHEMA}")
                await connection.execute("SELECT pg_stat_reset()")
                fingerprint = await connection.fetchval(FINGERPRINT_SQL)
            return self.new_fingerprint is not None and fingerprint == self.new_fingerprint
        except Exception:
            return False

    async def _alone(self, admin: asyncpg.Connection, name: str) -> bool:
        """No session but ours may be connected (a test's service still stopping, a pool not closed)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SESSIONS_GONE_SECONDS
        while await admin.fetchval("SELECT count(*) FROM pg_stat_activity WHERE datname = $1", name):
            if loop.time() > deadline:
                return False
            await asyncio.sleep(0.01)
        return True

    @asynccontextmanager
    async def _connection(self, database: str | None = None) -> AsyncIterator[asyncpg.Connection]:
        """A connection as the admin user, to its own database or to `database`."""
        url = self.admin
        connection = await asyncpg.connect(
            user=url.user, password=url.password, host=url.host, port=url.port,
            database=database or url.database, timeout=5,
        )  # fmt: skip
        try:
            yield connection
        finally:
            await connection.close()
