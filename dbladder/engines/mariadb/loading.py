"""Loading the MariaDB engine: DDL from a `Schema`, bulk loading, and the work after it.

Loading: prepared INSERT sent by COM_STMT_BULK_EXECUTE, 10,000 rows a batch, each batch committed
on its own. On this 2-core machine (100k products, 1M orders, 2M items; other work sharing it,
so figures spread by up to 2x) whole seeds took, in seconds:
    bulk execute, a commit per batch                          6.7 - 12.2  (median 9.8)
    bulk execute, one transaction per table, checks off       8.1 - 17.1  (median 12.5)
    multi-row INSERT text, 5,000 rows, a commit per batch    14.0 - 14.6
    multi-row INSERT text, one transaction per table         18.3 - 18.8
    LOAD DATA LOCAL INFILE, 200,000-row files                12.3 - 20.1
One transaction with unique_checks and foreign_key_checks off (InnoDB's bulk path for an empty
table) was slower, not faster. LOAD DATA LOCAL does not work through asyncmy 0.2.18 at all (it
passes the file name as bytes where it wants str), so it was measured with that patched.

Two streams (`load_streams`): seeding gives each of two connections the next chunk of rows as it
is free, so that the server inserts on two threads while the client makes the next batch. At 1 M
orders on the machine's server (load average 9 to 12), one stream took 24.5 and 20.2 s, two took
20.5 and 17.0 s, alternated. At 20 M orders into a managed server with the pool and redo log of
"Postgres vs MariaDB on two dedicated CPUs" (innodb_buffer_pool_size=2560M,
innodb_log_file_size=2G), two streams loaded the 60 M rows in 263 s (docs/experiments.md).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any, ClassVar

from asyncmy import errors as driver_errors

from ..base import Column, Row, Schema, Table
from .connection import CHARSET, COLLATION, MariaDBCore, as_duplicate_key

# "text" is VARCHAR(max_length) or TEXT (_column_sql).
TYPES = {"int": "INT", "bigint": "BIGINT", "double": "DOUBLE", "bool": "TINYINT"}
# A bulk batch stays far below max_allowed_packet (16 MB by default): at most this many bytes
# (estimated from the column types) and rows. Larger batches measured no faster.
BULK_BATCH_BYTES = 4 << 20
BULK_BATCH_ROWS = 10_000


class MariaDBLoading(MariaDBCore):
    """`recreate_schema`, `bulk_load`, `finish_load` and `table_exists`."""

    # InnoDB inserts on as many threads as connections feed it (module notes).
    load_streams: ClassVar[int] = 2

    async def recreate_schema(self, schema: Schema) -> None:
        schema.checked()
        async with self._borrow() as connection:
            for table in reversed(schema.tables):
                await connection.run(f"DROP TABLE IF EXISTS {table.name}")
            for table in schema.tables:
                await connection.run(_create_table_sql(table))

    async def bulk_load(self, table: Table, rows: Iterable[Row]) -> None:
        placeholders = ", ".join("?" for _ in table.columns)
        sql = f"INSERT INTO {table.name} ({', '.join(table.column_names)}) VALUES ({placeholders})"
        batch_rows = _bulk_batch_rows(table)
        iterator = iter(rows)
        # The statement is not cached: it is used once. Each batch commits on its own (autocommit):
        # faster here than one transaction per table with unique_checks off (module notes).
        async with self._borrow() as connection, await connection.raw.prepare(sql) as statement:
            while batch := list(itertools.islice(iterator, batch_rows)):
                try:
                    await _insert_batch(statement, batch)
                except Exception as exc:
                    duplicate = as_duplicate_key(exc)
                    if duplicate is not None:
                        raise duplicate from exc
                    raise

    async def finish_load(self, schema: Schema) -> None:
        # AUTO_INCREMENT needs nothing: InnoDB moves it past every id inserted explicitly.
        async with self._borrow() as connection:
            for index in schema.indexes:
                try:
                    await connection.run(index.create_sql())
                except Exception as exc:
                    duplicate = as_duplicate_key(exc)
                    if duplicate is not None:
                        raise duplicate from exc
                    raise
            await connection.run(f"ANALYZE TABLE {', '.join(t.name for t in schema.tables)}")

    async def table_exists(self, name: str) -> bool:
        async with self.read() as session:
            row = await session.fetch_one(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
                (name,),
            )
        return row is not None


def _bulk_batch_rows(table: Table) -> int:
    """Rows per COM_STMT_BULK_EXECUTE: a packet of at most BULK_BATCH_BYTES."""
    # Per value: a type byte and 8 bytes for a number; up to 4 bytes a character and a length for text.
    row_bytes = sum(1 + (4 * (c.max_length or 1024) + 3 if c.type == "text" else 8) for c in table.columns)
    return max(1, min(BULK_BATCH_ROWS, BULK_BATCH_BYTES // row_bytes))


async def _insert_batch(statement: Any, batch: list[Row]) -> None:
    try:
        await statement.execute_bulk(batch)
    except (ValueError, driver_errors.NotSupportedError):
        # Raised before anything is sent: a column mixing types or all NULL, or a server without
        # bulk execution (MySQL). Row by row is slower, and right.
        for row in batch:
            await statement.execute(row)


def _column_sql(column: Column) -> str:
    if column.generated_id:
        return f"{column.name} BIGINT NOT NULL AUTO_INCREMENT"
    if column.type == "text":
        # Unbounded text cannot be indexed whole; the schema bounds every text column it indexes.
        return f"{column.name} {f'VARCHAR({column.max_length})' if column.max_length else 'TEXT'} NOT NULL"
    if column.type == "bool":
        # MariaDB enforces CHECK constraints since 10.2.
        return f"{column.name} TINYINT NOT NULL CHECK ({column.name} IN (0, 1))"
    return f"{column.name} {TYPES[column.type]} NOT NULL"


def _create_table_sql(table: Table) -> str:
    parts = [_column_sql(c) for c in table.columns]
    parts.append(f"PRIMARY KEY ({', '.join(table.primary_key)})")
    return (
        f"CREATE TABLE {table.name} ({', '.join(parts)}) "
        f"ENGINE=InnoDB DEFAULT CHARSET={CHARSET} COLLATE={COLLATION}"
    )
