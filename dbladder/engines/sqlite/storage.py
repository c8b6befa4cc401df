"""SQLite's size on disk (the database file with its WAL); it keeps no cache counter that outlives
a connection, so what it read from disk is only the service's processes' read_bytes."""

from __future__ import annotations

import os

from ...urls import DatabaseURL
from ..base import Engine

CACHE = "none counted (each connection's page cache is its own)"


async def cache_counters(engine: Engine, url: DatabaseURL) -> tuple[int | None, int | None]:
    return None, None


async def size_on_disk(engine: Engine, url: DatabaseURL) -> int | None:
    path = url.path or ""
    sizes = [os.path.getsize(p) for p in (path, path + "-wal") if os.path.isfile(p)]
    return sum(sizes) if sizes else None
