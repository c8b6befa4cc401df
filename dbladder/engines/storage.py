"""What the database read from its own cache and what from disk, and how big it is on disk.

    before = await read_storage(engine, url)   # counters now
    ...                                        # a level
    grown = (await read_storage(engine, url)).since(before)
    grown.disk_share                           # of the reads the cache could not serve

Each engine says what its cache counts (its registration's `storage_reader`,
`<engine>/storage.py`): PostgreSQL's shared buffers (pg_stat_database's blks_hit against
blks_read, for the run's database), MariaDB's InnoDB buffer pool (Innodb_buffer_pool_read_requests
against Innodb_buffer_pool_reads, for the whole server), SQLite none that outlives a connection. A
read that misses the database's cache may still be served by the kernel's page cache, so what
really came from the disk is counted apart, from the database's processes (`bytes_read_from_disk`:
/proc/PID/io read_bytes, which counts what the storage layer fetched, page cache hits excluded):
the backends of a server, or for SQLite the service's processes, which read its file.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from ..engine_registry import load
from ..urls import DatabaseURL
from .base import Engine


class StorageReader(Protocol):
    """What an engine's registration names as its `storage_reader` (a module will do, as each
    built-in engine's `<engine>/storage.py` is): its cache counters and its size on disk."""

    CACHE: str
    """What the engine's own cache is, as a report names it."""

    async def cache_counters(self, engine: Engine, url: DatabaseURL) -> tuple[int | None, int | None]:
        """(hits, misses) of the engine's own cache so far; None where it keeps no such counter."""
        ...

    async def size_on_disk(self, engine: Engine, url: DatabaseURL) -> int | None:
        """The database's size on disk in bytes, tables and indexes (None where it cannot be asked)."""
        ...


@dataclass(frozen=True)
class StorageReads:
    """Cumulative counters of reads, or (after `since`) their growth over a window.

    `cache_hits`/`cache_misses`: reads the database's own cache served or not (None where the
    engine has no such counter); `cache`: what that cache is; `disk_bytes`: bytes the database's
    processes read from storage (None where they could not be read)."""

    cache: str
    cache_hits: int | None = None
    cache_misses: int | None = None
    disk_bytes: int | None = None
    page_bytes: int | None = None  # what one hit or miss reads: the engine's page (None: not counted)

    def since(self, earlier: StorageReads) -> StorageReads:
        def grown(now: int | None, then: int | None) -> int | None:
            return now - then if now is not None and then is not None else None

        return replace(
            self,
            cache_hits=grown(self.cache_hits, earlier.cache_hits),
            cache_misses=grown(self.cache_misses, earlier.cache_misses),
            disk_bytes=grown(self.disk_bytes, earlier.disk_bytes),
        )

    @property
    def miss_share(self) -> float | None:
        """The share of reads the database's cache did not serve (None: not counted, or no reads)."""
        if self.cache_hits is None or self.cache_misses is None:
            return None
        total = self.cache_hits + self.cache_misses
        return self.cache_misses / total if total else None

    @property
    def disk_share(self) -> float | None:
        """At most this share of the pages read came from the disk: the bytes read from storage over
        the bytes of every page read (hits and misses). An upper bound, as the kernel's readahead
        fetches more than was asked; None where a figure is missing or nothing was read."""
        if self.disk_bytes is None or self.page_bytes is None or self.cache_hits is None:
            return None
        pages = self.cache_hits + (self.cache_misses or 0)
        return min(1.0, self.disk_bytes / (pages * self.page_bytes)) if pages else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "cache": self.cache,
            "cache_hits": self.cache_hits,
            "cache_misses": self.cache_misses,
            "miss_share": self.miss_share,
            "disk_bytes": self.disk_bytes,
            "disk_share": self.disk_share,
        }


def _reader(url: DatabaseURL) -> StorageReader:
    reader: StorageReader = load(url.kind.storage_reader)
    return reader


def bytes_read_from_disk(pids: Iterable[int]) -> int | None:
    """What these processes have read from storage so far (read_bytes in /proc/PID/io, summed);
    None when none of them could be read (another user's processes, without root)."""
    total, seen = 0, False
    for pid in pids:
        with contextlib.suppress(OSError, ValueError):
            for line in Path(f"/proc/{pid}/io").read_text().splitlines():
                if line.startswith("read_bytes:"):
                    total += int(line.split()[1])
                    seen = True
    return total if seen else None


async def read_storage(engine: Engine, url: DatabaseURL, pids: Iterable[int] = ()) -> StorageReads:
    """The engine's cache counters now, with the bytes `pids` (the database's processes) have read
    from disk."""
    reader = _reader(url)
    hits, misses = await reader.cache_counters(engine, url)
    # PAGE_BYTES: what one hit or miss reads, where the engine counts them (optional).
    return StorageReads(
        reader.CACHE, hits, misses, bytes_read_from_disk(pids), getattr(reader, "PAGE_BYTES", None)
    )


async def size_on_disk(engine: Engine, url: DatabaseURL) -> int | None:
    """The database's size on disk in bytes, tables and indexes (None where it cannot be asked)."""
    size: int | None = await _reader(url).size_on_disk(engine, url)
    return size
