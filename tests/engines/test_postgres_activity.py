"""The PostgreSQL activity probe against the local server, with causes made on purpose: a row held
locked by one connection while others try to update it, and plain reads."""

from __future__ import annotations

import asyncio
import time

import asyncpg
import pytest

from dbladder.engines.activity import ActivitySampler, create_probe
from dbladder.engines.postgres.activity import CHECKPOINTER_VERSION, counters_sql
from dbladder.errors import MissingDatabase
from dbladder.urls import parse_url

WAITERS = 4


async def connect(url: str) -> asyncpg.Connection:
    parsed = parse_url(url)
    return await asyncpg.connect(
        host=parsed.host, port=parsed.port, user=parsed.user, database=parsed.database, timeout=5
    )


async def make_table(url: str) -> None:
    connection = await connect(url)
    try:
        await connection.execute("CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL)")
        await connection.execute("INSERT INTO counter VALUES (1, 0)")
    finally:
        await connection.close()


async def waiting_on_locks(url: str) -> int:
    connection = await connect(url)
    try:
        return await connection.fetchval(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
    finally:
        await connection.close()


@pytest.mark.slow
def test_a_row_held_locked_shows_as_lock_waits_and_plain_reads_do_not(postgres_url):
    """While one connection holds a row lock, each of the WAITERS connections updating that row is
    active and waiting on a Lock event until the holder commits: no waiter can be granted inside
    the window, which starts once all of them are seen waiting and ends 0.5 s before the commit.
    So every active-backend reading of the window is a Lock wait; the bound of 0.9 leaves room only
    for a reading that the busy machine ran late, after its time stamp. Reads that sleep 50 ms
    inside their statement are active and never wait on a lock: exactly 0."""
    asyncio.run(make_table(postgres_url))
    sampler = ActivitySampler(create_probe(postgres_url))
    sampler.start()

    async def scene() -> tuple[float, float, float, float]:
        holder = await connect(postgres_url)
        waiters = [await connect(postgres_url) for _ in range(WAITERS)]
        readers = [await connect(postgres_url) for _ in range(WAITERS)]
        try:
            await holder.execute("BEGIN")
            await holder.execute("UPDATE counter SET n = n + 1 WHERE id = 1")
            updates = [
                asyncio.create_task(w.execute("UPDATE counter SET n = n + 1 WHERE id = 1")) for w in waiters
            ]
            deadline = time.monotonic() + 5
            while await waiting_on_locks(postgres_url) < WAITERS:
                assert time.monotonic() < deadline, "the waiters never queued for the lock"
                await asyncio.sleep(0.02)
            locked_from = time.perf_counter()
            await asyncio.sleep(2.0)
            locked_to = time.perf_counter()
            await asyncio.sleep(0.5)
            await holder.execute("COMMIT")
            await asyncio.gather(*updates)

            async def read_for(seconds: float, reader: asyncpg.Connection) -> None:
                end = time.monotonic() + seconds
                while time.monotonic() < end:
                    await reader.fetchval("SELECT n FROM counter, pg_sleep(0.05) WHERE id = 1")

            reads_from = time.perf_counter()
            await asyncio.gather(*(read_for(2.0, r) for r in readers))
            reads_to = time.perf_counter()
            return locked_from, locked_to, reads_from, reads_to
        finally:
            for connection in (holder, *waiters, *readers):
                await connection.close()

    try:
        locked_from, locked_to, reads_from, reads_to = asyncio.run(scene())
        time.sleep(0.25)
    finally:
        sampler.stop()
    assert sampler.warnings == []

    locked = sampler.window(locked_from, locked_to)
    assert locked.readings >= 10  # 2 s at 0.1 s, less whatever a busy machine delayed
    assert locked.figures["lock_wait_share"] >= 0.9, locked.figures
    # The first waiter waits for the holder's transaction, the others queue for the row behind it.
    by_event = locked.figures["share.event.Lock:transactionid"] + locked.figures["share.event.Lock:tuple"]
    assert by_event >= 0.9, locked.figures
    assert (
        WAITERS - 0.5 <= locked.figures["active_sessions"] <= WAITERS
    )  # the holder is idle in its transaction
    assert locked.figures["idle_in_transaction"] >= 0.9

    reads = sampler.window(reads_from, reads_to)
    assert reads.figures["active_sessions"] >= 1, reads.figures
    assert reads.figures["lock_wait_share"] == 0
    assert reads.figures["share.Timeout"] >= 0.5  # pg_sleep: the readers were active, not locked


def test_a_checkpoint_during_the_window_is_counted(postgres_url):
    """A CHECKPOINT asked for inside the window is a requested checkpoint (the server may add a
    timed one of its own, never fewer)."""
    sampler = ActivitySampler(create_probe(postgres_url), interval=0.05)
    sampler.start()

    async def checkpoint() -> None:
        connection = await connect(postgres_url)
        try:
            await connection.execute("CREATE TABLE scratch AS SELECT generate_series(1, 10000) AS n")
            await connection.execute("CHECKPOINT")
        finally:
            await connection.close()

    try:
        began = time.perf_counter()
        asyncio.run(checkpoint())
        # The checkpointer publishes its counts when it finishes; give it a few readings.
        deadline = time.perf_counter() + 3
        while sampler.window(began, time.perf_counter()).figures.get("checkpoints_requested", 0) < 1:
            assert time.perf_counter() < deadline, sampler.window(began, time.perf_counter())
            time.sleep(0.05)
    finally:
        sampler.stop()
    figures = sampler.window(began, time.perf_counter()).figures
    assert figures["checkpoints"] >= figures["checkpoints_requested"] >= 1
    assert "buffers_written_checkpoint" in figures


def test_a_database_that_does_not_exist_fails_the_start(postgres_url):
    sampler = ActivitySampler(create_probe(parse_url(postgres_url).with_database("no_such_database_here")))
    with pytest.raises(MissingDatabase, match="no database 'no_such_database_here'"):
        sampler.start()


def test_the_counters_have_the_same_names_before_and_after_postgresql_17():
    older, newer = counters_sql(CHECKPOINTER_VERSION - 1), counters_sql(CHECKPOINTER_VERSION)
    assert "pg_stat_checkpointer" in newer and "pg_stat_checkpointer" not in older
    for name in ("checkpoints_timed", "checkpoints_requested", "buffers_checkpoint", "buffers_clean"):
        assert name in older and name in newer
