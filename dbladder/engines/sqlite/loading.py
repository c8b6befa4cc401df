"""Loading the SQLite engine: DDL from a `Schema`, bulk loading, and the work after it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import ClassVar

import apsw

from ..base import DOUBLE_MAX, INT_RANGE, Column, Row, Schema, Table
from .connection import SQLiteCore, as_duplicate_key

# STRICT tables accept only INT, INTEGER, REAL, TEXT, BLOB and ANY; what the servers' types check
# beyond that (int's range, bool's 0 or 1, text's length) is a CHECK constraint (_column_sql).
TYPES = {"int": "INTEGER", "bigint": "INTEGER", "double": "REAL", "bool": "INTEGER", "text": "TEXT"}


class SQLiteLoading(SQLiteCore):
    """`recreate_schema`, `bulk_load`, `finish_load` and `table_exists`."""

    # One writer at a time: a second stream would wait on the file lock.
    load_streams: ClassVar[int] = 1

    async def recreate_schema(self, schema: Schema) -> None:
        schema.checked()
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
            with db, _duplicate_key_raised():
                db.executemany(sql, rows)
        finally:
            await self._pool.release(connection)

    async def finish_load(self, schema: Schema) -> None:
        async with self.read() as session:
            for index in schema.indexes:
                with _duplicate_key_raised():
                    await session.execute(index.create_sql())
            await session.execute("ANALYZE")
            # Move what the load wrote to the WAL into the database file, so the first run starts clean.
            await session.fetch_all("PRAGMA wal_checkpoint(TRUNCATE)")

    async def table_exists(self, name: str) -> bool:
        async with self.read() as session:
            row = await session.fetch_one(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
            )
        return row is not None


@contextlib.contextmanager
def _duplicate_key_raised() -> Iterator[None]:
    """SQLite's UNIQUE and PRIMARY KEY failures as DuplicateKey, while loading as in a transaction."""
    try:
        yield
    except apsw.ConstraintError as exc:
        duplicate = as_duplicate_key(exc)
        if duplicate is not None:
            raise duplicate from exc
        raise


def _column_sql(column: Column) -> str:
    if column.generated_id:
        # Only "INTEGER PRIMARY KEY" makes the column the rowid, which SQLite assigns on insert.
        return f"{column.name} INTEGER PRIMARY KEY"
    sql = f"{column.name} {TYPES[column.type]} NOT NULL"
    if column.type == "int":
        sql += f" CHECK ({column.name} BETWEEN {INT_RANGE[0]} AND {INT_RANGE[1]})"
    elif column.type == "double":
        # Refuses the infinities (NaN arrives as NULL, which NOT NULL refuses), as MariaDB does.
        sql += f" CHECK ({column.name} BETWEEN {-DOUBLE_MAX!r} AND {DOUBLE_MAX!r})"
    elif column.type == "bool":
        sql += f" CHECK ({column.name} IN (0, 1))"
    elif column.type == "text" and column.max_length:
        sql += f" CHECK (length({column.name}) <= {column.max_length})"
    return sql


def _create_table_sql(table: Table) -> str:
    """CREATE TABLE ... STRICT: SQLite then refuses a value of the wrong type, as the servers do,
    instead of storing it as it is (a workload's own schema gets type checking on every engine;
    "SQLite handled 315 million daily requests on a laptop" ran on STRICT tables too). A clustered
    table is WITHOUT ROWID: its rows live in the primary key's B-tree (base.Table)."""
    parts = [_column_sql(c) for c in table.columns]
    if table.generated_id is None:
        parts.append(f"PRIMARY KEY ({', '.join(table.primary_key)})")
    options = "STRICT, WITHOUT ROWID" if table.clustered else "STRICT"
    return f"CREATE TABLE {table.name} ({', '.join(parts)}) {options}"
