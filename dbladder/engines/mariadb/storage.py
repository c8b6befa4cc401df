"""MariaDB's cache counters and size: the InnoDB buffer pool's logical read requests against the
reads it had to make (Innodb_buffer_pool_read_requests, Innodb_buffer_pool_reads: the whole
server's, not one database's) and the data and index length of the database's tables."""

from __future__ import annotations

from ...urls import DatabaseURL
from ..base import Engine

CACHE = "InnoDB buffer pool (Innodb_buffer_pool_read_requests, Innodb_buffer_pool_reads; whole server)"
PAGE_BYTES = 16384  # innodb_page_size's default, which managed servers keep
COUNTERS_SQL = (
    "SELECT variable_name, variable_value FROM information_schema.global_status "
    "WHERE variable_name IN ('INNODB_BUFFER_POOL_READ_REQUESTS', 'INNODB_BUFFER_POOL_READS')"
)
SIZE_SQL = (
    "SELECT CAST(COALESCE(SUM(data_length + index_length), 0) AS UNSIGNED) "
    "FROM information_schema.tables WHERE table_schema = DATABASE()"
)


async def cache_counters(engine: Engine, url: DatabaseURL) -> tuple[int | None, int | None]:
    async with engine.read() as session:
        rows = await session.fetch_all(COUNTERS_SQL)
    values = {str(name).upper(): int(value) for name, value in rows}
    requests = values.get("INNODB_BUFFER_POOL_READ_REQUESTS")
    misses = values.get("INNODB_BUFFER_POOL_READS")
    if requests is None or misses is None:
        return None, None
    # A read request the pool could not serve is one it read from the kernel.
    return requests - misses, misses


async def size_on_disk(engine: Engine, url: DatabaseURL) -> int | None:
    async with engine.read() as session:
        row = await session.fetch_one(SIZE_SQL)
    return int(row[0]) if row is not None else None
