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
        self._slots = asyncio.Semaphore(size)
        self._open = 0
        self._closed = False

    @property
    def open_connections(self) -> int:
        return self._open

    @property
    def in_use(self) -> int:
        return self._open - len(self._idle)

    async def acquire(self) -> C:
        """A connection: an idle one, a new one while below size, or the next one released."""
        if self._closed:
            raise PoolTimeout("the connection pool is closed")
        timing = request_timing.get()
        asked_at = perf_counter() if timing is not None else 0.0
        if not self._slots.locked():
            # A free slot and nobody waiting: acquire() returns at once, so skip the timeout,
            # whose timer costs about as much as a SQLite point read (docs/design.md).
            await self._slots.acquire()
        else:
            try:
                async with asyncio.timeout(self.timeout):
                    await self._slots.acquire()
            except TimeoutError:
                if timing is not None:  # a request answered 503 waited too, and that shows
                    timing.pool_wait += perf_counter() - asked_at
                raise PoolTimeout(
                    f"no database connection became free within {self.timeout:g} s "
                    f"(pool of {self.size}, all busy)"
                ) from None
        if self._idle:
            connection = self._idle.pop()
        else:
            try:
                connection = await self._connect()
            except BaseException:
                self._slots.release()
                raise
            self._open += 1
        if timing is not None:
            now = perf_counter()
            timing.pool_wait += now - asked_at
            timing.held -= now
        return connection

    async def release(self, connection: C, *, broken: bool = False) -> None:
        """Give a connection back; a broken one is closed instead of reused."""
        timing = request_timing.get()
        if timing is not None:
            timing.held += perf_counter()
        if broken or self._closed:
            self._open -= 1
            try:
                await self._disconnect(connection)
            finally:
                self._slots.release()
            return
        self._idle.append(connection)
        self._slots.release()

    async def close(self) -> None:
        """Close the idle connections now; connections in use are closed when released."""
        self._closed = True
        while self._idle:
            connection = self._idle.pop()
            self._open -= 1
            await self._disconnect(connection)
