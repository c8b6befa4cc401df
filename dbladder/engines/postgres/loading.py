"""Loading the PostgreSQL engine: DDL from a `Schema`, binary COPY, and keys, indexes and
VACUUM ANALYZE after the load."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

import asyncpg

from ...errors import DuplicateKey
from ..base import DOUBLE_MAX, Column, Row, Schema, Table
from .connection import PostgresCore, _first_line, _left_broken, _Session

TYPES = {
    "int": "INTEGER",
    "bigint": "BIGINT",
    "double": "DOUBLE PRECISION",
    # Not BOOLEAN: it reads back as True/False and compares only with booleans (base.Column).
    "bool": "SMALLINT",
    "text": "TEXT",
}


class PostgresLoading(PostgresCore):
    """`recreate_schema`, `bulk_load`, `finish_load` and `table_exists`."""

    # One COPY per table: two side by side measured no faster at 1 M orders (6.8 and 7.7 s against
    # 7.1 and 7.2 s), and one keeps the heap in id order.
    load_streams: ClassVar[int] = 1

    async def recreate_schema(self, schema: Schema) -> None:
        schema.checked()
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
        try:
            await self._finish_load(schema)
        except asyncpg.UniqueViolationError as exc:
            # The keys are built here, after the COPY: a repeated key shows only now.
            raise DuplicateKey(f"PostgreSQL: {_first_line(exc)}; {exc.detail or ''}".rstrip("; ")) from exc

    async def _finish_load(self, schema: Schema) -> None:
        async with self.read() as session:
            # One build at a time: PostgreSQL already sorts each build with parallel workers
            # (max_parallel_maintenance_workers); two builds side by side measured no faster.
            for table in schema.tables:
                if not await _has_primary_key(session, table):
                    await session.execute(_primary_key_sql(table))
            for index in schema.indexes:
                await session.execute(index.create_sql())
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
    if column.type == "bool":
        return f"{column.name} SMALLINT NOT NULL CHECK ({column.name} IN (0, 1))"
    if column.type == "double":
        # Refuses NaN (above every number in PostgreSQL) and the infinities, as MariaDB does.
        return (
            f"{column.name} DOUBLE PRECISION NOT NULL "
            f"CHECK ({column.name} BETWEEN {-DOUBLE_MAX!r} AND {DOUBLE_MAX!r})"
        )
    return f"{column.name} {TYPES[column.type]} NOT NULL"


def _create_table_sql(table: Table) -> str:
    return f"CREATE TABLE {table.name} ({', '.join(_column_sql(c) for c in table.columns)})"


def _primary_key_sql(table: Table) -> str:
    return f"ALTER TABLE {table.name} ADD PRIMARY KEY ({', '.join(table.primary_key)})"
