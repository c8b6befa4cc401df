"""Direct mode: the same mix run straight through the workload's operations, no HTTP, to measure
the database alone.

The target answers with the statuses the service would give (404 not found, 409 a request the
data cannot fill, 503 pool or database timeout), so a direct level reads like an HTTP one and the
same pass mark applies. The raw driver figures of "SQLite handled 315 million daily requests on a
laptop" are of this kind.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ...errors import Conflict, DatabaseTimeout, InvalidRequest, PoolTimeout
from ...workloads.base import Answer, Workload
from ..mix import Request
from . import TIMEOUT, ResultCallback

UNAVAILABLE = (PoolTimeout, DatabaseTimeout)


async def execute(workload: Workload, context: Any, request: Request) -> int:
    """Run one request of the mix with the workload's context; the HTTP status the service would answer."""
    return (await answer(workload, context, request)).status


async def answer(workload: Workload, context: Any, request: Request) -> Answer:
    """Run one request of the mix; the Answer, with the status the service would give an error."""
    index, args = request
    try:
        return await workload.operations[index].run(context, args)
    except Conflict:
        return Answer(409)
    except InvalidRequest:
        return Answer(400)


class DirectTarget:
    """Requests run as tasks with the workload's context, at most `limit` at once (the in-flight limit)."""

    def __init__(self, workload: Workload, context: Any, limit: int, timeout: float):
        self._workload = workload
        self._context = context
        self._limit = limit
        self.timeout = timeout
        self.sweep_interval = 0.0  # each request has its own timeout; nothing to sweep
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    def render(self, request: Request) -> Request:
        return request

    def send(
        self, payload: Any, callback: ResultCallback, token: Any = None, keep_body: bool = False
    ) -> bool:
        """Start one request; with `keep_body` the callback gets the Answer's body (the object, not JSON)."""
        if len(self._tasks) >= self._limit:
            return False
        task = asyncio.get_running_loop().create_task(self._run(payload, callback, token, keep_body))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    async def _run(self, request: Request, callback: ResultCallback, token: Any, keep_body: bool) -> None:
        body = None
        try:
            async with asyncio.timeout(self.timeout):
                reply = await answer(self._workload, self._context, request)
            result: int | str = reply.status
            if keep_body:
                body = reply.body
        except TimeoutError:
            result = TIMEOUT
        except UNAVAILABLE:
            result = 503
        except asyncio.CancelledError:
            raise
        except Exception:
            # A driver error the service would answer with 500.
            result = 500
        callback(token, result, body)

    def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
