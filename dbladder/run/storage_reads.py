"""What the database read from memory and what from disk, level by level, and its size on disk
(dbladder.engines.storage): the counters are read at every level window's edges, on a connection
of their own opened for each reading, so the load's connections never wait for them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ..engines import EngineOptions, opened
from ..engines.storage import StorageReads, read_storage, size_on_disk
from ..errors import DbladderError
from ..urls import DatabaseURL


def storage_reader(url: DatabaseURL, pids: Callable[[], list[int]]) -> Callable[[], dict[str, Any]]:
    """A reading of the engine's read counters and of what `pids` (the processes that read the
    database's files: a server's, or for SQLite the service's) have read from disk."""

    async def read() -> StorageReads:
        async with opened(url, EngineOptions(pool_size=1)) as engine:
            return await read_storage(engine, url, pids())

    def reading() -> dict[str, Any]:
        try:
            return asyncio.run(read()).__dict__.copy()
        except (DbladderError, OSError) as exc:
            raise DbladderError(f"the read counters could not be read: {exc}") from None

    return reading


def window(before: dict[str, Any] | None, after: dict[str, Any] | None) -> dict[str, Any] | None:
    """A level's reads: the growth of the counters from its window's start to its end."""
    if before is None or after is None:
        return None
    return StorageReads(**after).since(StorageReads(**before)).to_dict()


def database_size(url: DatabaseURL) -> int | None:
    """The database's size on disk now (None where it cannot be asked)."""

    async def size() -> int | None:
        async with opened(url, EngineOptions(pool_size=1)) as engine:
            return await size_on_disk(engine, url)

    try:
        return asyncio.run(size())
    except (DbladderError, OSError):
        return None


def reading_role_cap(config: Any) -> int | None:
    """The memory cap of the role whose processes read the database's files (bytes; None: none):
    the database's for a server, for SQLite the service's (the generator's in direct mode)."""
    placement = config.placement
    if config.database.kind.has_server:
        cap: int | None = placement.database.memory
    elif config.target == "direct":
        cap = placement.generator.memory
    else:
        cap = placement.service.memory
    return cap
