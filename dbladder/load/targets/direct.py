"""Direct mode: the same mix executed straight through an engine, no HTTP, to measure the database alone.

The target answers with the statuses the service would give (404 not found, 409 an order that
cannot be filled, 503 pool or database timeout), so a direct level reads like an HTTP one and
the same pass mark applies. The raw figures of seed 003 are of this kind.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ...engines.base import Engine
from ...errors import DatabaseTimeout, OutOfStock, PoolTimeout, UnknownProduct
from ...workloads import shop
from ..mix import Operation
from . import TIMEOUT, ResultCallback

UNAVAILABLE = (PoolTimeout, DatabaseTimeout)


async def execute(engine: Engine, op: Operation) -> int:
    """Run one operation of the mix on an engine; the HTTP status the service would answer."""
    kind, args = op
    if kind == "product":
        return 200 if await shop.product_by_id(engine, *args) is not None else 404
    if kind == "page":
        await shop.products_page(engine, *args)
        return 200
    if kind == "order":
        return 200 if await shop.order_with_items(engine, *args) is not None else 404
    if kind == "create":
        customer_id, items = args
        try:
            await shop.create_order(engine, customer_id, items)
        except (OutOfStock, UnknownProduct):
            return 409
        return 201
    raise ValueError(f"unknown operation kind {kind!r}")


class DirectTarget:
    """Operations run as tasks on an open engine, at most `limit` at once (the in-flight limit)."""

    def __init__(self, engine: Engine, limit: int, timeout: float):
        self._engine = engine
        self._limit = limit
        self.timeout = timeout
        self.sweep_interval = 0.0  # each request has its own timeout; nothing to sweep
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    def render(self, op: Operation) -> Operation:
        return op

    def send(self, payload: Any, callback: ResultCallback, token: Any = None) -> bool:
        if len(self._tasks) >= self._limit:
            return False
        task = asyncio.get_running_loop().create_task(self._run(payload, callback, token))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    async def _run(self, op: Operation, callback: ResultCallback, token: Any) -> None:
        try:
            async with asyncio.timeout(self.timeout):
                result: int | str = await execute(self._engine, op)
        except TimeoutError:
            result = TIMEOUT
        except UNAVAILABLE:
            result = 503
        except asyncio.CancelledError:
            raise
        except Exception:
            # A driver error the service would answer with 500.
            result = 500
        callback(token, result, None)

    def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
