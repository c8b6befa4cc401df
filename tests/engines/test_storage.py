"""Each engine's read counters and size on disk (dbladder.engines.storage), on real databases."""

from __future__ import annotations

import asyncio
import os

from dbladder.engines import EngineOptions, opened
from dbladder.engines.storage import StorageReads, bytes_read_from_disk, read_storage, size_on_disk
from dbladder.urls import parse_url


async def reads_and_size(text: str) -> tuple[StorageReads, StorageReads, int | None]:
    url = parse_url(text)
    async with opened(url, EngineOptions(pool_size=1)) as engine:
        async with engine.transaction() as session:
            await session.execute("CREATE TABLE things (id bigint PRIMARY KEY, label varchar(20))")
            for number in range(50):
                await session.execute(
                    "INSERT INTO things (id, label) VALUES (?, ?)", (number, f"thing {number}")
                )
        before = await read_storage(engine, url, [os.getpid()])
        async with engine.read() as session:
            for number in range(50):
                await session.fetch_one("SELECT label FROM things WHERE id = ?", (number,))
            if url.engine == "postgresql":
                # A PostgreSQL backend reports its counts at the end of a transaction at most once
                # a second (what a run's levels, seconds long, rely on); asked to, it reports them
                # when it next waits for a command (PostgreSQL 15 and later), else a second on.
                version = await session.fetch_one("SELECT current_setting('server_version_num')::int")
                if version is not None and version[0] >= 150000:
                    await session.fetch_one("SELECT pg_stat_force_next_flush()")
                else:
                    await asyncio.sleep(1.1)
            await session.fetch_one("SELECT 1")
        after = await read_storage(engine, url, [os.getpid()])
        return before, after.since(before), await size_on_disk(engine, url)


def test_reads_are_counted_and_the_size_known(any_url: str) -> None:
    before, grown, size = asyncio.run(reads_and_size(any_url))
    assert size is not None and size > 0
    assert grown.disk_bytes is not None and grown.disk_bytes >= 0
    if parse_url(any_url).kind.in_process:
        assert before.cache_hits is None and grown.miss_share is None
    else:
        # 50 point reads at least, nearly all from the cache: the table was just written.
        assert grown.cache_hits is not None and grown.cache_misses is not None
        assert grown.cache_hits + grown.cache_misses >= 50
        assert grown.miss_share is not None and grown.miss_share < 0.5


def test_what_a_process_read_from_disk() -> None:
    assert bytes_read_from_disk([os.getpid()]) is not None
    assert bytes_read_from_disk([2**22 + 7]) is None  # no such process


def test_a_window_is_a_difference() -> None:
    earlier = StorageReads("c", 10, 5, 100)
    later = StorageReads("c", 40, 15, 4196)
    assert later.since(earlier) == StorageReads("c", 30, 10, 4096)
    assert later.since(earlier).miss_share == 0.25
    assert StorageReads("c").since(earlier).disk_bytes is None


def test_the_share_of_pages_read_from_disk_is_bytes_over_pages() -> None:
    # 40 pages of 8 kB read, 4 pages' worth from storage: a tenth, at most.
    assert StorageReads("c", 30, 10, 4 * 8192, 8192).disk_share == 0.1
    # Readahead can fetch more than was read: never above all of it.
    assert StorageReads("c", 30, 10, 400 * 8192, 8192).disk_share == 1.0
    assert (
        StorageReads("c", 30, 10, 4 * 8192, 8192).since(StorageReads("c", 30, 10, 0, 8192)).disk_share is None
    )
    assert StorageReads("c", None, None, 4096).disk_share is None  # SQLite: no pages counted
    assert StorageReads("c", 30, 10, None, 8192).disk_share is None
