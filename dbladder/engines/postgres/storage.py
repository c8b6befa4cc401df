"""PostgreSQL's cache counters and size: its shared buffers' hits and misses for the run's database
(pg_stat_database: blks_hit, blks_read; a miss is a read from the kernel, which may still find the
block in its page cache) and pg_database_size.

A backend reports its counts at the end of a transaction at most once a second (PostgreSQL 15+),
so a window's figures lag the window by up to a second of each backend's reads; over a level of
several seconds under load that is the edge of the window, not its body."""

from __future__ import annotations

from ...urls import DatabaseURL
from ..base import Engine

CACHE = "shared buffers (pg_stat_database blks_hit, blks_read)"
PAGE_BYTES = 8192  # a block, as every hit and miss counts it (BLCKSZ; no packaged build changes it)
COUNTERS_SQL = "SELECT blks_hit, blks_read FROM pg_stat_database WHERE datname = current_database()"
SIZE_SQL = "SELECT pg_database_size(current_database())"


async def cache_counters(engine: Engine, url: DatabaseURL) -> tuple[int | None, int | None]:
    async with engine.read() as session:
        row = await session.fetch_one(COUNTERS_SQL)
    if row is None:
        return None, None
    return int(row[0]), int(row[1])


async def size_on_disk(engine: Engine, url: DatabaseURL) -> int | None:
    async with engine.read() as session:
        row = await session.fetch_one(SIZE_SQL)
    return int(row[0]) if row is not None else None
