"""Direct mode: the same mix run straight through the workload's operations, no HTTP, to measure
the database alone.

The target answers with the statuses the service would give (404 not found, 409 a request the
data cannot fill, 503 pool or database timeout), so a direct level reads like an HTTP one and the
same pass mark applies. The raw driver figures of "SQLite handled 315 million daily requests on a
laptop" are of this kind.

A request starts inside `send`: its coroutine is driven by hand (`coroutine.send(None)`), and when it
finishes without suspending, as every SQLite call does (apsw runs inline), its answer is recorded
there and then: no task, no timer, no turn of the event loop. Only a request that suspends (a
server round trip) goes on in a task. While every connection is busy, new requests wait in the
target's own line and each task that finishes takes the next, as pgbench keeps one client per
connection; deadlines are one sweep, not a timer per request. docs/direct.md has the figures.

A write whose acknowledgement the integrity check needs is sent with `keep_body`: its callback then
gets the Answer's body (the object the service would encode).

The target awaits the workload's operation itself, with no coroutine of its own around it, and
turns its Answer or its error into the status the service would give: a coroutine less per
request (benchmarks/direct_overhead.py measures what each layer costs).
"""

from __future__ import annotations

import asyncio
import time
import types
from collections import deque
from collections.abc import Coroutine, Generator
from typing import Any

from ...engines.base import Engine
from ...errors import Conflict, DatabaseTimeout, InvalidRequest, PoolTimeout
from ...outcomes import TIMEOUT
from ...workloads.base import Answer, Workload
from ..mix import Request
from . import ResultCallback

UNAVAILABLE = (PoolTimeout, DatabaseTimeout)


def failed_status(exc: Exception) -> int | str:
    """The status the service would answer for an operation that raised `exc`: 409 for a conflict
    with the data, 400 for a request the operation refused, 503 when no connection or no answer
    came in time (a driver's own timeout is TIMEOUT), 500 for any other driver error."""
    if isinstance(exc, Conflict):
        return 409
    if isinstance(exc, InvalidRequest):
        return 400
    if isinstance(exc, TimeoutError):
        return TIMEOUT
    if isinstance(exc, UNAVAILABLE):
        return 503
    return 500


async def warm(engine: Engine, connections: int) -> None:
    """Open `connections` pooled connections before the run, so that its first seconds do not pay for it."""

    async def one() -> None:
        async with engine.read() as session:
            await session.fetch_one("SELECT 1")
            await asyncio.sleep(0.05)  # held a moment, so that every task gets a connection of its own

    await asyncio.gather(*(one() for _ in range(connections)))


@types.coroutine
def _resume(coroutine: Coroutine[Any, Any, Answer], yielded: Any) -> Generator[Any, Any, Answer]:
    """Go on driving a coroutine that suspended on `yielded`, inside the task that awaits this."""
    while True:
        try:
            sent = yield yielded
        except BaseException as exc:
            try:
                yielded = coroutine.throw(exc)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
        else:
            try:
                yielded = coroutine.send(sent)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]


class DirectTarget:
    """Requests run with the workload's context, at most `limit` awaiting an answer at once.

    A request runs inline in `send` until it finishes or suspends. One that suspends holds a pooled
    connection and goes on in a task; while `connections` requests are suspended, new ones wait in
    a first-come-first-served line here (a deque entry each, not a task, a future and a timer), and
    each task that finishes takes the next from the line, so at most `connections` tasks exist. A
    request still waiting or running `timeout` seconds after it was sent is answered TIMEOUT by the
    sweep (a running one is cancelled, which drops its connection).
    """

    def __init__(self, workload: Workload, context: Any, limit: int, timeout: float, connections: int = 100):
        self._context = context
        self._run = [operation.run for operation in workload.operations]
        self._limit = limit
        self._connections = connections
        self.timeout = timeout
        self.sweep_interval = min(0.05, max(0.002, timeout / 20))
        self._tasks: set[asyncio.Task[None]] = set()
        # Requests waiting for a connection, in send order: (deadline, request, callback, token,
        # keep_body).
        self._line: deque[tuple[float, Request, ResultCallback, Any, bool]] = deque()
        # The deadline of the request each task is running now; counted from the moment the task
        # is made, since a task leaves `_tasks` only an event-loop turn after it ends.
        self._running: dict[asyncio.Task[None], float] = {}
        self._expired: set[asyncio.Task[None]] = set()
        self._sweeper: asyncio.TimerHandle | None = None

    @property
    def in_flight(self) -> int:
        return len(self._running) + len(self._line)

    def render(self, request: Request) -> Request:
        return request

    def send(
        self, payload: Any, callback: ResultCallback, token: Any = None, keep_body: bool = False
    ) -> bool:
        """Start one request; with `keep_body` the callback gets the Answer's body (the object, not JSON)."""
        if len(self._running) + len(self._line) >= self._limit:
            return False
        if len(self._running) >= self._connections:
            self._line.append((time.monotonic() + self.timeout, payload, callback, token, keep_body))
            self._arm()
            return True
        coroutine = self._run[payload[0]](self._context, payload[1])
        try:
            yielded = coroutine.send(None)
        except StopIteration as done:
            answer = done.value
            try:
                status = answer.status
            except AttributeError:  # not an Answer: a defect of the workload, which the service answers 500
                callback(token, 500, None)
                return True
            callback(token, status, answer.body if keep_body else None)
            return True
        except Exception as exc:
            callback(token, failed_status(exc), None)
            return True
        task = asyncio.get_running_loop().create_task(
            self._work(_resume(coroutine, yielded), callback, token, keep_body)
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        self._running[task] = time.monotonic() + self.timeout
        self._arm()
        return True

    def _arm(self) -> None:
        if self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().call_later(self.sweep_interval, self._sweep)

    async def _work(self, work: Any, callback: ResultCallback, token: Any, keep_body: bool) -> None:
        """Finish one request, then take the next from the line while there is one."""
        task = asyncio.current_task()
        line, running, run, context = self._line, self._running, self._run, self._context
        try:
            while True:
                result: int | str
                body = None
                try:
                    answer = await work
                    result = answer.status
                    if keep_body:
                        body = answer.body
                except asyncio.CancelledError:
                    if task not in self._expired:
                        raise
                    self._expired.discard(task)  # type: ignore[arg-type]
                    task.uncancel()  # type: ignore[union-attr]
                    result = TIMEOUT
                except Exception as exc:
                    result = failed_status(exc)
                callback(token, result, body)
                if not line:
                    return
                deadline, request, callback, token, keep_body = line.popleft()
                running[task] = deadline  # type: ignore[index]
                work = run[request[0]](context, request[1])
        finally:
            running.pop(task, None)  # type: ignore[arg-type]

    def _sweep(self) -> None:
        now = time.monotonic()
        line = self._line
        while line and line[0][0] <= now:
            _, _, callback, token, _ = line.popleft()
            callback(token, TIMEOUT, None)
        for task, deadline in self._running.items():
            if deadline <= now and task not in self._expired:
                self._expired.add(task)
                task.cancel()
        self._sweeper = None
        if line or self._running:
            self._arm()

    def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        self._line.clear()
        for task in list(self._tasks):
            task.cancel()
