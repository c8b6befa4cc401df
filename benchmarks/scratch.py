"""One scratch database, of the same name on the PostgreSQL and the MariaDB server, for the benchmarks
that measure both (`from scratch import scratch_databases`, as the benchmarks run from this folder)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncmy
import asyncpg


@asynccontextmanager
async def scratch_databases(prefix: str) -> AsyncIterator[str]:
    """Create the empty database `<prefix>_<random>` on both servers, yield its name and drop it from
    both afterwards; PostgreSQL's drop is WITH (FORCE), so connections left open do not block it."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    admin_pg = await asyncpg.connect(user="postgres", host="127.0.0.1", port=5432, database="postgres")
    admin_maria = await asyncmy.connect(user="root", host="127.0.0.1", port=3306)
    await admin_pg.execute(f'CREATE DATABASE "{name}"')
    async with admin_maria.cursor() as cursor:
        await cursor.execute(f"CREATE DATABASE `{name}`")
    try:
        yield name
    finally:
        await admin_pg.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin_pg.close()
        async with admin_maria.cursor() as cursor:
            await cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")
        await admin_maria.ensure_closed()
