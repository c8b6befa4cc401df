"""One connection pool for every engine, so that a comparison uses the same pool semantics.

Connections are opened lazily up to `size` (like Go's database/sql with SetMaxOpenConns, which the
seeds use) and kept open. A request that finds every connection busy waits in line, first come
first served, for at most `timeout` seconds and then fails with PoolTimeout.

Where a caller has put a `RequestTiming` into `request_timing` (the service does, per request),
every pool adds to it how long the request waited for a connection and how long it held one, so
the service can tell waiting for a connection from the database calls themselves ("Postgres vs MariaDB on two
dedicated CPUs": at
saturation "everyone else waits for a connection", which an error count cannot show).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from time import perf_counter
from typing import Generic, TypeVar

from ..errors import PoolTimeout

C = TypeVar("C")


class RequestTiming:
    """One request's time with pooled connections so far, in seconds (time.perf_counter()).

    `pool_wait` is the time spent in `acquire` (waiting for a free connection, or opening one);
    `held` the time between `acquire` returning and `release`, the database calls and the driver's
    work between them. The pool keeps `held` as the sum of release times minus the sum of acquire
    times, two float operations, so it is right once every connection is back.
    """

    __slots__ = ("held", "pool_wait")

    def __init__(self) -> None:
        self.pool_wait = 0.0
        self.held = 0.0


# Context-local, so each request of an event loop sees its own (granian runs every request in a
# copy of the context); None, the default, makes the pool skip the clock calls.
request_timing: ContextVar[RequestTiming | None] = ContextVar("dbladder_request_timing", default=None)


class Pool(Generic[C]):
    """Connections up to `size`; waiters are served first come, first served (see the module docstring).

    The slots are counted by hand rather than by an asyncio.Semaphore, and a waiter's deadline is
    a timer on its own future rather than asyncio.timeout(): acquiring a free connection is then a
    few attribute operations, and nothing here asks for the current task, so an operation may take
    its first step outside any task (direct mode runs a call that never suspends inline).
    """

    def __init__(
        self,
        size: int,
        connect: Callable[[], Awaitable[C]],
        disconnect: Callable[[C], Awaitable[None]],
        timeout: float,
    ):
        self.size = size
        self.timeout = timeout
        self._connect = connect
        self._disconnect = disconnect
        self._idle: deque[C] = deque()
        self._free = size  # slots nobody holds
        # Each waiter's future gets True when a released slot is handed to it, False at its deadline.
        self._waiters: deque[asyncio.Future[bool]] = deque()
        self._open = 0
        self._closed = False

    @property
    def open_connections(self) -> int:
        return self._open

    @property
    def in_use(self) -> int:
        return self._open - len(self._idle)

    def acquire_now(self) -> C | None:
        """An idle connection at once, or None when `acquire()` would wait or connect (then await it).

        The common case of `acquire()` without a coroutine: a read through `engine.read()` takes
        its connection here, which saved about a microsecond of a direct-mode request (a coroutine
        created and run to its end; benchmarks/direct_overhead.py).
        """
        if self._closed or not self._free or self._waiters or not self._idle:
            return None
        self._free -= 1
        timing = request_timing.get()
        if timing is not None:
            timing.held -= perf_counter()
        return self._idle.pop()

    async def acquire(self) -> C:
        """A connection: an idle one, a new one while below size, or the next one released."""
        if self._closed:
            raise PoolTimeout("the connection pool is closed")
        timing = request_timing.get()
        asked_at = perf_counter() if timing is not None else 0.0
        if self._free and not self._waiters:
            self._free -= 1
        elif not await self._wait():
            if timing is not None:  # a request answered 503 waited too, and that shows
                timing.pool_wait += perf_counter() - asked_at
            raise PoolTimeout(
                f"no database connection became free within {self.timeout:g} s "
                f"(pool of {self.size}, all busy)"
            )
        if self._idle:
            connection = self._idle.pop()
        else:
            try:
                connection = await self._connect()
            except BaseException:
                self._hand_on()
                raise
            self._open += 1
        if timing is not None:
            now = perf_counter()
            timing.pool_wait += now - asked_at
            timing.held -= now
        return connection

    async def _wait(self) -> bool:
        """Wait in line for a slot: True when one was handed over, False after `timeout` seconds."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[bool] = loop.create_future()
        self._waiters.append(waiter)
        timer = loop.call_later(self.timeout, _expire, waiter)
        try:
            return await waiter
        except BaseException:
            # Cancelled: a slot handed over meanwhile goes to the next in line.
            if waiter.done() and not waiter.cancelled() and waiter.result():
                self._hand_on()
            raise
        finally:
            timer.cancel()

    def _hand_on(self) -> None:
        """Give a slot to the first live waiter, or back to the free count."""
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(True)
                return
        self._free += 1

    def release_now(self, connection: C) -> bool:
        """Give a healthy connection back at once; False, having done nothing, when the pool is
        closed (then await `release()`, which closes it). `release()` without a coroutine, as
        `acquire_now()` is `acquire()`'s."""
        if self._closed:
            return False
        timing = request_timing.get()
        if timing is not None:
            timing.held += perf_counter()
        self._idle.append(connection)
        if self._waiters:
            self._hand_on()
        else:
            self._free += 1
        return True

    async def release(self, connection: C, *, broken: bool = False) -> None:
        """Give a connection back; a broken one is closed instead of reused."""
        if not broken and self.release_now(connection):
            return
        timing = request_timing.get()
        if timing is not None:
            timing.held += perf_counter()
        self._open -= 1
        try:
            await self._disconnect(connection)
        finally:
            self._hand_on()

    async def warm(self, prepare: Callable[[C], Awaitable[None]] | None = None) -> None:
        """Open every connection now (and run `prepare` on each), so that a run does not pay for it."""
        held = [await self.acquire() for _ in range(self.size)]
        try:
            if prepare is not None:
                for connection in held:
                    await prepare(connection)
        finally:
            for connection in held:
                await self.release(connection)

    async def close(self) -> None:
        """Close the idle connections now; connections in use are closed when released."""
        self._closed = True
        while self._idle:
            connection = self._idle.pop()
            self._open -= 1
            await self._disconnect(connection)


def _expire(waiter: asyncio.Future[bool]) -> None:
    if not waiter.done():
        waiter.set_result(False)
