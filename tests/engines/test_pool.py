import asyncio

import pytest

from dbladder.engines.pool import Pool
from dbladder.errors import PoolTimeout


def make_pool(size, timeout=0.05):
    opened, closed = [], []

    async def connect():
        opened.append(len(opened))
        return opened[-1]

    async def disconnect(connection):
        closed.append(connection)

    return Pool(size, connect, disconnect, timeout), opened, closed


def test_connections_open_lazily_and_are_reused():
    async def scenario():
        pool, opened, _ = make_pool(3)
        first = await pool.acquire()
        await pool.release(first)
        again = await pool.acquire()
        assert again == first
        assert opened == [0]
        second = await pool.acquire()
        assert second == 1 and pool.in_use == 2 and pool.open_connections == 2

    asyncio.run(scenario())


def test_a_full_pool_times_out_with_a_clear_error():
    async def scenario():
        pool, _, _ = make_pool(1, timeout=0.05)
        await pool.acquire()
        with pytest.raises(PoolTimeout, match="pool of 1"):
            await pool.acquire()

    asyncio.run(scenario())


def test_waiters_get_released_connections_in_order():
    async def scenario():
        pool, _, _ = make_pool(1, timeout=1)
        held = await pool.acquire()
        order = []

        async def waiter(name):
            connection = await pool.acquire()
            order.append(name)
            await pool.release(connection)

        tasks = [asyncio.create_task(waiter(n)) for n in "abc"]
        await asyncio.sleep(0.01)
        await pool.release(held)
        await asyncio.gather(*tasks)
        assert order == ["a", "b", "c"]

    asyncio.run(scenario())


def test_broken_connections_are_closed_and_replaced():
    async def scenario():
        pool, opened, closed = make_pool(1)
        connection = await pool.acquire()
        await pool.release(connection, broken=True)
        assert closed == [connection] and pool.open_connections == 0
        assert await pool.acquire() == 1
        assert opened == [0, 1]

    asyncio.run(scenario())


def test_failed_connect_frees_its_slot():
    async def scenario():
        calls = []

        async def connect():
            calls.append(1)
            if len(calls) == 1:
                raise OSError("refused")
            return "ok"

        async def disconnect(connection):
            return None

        pool = Pool(1, connect, disconnect, 0.05)
        with pytest.raises(OSError):
            await pool.acquire()
        assert await pool.acquire() == "ok"

    asyncio.run(scenario())


def test_acquire_now_takes_only_an_idle_connection_nobody_waits_for():
    async def scenario():
        pool, opened, _ = make_pool(2, timeout=1.0)
        assert pool.acquire_now() is None  # nothing open yet: acquire() must connect
        first = await pool.acquire()
        assert pool.release_now(first)
        assert pool.acquire_now() == first and pool.in_use == 1
        second = await pool.acquire()
        assert pool.acquire_now() is None  # every slot taken
        waiter = asyncio.ensure_future(pool.acquire())
        await asyncio.sleep(0)
        assert pool.release_now(second)  # handed straight to the waiter, first come first served
        assert await waiter == second
        assert pool.acquire_now() is None and opened == [0, 1]

    asyncio.run(scenario())


def test_release_now_leaves_a_closed_pool_to_release():
    async def scenario():
        pool, _, closed = make_pool(1)
        connection = await pool.acquire()
        await pool.close()
        assert not pool.release_now(connection) and pool.in_use == 1
        await pool.release(connection)  # what a caller does then: the connection is closed
        assert closed == [connection] and pool.open_connections == 0
        assert pool.acquire_now() is None

    asyncio.run(scenario())
