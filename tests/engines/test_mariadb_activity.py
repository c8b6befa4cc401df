"""The MariaDB activity probe against the local server, with a cause made on purpose: a row held
locked by one connection while others try to update it."""

from __future__ import annotations

import asyncio
import time

import asyncmy
import pytest

from dbladder.engines.activity import ActivitySampler, create_probe
from dbladder.urls import parse_url

WAITERS = 4
HOLD = 2.5


async def connect(url: str) -> asyncmy.Connection:
    parsed = parse_url(url)
    return await asyncmy.connect(
        host=parsed.host,
        port=parsed.port,
        user=parsed.user,
        password="",
        database=parsed.database,
        autocommit=True,
    )


async def run(connection: asyncmy.Connection, sql: str) -> None:
    async with connection.cursor() as cursor:
        await cursor.execute(sql)


async def updating(url: str) -> int:
    """How many connections of the database are inside an UPDATE. Not INNODB_TRX: InnoDB refreshes
    that table's cache only after 0.1 s without a reader, and the probe reads it already."""
    connection = await connect(url)
    try:
        async with connection.cursor() as cursor:
            await cursor.execute(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                "WHERE DB = DATABASE() AND STATE = 'Updating'"
            )
            (count,) = await cursor.fetchone()
            return int(count)
    finally:
        await connection.ensure_closed()


@pytest.mark.slow
def test_a_row_held_locked_counts_row_lock_waits_and_their_time(mariadb_url):
    """Each of the WAITERS updates waits once for the row lock, for about HOLD seconds (the window
    of the share starts once all of them are seen waiting and ends 0.5 s before the commit, so
    every active reading in it is a lock wait but for one the busy machine ran late: at least
    0.9). The status counters are the whole server's, so other clients can only add to them:
    at least WAITERS waits, and at least WAITERS x (HOLD - 0.5) s of row-lock time."""

    async def scene() -> tuple[float, float, float, float]:
        holder = await connect(mariadb_url)
        waiters = [await connect(mariadb_url) for _ in range(WAITERS)]
        try:
            await run(holder, "CREATE TABLE counter (id INT PRIMARY KEY, n INT NOT NULL) ENGINE=InnoDB")
            await run(holder, "INSERT INTO counter VALUES (1, 0)")
            began = time.perf_counter()
            await run(holder, "BEGIN")
            await run(holder, "UPDATE counter SET n = n + 1 WHERE id = 1")
            updates = [
                asyncio.create_task(run(w, "UPDATE counter SET n = n + 1 WHERE id = 1")) for w in waiters
            ]
            deadline = time.monotonic() + 5
            while await updating(mariadb_url) < WAITERS:
                assert time.monotonic() < deadline, "the waiters never queued for the lock"
                await asyncio.sleep(0.02)
            locked_from = time.perf_counter()
            await asyncio.sleep(HOLD - 0.5)
            locked_to = time.perf_counter()
            await asyncio.sleep(0.5)
            await run(holder, "COMMIT")
            await asyncio.gather(*updates)
            await asyncio.sleep(0.25)
            return began, locked_from, locked_to, time.perf_counter()
        finally:
            for connection in (holder, *waiters):
                await connection.ensure_closed()

    sampler = ActivitySampler(create_probe(mariadb_url))
    sampler.start()
    try:
        began, locked_from, locked_to, ended = asyncio.run(scene())
    finally:
        sampler.stop()
    assert sampler.warnings == []

    locked = sampler.window(locked_from, locked_to)
    assert locked.figures["lock_wait_share"] >= 0.9, locked.figures
    assert (
        WAITERS - 0.5 <= locked.figures["active_sessions"] <= WAITERS
    )  # the holder sleeps in its transaction
    assert locked.figures["row_lock_current_waits"] >= WAITERS - 0.5  # the server's, so others can add to it

    whole = sampler.window(began, ended)
    assert whole.figures["row_lock_waits"] >= WAITERS, whole.figures
    assert whole.figures["row_lock_seconds"] >= WAITERS * (HOLD - 0.5)
    assert 0 <= whole.figures["checkpoint_age_share_max"] <= 1


def test_a_quiet_database_has_no_active_sessions_and_no_lock_share(mariadb_url):
    sampler = ActivitySampler(create_probe(mariadb_url), interval=0.05)
    sampler.start()
    try:
        began = time.perf_counter()
        time.sleep(0.3)
    finally:
        sampler.stop()
    figures = sampler.window(began, time.perf_counter()).figures
    assert figures["active_sessions"] == 0
    assert "lock_wait_share" not in figures  # no active session: a share of nothing is not 0
    assert "checkpoint_age_max" in figures
