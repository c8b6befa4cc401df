"""Reading a seeded Chirp back: row counts, sizes, a checksum, and the invariants after a run."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from ...engines.base import Engine
from .schema import SCHEMA


async def row_counts(engine: Engine) -> dict[str, int]:
    """The number of rows of every Chirp table."""
    counts = {}
    async with engine.read() as session:
        for table in SCHEMA.tables:
            row = await session.fetch_one(f"SELECT count(*) FROM {table.name}")
            counts[table.name] = int(row[0]) if row else 0
    return counts


async def sizes_in(engine: Engine) -> dict[str, int]:
    """The size parameters of a seeded database, for drawing ids that exist: its row counts."""
    return await row_counts(engine)


async def checksum(engine: Engine) -> dict[str, str]:
    """sha256 of every table's rows in primary-key order, rendered as text the same on every engine."""
    digests = {}
    async with engine.read() as session:
        for table in SCHEMA.tables:
            columns = ", ".join(table.column_names)
            order = ", ".join(table.primary_key)
            digest = hashlib.sha256()
            for row in await session.fetch_all(f"SELECT {columns} FROM {table.name} ORDER BY {order}"):
                digest.update(("\x1f".join(str(v) for v in row) + "\n").encode())
            digests[table.name] = digest.hexdigest()
    return digests


VERIFY_QUERIES = {
    "post": "SELECT count(*) FROM posts WHERE id = ? AND user_id = ?",
    "like": "SELECT count(*) FROM likes WHERE user_id = ? AND post_id = ?",
    "follow": "SELECT count(*) FROM follows WHERE follower_id = ? AND followee_id = ?",
}


async def verify(engine: Engine, acknowledged: Iterable[tuple[Any, ...]] = ()) -> list[str]:
    """Invariant violations after a run: an acknowledged write that is not there, a self-follow.

    `acknowledged` holds the records the endpoints' `acknowledge` functions made, e.g.
    ("post", id, user_id). Likes and follows are unique by their primary keys on every engine.
    """
    problems = []
    async with engine.read() as session:
        row = await session.fetch_one("SELECT count(*) FROM follows WHERE follower_id = followee_id")
        if row and row[0]:
            problems.append(f"{row[0]} users follow themselves")
        for kind, *key in acknowledged:
            found = await session.fetch_one(VERIFY_QUERIES[kind], tuple(key))
            if not (found and found[0]):
                problems.append(f"acknowledged {kind} {tuple(key)} is missing")
    return problems
