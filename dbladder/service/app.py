"""The web service as an RSGI app: the workload's routes, its operations, and errors mapped to statuses.

granian calls `__rsgi_init__(loop)` in each worker process before it serves (the loop is not
running yet), `__rsgi__` per request, and `__rsgi_del__(loop)` after the worker has stopped
accepting and its in-flight requests have finished; so the engine opens and closes there.

Each operation of the workload is one route: the app reads the body (bounded), lets the operation
parse the request, runs it with the workload's context and encodes its answer. Statuses: 400 for
anything a client sent wrong (InvalidRequest), 404 for a missing row or path, 409 when the data
cannot fill a well-formed request (Conflict: not enough stock, already done), 503 when the
database or its queue is out of capacity (pool timeout, database timeout, writer unavailable),
500 only for a bug. Every answer is JSON.

Every request except /healthz and /stats is timed in three parts, each into a histogram kept in
the worker's counters slot (`stats.TIMINGS`): waiting for a pooled connection, holding one (the
database calls), and the rest, from the moment the worker starts the request until it hands the
answer to granian. The pool fills in the first two through `request_timing` (engines/pool.py);
a write forwarded to the single SQLite writer counts as database time, its queue included.
`/stats` serves the histograms merged over the workers, cumulative since the service started.

A workload that counts its own queries (an ORM: `Workload.query_counts`) has them published per
process on the same beat (`queries.py`), and `/stats` serves them summed per operation.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from time import perf_counter
from typing import Any

from granian.rsgi import HTTPProtocol, Scope

from ..engine_registry import settings_with_defaults
from ..engines import create_engine
from ..engines.base import Engine
from ..engines.pool import RequestTiming, request_timing
from ..errors import (
    Conflict,
    DatabaseTimeout,
    InvalidRequest,
    PoolTimeout,
    ServerUnreachable,
    WriterUnavailable,
)
from ..workloads.base import Answer, HttpRequest, Operation, Workload
from ..workloads.parsing import MAX_BODY_BYTES
from ..workloads.registry import load_workload
from . import queries, stats
from .config import RuntimePaths, ServiceConfig
from .responses import JSON_HEADERS, Handler, Headers, HTTPError, Router, encode, error_body, read_body
from .writer import WriterClient

log = logging.getLogger(__name__)

HEALTHY = encode({"status": "ok"})
# How often a worker copies its counters into the shared file besides after each write.
FLUSH_INTERVAL_SECONDS = 0.2
UNAVAILABLE_ERRORS = (PoolTimeout, DatabaseTimeout, WriterUnavailable, ServerUnreachable, TimeoutError)
RETRY_HEADERS: Headers = [*JSON_HEADERS, ("retry-after", "1")]
# The service's own endpoints: not part of the load, so not in the request-time histograms.
UNTIMED_PATHS = frozenset({"/healthz", "/stats"})


class ServiceApp:
    """One worker's app: the workload, an engine, its context, an optional writer, the routes."""

    def __init__(self, config: ServiceConfig, paths: RuntimePaths, workload: Workload | None = None):
        self.config = config
        self.paths = paths
        self.workload = workload or load_workload(config.workload)
        self.router = Router()
        self.router.add("GET", "/healthz", self.healthz)
        self.router.add("GET", "/stats", self.stats)
        for index, operation in enumerate(self.workload.operations):
            self.router.add(operation.method, operation.route, self._handler(index, operation))
        self._engine: Engine | None = None
        self._context: Any = None
        self._writer: WriterClient | None = None
        self._slot: stats.Slot | None = None
        # The slot's own dict once the worker has one; counting before that goes nowhere.
        self._counters: dict[str, int] = dict.fromkeys(stats.COUNTERS, 0)
        self._timing = stats.Timing()
        self._flush_timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queries: queries.Publisher | None = None

    # -- lifecycle, called by granian in the worker process ---------------------------------

    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._engine = create_engine(self.config.db_url, self.config.engine_options)
        loop.run_until_complete(self._engine.open())
        self._context = loop.run_until_complete(self.workload.open(self._engine))
        if self.paths.writer_socket is not None:
            self._writer = WriterClient(self.paths.writer_socket, self.config.pool_timeout)
        self._slot = stats.Slot(self.paths.stats, "worker")
        self._counters = self._slot.values
        self._timing = self._slot.timing
        self._queries = queries.Publisher(self.paths.stats)
        self._flush_timer = loop.call_later(FLUSH_INTERVAL_SECONDS, self._flush_periodically)

    def __rsgi_del__(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._flush_timer is not None:
            self._flush_timer.cancel()
        if self._writer is not None:
            loop.run_until_complete(self._writer.close())
        if self._context is not None:
            loop.run_until_complete(self.workload.close(self._context))
        if self._engine is not None:
            loop.run_until_complete(self._engine.close())
        if self._slot is not None:
            self._flush()
            self._publish_queries()
            self._slot.close()

    def _flush(self) -> None:
        slot = self._slot
        if slot is not None and self._engine is not None:
            slot.values["busy_waits"] = self._engine.counters().get("busy_waits", 0)
            slot.flush()

    def _publish_queries(self) -> None:
        if self._queries is not None and self._context is not None:
            self._queries.publish(self.workload.query_counts(self._context))

    def _flush_periodically(self) -> None:
        self._flush()
        self._publish_queries()
        if self._slot is not None:
            self._slot.flush_timing()
        if self._loop is not None:
            self._flush_timer = self._loop.call_later(FLUSH_INTERVAL_SECONDS, self._flush_periodically)

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            raise RuntimeError("the app is used before granian called __rsgi_init__")
        return self._engine

    # -- requests -----------------------------------------------------------------------------

    async def __rsgi__(self, scope: Scope, proto: HTTPProtocol) -> None:
        started = perf_counter()
        timing = RequestTiming()
        request_timing.set(timing)
        counters = self._counters
        counters["requests"] += 1
        headers = JSON_HEADERS
        try:
            handler, params = self.router.match(scope.method, scope.path)
            status, body = await handler(scope, proto, params)
        except HTTPError as exc:
            counters["client_errors"] += 1
            status, headers, body = exc.status, exc.headers, exc.body
        except InvalidRequest as exc:
            counters["client_errors"] += 1
            status, body = 400, error_body("bad_request", str(exc))
        except Conflict as exc:
            counters["client_errors"] += 1
            status, body = 409, error_body(exc.code, str(exc), **exc.details)
        except UNAVAILABLE_ERRORS as exc:
            counters["unavailable"] += 1
            message = str(exc) or type(exc).__name__
            status, headers, body = 503, RETRY_HEADERS, error_body("unavailable", message)
        except Exception:
            counters["server_errors"] += 1
            log.exception("%s %s failed", scope.method, scope.path)
            status, body = 500, error_body("internal_error", "the service failed; see its log")
        if scope.path not in UNTIMED_PATHS:
            self._timing.record(timing.pool_wait, timing.held, perf_counter() - started)
        proto.response_bytes(status, headers, body)

    def _handler(self, index: int, operation: Operation) -> Handler:
        """The route of one operation: read, parse, run (here or in the single writer), encode."""
        reads_body = operation.method != "GET"
        parse, run = operation.parse, operation.run
        forwarded = operation.write and self.paths.writer_socket is not None

        async def handle(scope: Scope, proto: HTTPProtocol, params: dict[str, str]) -> tuple[int, bytes]:
            body = await read_body(scope, proto, MAX_BODY_BYTES) if reads_body else b""
            args = parse(HttpRequest(params, scope.query_string, body))
            if forwarded:
                answer = await self._forward(index, args)
            else:
                answer = await run(self._context, args)
            if operation.write and answer.status < 300:
                if not forwarded:  # else the writer process counts the writes it makes
                    self._counters["writes"] += 1
                self._flush()  # busy waits show in /stats as soon as the client has its answer
            return answer.status, encode(answer.body)

        return handle

    async def _forward(self, index: int, args: Any) -> Answer:
        """A write done by the single SQLite writer; the wait for its answer is database time."""
        writer = self._writer
        if writer is None:
            raise WriterUnavailable("the SQLite writer is not connected")
        asked_at = perf_counter()
        try:
            return await writer.run(index, args)
        finally:
            timing = request_timing.get()
            if timing is not None:
                timing.held += perf_counter() - asked_at

    async def healthz(self, scope: Scope, proto: HTTPProtocol, params: dict[str, str]) -> tuple[int, bytes]:
        """Answers without touching the database: the process serves, nothing more; with a single
        SQLite writer, also whether it runs (503 while it is down: no write can succeed)."""
        writer = self._writer_state()
        if writer is None:
            return 200, HEALTHY
        if not writer["alive"]:
            return 503, encode(
                {"status": "unavailable", "reason": "the SQLite writer is down", "writer": writer}
            )
        return 200, encode({"status": "ok", "writer": writer})

    def _writer_state(self) -> dict[str, Any] | None:
        """{"alive", "restarts"} of the single SQLite writer, from the counters file; None without one."""
        if self.paths.writer_socket is None or self._slot is None:
            return None
        processes = self._slot.snapshot()
        alive = any(p.role == "writer" and stats.alive(p.pid) for p in processes)
        return {"alive": alive, "restarts": stats.totals(processes)["writer_restarts"]}

    async def stats(self, scope: Scope, proto: HTTPProtocol, params: dict[str, str]) -> tuple[int, bytes]:
        """The counters of every process of this service, summed, and per process.

        "timing" holds the request-time histograms (Histogram.to_dict(), microseconds) merged over
        every process, cumulative: a level's figures are the difference of two snapshots.
        """
        self._flush()
        self._publish_queries()
        processes = self._slot.snapshot() if self._slot is not None else []
        timing = self._slot.timing_snapshot() if self._slot is not None else self._timing.histograms()
        alive = {p.pid: stats.alive(p.pid) for p in processes}
        return 200, encode(
            {
                "engine": self.engine.name,
                "workload": self.workload.name,
                "workers": self.config.workers,
                "ready_workers": sum(1 for p in processes if p.role == "worker" and alive[p.pid]),
                # The engine's run settings under their own keys ("sqlite_writers": 0), as before.
                **settings_with_defaults(self.config.engine_settings),
                "writer": self._writer_state(),
                "pool_size": self.config.pool_size,
                "totals": stats.totals(processes),
                "timing_unit": "microseconds",
                "timing": {name: histogram.to_dict() for name, histogram in timing.items()},
                # Per operation, for a workload that counts its queries; None for one that does not.
                "queries": queries.read(self.paths.stats) if self._queries is not None else None,
                "processes": [
                    {"pid": p.pid, "role": p.role, "alive": alive[p.pid], "counters": p.counters}
                    for p in processes
                ],
            }
        )


def create_app(config: ServiceConfig, paths: RuntimePaths) -> ServiceApp:
    """The app granian loads in each worker (the factory gets the whole configuration)."""
    return ServiceApp(config, paths)


def app_loader(config: ServiceConfig, paths: RuntimePaths) -> functools.partial[ServiceApp]:
    """A picklable loader for granian's `target_loader`: the configuration travels as its argument."""
    return functools.partial(create_app, config, paths)
