"""One connection pool for every engine, so that a comparison uses the same pool semantics.

Connections are opened lazily up to `size` (like Go's database/sql with SetMaxOpenConns, which the
seeds use) and kept open. A request that finds every connection busy waits in line, first come
first served, for at most `timeout` seconds and then fails with PoolTimeout.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from ..errors import PoolTimeout

C = TypeVar("C")


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
        if not self._slots.locked():
            # A free slot and nobody waiting: acquire() returns at once, so skip the timeout,
            # whose timer costs about as much as a SQLite point read (docs/design.md).
            await self._slots.acquire()
        else:
            try:
                async with asyncio.timeout(self.timeout):
                    await self._slots.acquire()
            except TimeoutError:
                raise PoolTimeout(
                    f"no database connection became free within {self.timeout:g} s "
                    f"(pool of {self.size}, all busy)"
                ) from None
        if self._idle:
            return self._idle.pop()
        try:
            connection = await self._connect()
        except BaseException:
            self._slots.release()
            raise
        self._open += 1
        return connection

    async def release(self, connection: C, *, broken: bool = False) -> None:
        """Give a connection back; a broken one is closed instead of reused."""
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
