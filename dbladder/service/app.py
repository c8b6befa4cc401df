"""The shop service as an RSGI app: a small router, the handlers, and errors mapped to statuses.

granian calls `__rsgi_init__(loop)` in each worker process before it serves (the loop is not
running yet), `__rsgi__` per request, and `__rsgi_del__(loop)` after the worker has stopped
accepting and its in-flight requests have finished; so the engine opens and closes there.

Statuses: 400 for anything a client sent wrong (InvalidRequest), 404 for a missing product, order
or path, 409 when an order cannot be filled (not enough stock, or a product id that does not exist:
the request is well formed and the endpoint exists, the catalogue just cannot fill it), 503 when
the database or its queue is out of capacity (pool timeout, database timeout, writer unavailable),
500 only for a bug. Every answer is JSON.

Every request except /healthz and /stats is timed in three parts, each into a histogram kept in
the worker's counters slot (`stats.TIMINGS`): waiting for a pooled connection, holding one (the
database calls), and the rest, from the moment the worker starts the request until it hands the
answer to granian. The pool fills in the first two through `request_timing` (engines/pool.py);
a write forwarded to the single SQLite writer counts as database time, its queue included.
`/stats` serves the histograms merged over the workers, cumulative since the service started.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Sequence
from time import perf_counter

from granian.rsgi import HTTPProtocol, Scope

from ..engines import create_engine
from ..engines.base import Engine
from ..engines.pool import RequestTiming, request_timing
from ..errors import (
    DatabaseTimeout,
    InvalidRequest,
    OutOfStock,
    PoolTimeout,
    ServerUnreachable,
    UnknownProduct,
    WriterUnavailable,
)
from ..workloads import shop
from . import stats, validation
from .config import RuntimePaths, ServiceConfig
from .responses import JSON_HEADERS, Headers, HTTPError, Router, encode, error_body, read_body
from .writer import WriterClient

log = logging.getLogger(__name__)

HEALTHY = encode({"status": "ok"})
# How often a worker copies its counters into the shared file besides after each write.
FLUSH_INTERVAL_SECONDS = 0.2
UNAVAILABLE_ERRORS = (PoolTimeout, DatabaseTimeout, WriterUnavailable, ServerUnreachable, TimeoutError)
RETRY_HEADERS: Headers = [*JSON_HEADERS, ("retry-after", "1")]
# The service's own endpoints: not part of the load, so not in the request-time histograms.
UNTIMED_PATHS = frozenset({"/healthz", "/stats"})


class ShopApp:
    """One worker's app: an engine, an order writer, a counters slot and the routes."""

    def __init__(self, config: ServiceConfig, paths: RuntimePaths):
        self.config = config
        self.paths = paths
        self.router = Router()
        self.router.add("GET", "/healthz", self.healthz)
        self.router.add("GET", "/stats", self.stats)
        self.router.add("GET", "/products/{id}", self.product)
        self.router.add("GET", "/products", self.products_page)
        self.router.add("GET", "/orders/{id}", self.order)
        self.router.add("POST", "/orders", self.create_order)
        self._engine: Engine | None = None
        self._writer: WriterClient | None = None
        self._slot: stats.Slot | None = None
        # The slot's own dict once the worker has one; counting before that goes nowhere.
        self._counters: dict[str, int] = dict.fromkeys(stats.COUNTERS, 0)
        self._timing = stats.Timing()
        self._flush_timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- lifecycle, called by granian in the worker process ---------------------------------

    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._engine = create_engine(self.config.db_url, self.config.engine_options)
        loop.run_until_complete(self._engine.open())
        if self.paths.writer_socket is not None:
            self._writer = WriterClient(self.paths.writer_socket, self.config.pool_timeout)
        self._slot = stats.Slot(self.paths.stats, "worker")
        self._counters = self._slot.values
        self._timing = self._slot.timing
        self._flush_timer = loop.call_later(FLUSH_INTERVAL_SECONDS, self._flush_periodically)

    def __rsgi_del__(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._flush_timer is not None:
            self._flush_timer.cancel()
        if self._writer is not None:
            loop.run_until_complete(self._writer.close())
        if self._engine is not None:
            loop.run_until_complete(self._engine.close())
        if self._slot is not None:
            self._flush()
            self._slot.close()

    def _flush(self) -> None:
        slot = self._slot
        if slot is not None and self._engine is not None:
            slot.values["busy_waits"] = self._engine.counters().get("busy_waits", 0)
            slot.flush()

    def _flush_periodically(self) -> None:
        self._flush()
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
            handler, argument = self.router.match(scope.method, scope.path)
            status, body = await handler(scope, proto, argument)
        except HTTPError as exc:
            counters["client_errors"] += 1
            status, headers, body = exc.status, exc.headers, exc.body
        except InvalidRequest as exc:
            counters["client_errors"] += 1
            status, body = 400, error_body("bad_request", str(exc))
        except (OutOfStock, UnknownProduct) as exc:
            counters["client_errors"] += 1
            code = "out_of_stock" if isinstance(exc, OutOfStock) else "unknown_product"
            status, body = 409, error_body(code, str(exc), product_id=exc.product_id)
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

    async def healthz(self, scope: Scope, proto: HTTPProtocol, argument: str) -> tuple[int, bytes]:
        """Answers without touching the database: the process serves, nothing more."""
        return 200, HEALTHY

    async def stats(self, scope: Scope, proto: HTTPProtocol, argument: str) -> tuple[int, bytes]:
        """The counters of every process of this service, summed, and per process.

        "timing" holds the request-time histograms (Histogram.to_dict(), microseconds) merged over
        every process, cumulative: a level's figures are the difference of two snapshots.
        """
        self._flush()
        processes = self._slot.snapshot() if self._slot is not None else []
        timing = self._slot.timing_snapshot() if self._slot is not None else self._timing.histograms()
        alive = {p.pid: stats.alive(p.pid) for p in processes}
        return 200, encode(
            {
                "engine": self.engine.name,
                "workers": self.config.workers,
                "ready_workers": sum(1 for p in processes if p.role == "worker" and alive[p.pid]),
                "sqlite_writers": self.config.sqlite_writers,
                "pool_size": self.config.pool_size,
                "totals": stats.totals(processes),
                "timing_unit": "microseconds",
                "timing": {name: histogram.to_dict() for name, histogram in timing.items()},
                "processes": [
                    {"pid": p.pid, "role": p.role, "alive": alive[p.pid], "counters": p.counters}
                    for p in processes
                ],
            }
        )

    async def product(self, scope: Scope, proto: HTTPProtocol, argument: str) -> tuple[int, bytes]:
        product_id = validation.parse_id(argument, "product id")
        found = await shop.product_by_id(self.engine, product_id)
        if found is None:
            raise HTTPError(404, "not_found", f"no product with id {product_id}")
        return 200, encode(found)

    async def products_page(self, scope: Scope, proto: HTTPProtocol, argument: str) -> tuple[int, bytes]:
        category, after = validation.parse_page_query(scope.query_string)
        products = await shop.products_page(self.engine, category, after)
        next_after = products[-1]["id"] if len(products) == shop.PAGE_SIZE else None
        return 200, encode({"products": products, "next_after": next_after})

    async def order(self, scope: Scope, proto: HTTPProtocol, argument: str) -> tuple[int, bytes]:
        order_id = validation.parse_id(argument, "order id")
        found = await shop.order_with_items(self.engine, order_id)
        if found is None:
            raise HTTPError(404, "not_found", f"no order with id {order_id}")
        return 200, encode(found)

    async def create_order(self, scope: Scope, proto: HTTPProtocol, argument: str) -> tuple[int, bytes]:
        body = await read_body(scope, proto, validation.MAX_BODY_BYTES)
        customer_id, items = validation.parse_new_order(body)
        try:
            order_id, total = await self._write_order(customer_id, items)
            if self._writer is None:  # else the writer process counts the orders it writes
                self._counters["orders_created"] += 1
        finally:
            self._flush()  # busy waits show in /stats as soon as the client has its answer
        return 201, encode({"id": order_id, "total_cents": total})

    async def _write_order(self, customer_id: int, items: Sequence[tuple[int, int]]) -> tuple[int, int]:
        if self._writer is not None:
            # No pool in this process sees the write: the wait for the writer's answer is the
            # request's database time (its turn in the writer's queue included).
            asked_at = perf_counter()
            try:
                return await self._writer.create_order(customer_id, items)
            finally:
                timing = request_timing.get()
                if timing is not None:
                    timing.held += perf_counter() - asked_at
        return await shop.create_order(self.engine, customer_id, items)


def create_app(config: ServiceConfig, paths: RuntimePaths) -> ShopApp:
    """The app granian loads in each worker (the factory gets the whole configuration)."""
    return ShopApp(config, paths)


def app_loader(config: ServiceConfig, paths: RuntimePaths) -> functools.partial[ShopApp]:
    """A picklable loader for granian's `target_loader`: the configuration travels as its argument."""
    return functools.partial(create_app, config, paths)
