"""Where the service's time went, against a real service: a tiny pool makes pool wait dominate."""

from __future__ import annotations

import asyncio
import re
import time

import pytest
from service_support import seed

from dbladder.histogram import Histogram
from dbladder.observe import NoTiming, service_breakdown
from dbladder.service import ServiceConfig, running_service

PAGES = [f"/products?category=cat-{number % 100:02d}" for number in range(100)]
PRODUCTS = [f"/products/{1 + (number * 37) % 3000}" for number in range(100)]


async def _client(port: int, paths: list[str], until: float, answered: list[int]) -> None:
    """One kept-alive connection sending GETs back to back until `until`."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    number = 0
    try:
        while time.perf_counter() < until:
            path = paths[number % len(paths)]
            number += 1
            writer.write(f"GET {path} HTTP/1.1\r\nhost: test\r\n\r\n".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"content-length: *(\d+)", head, re.IGNORECASE)
            assert head.startswith(b"HTTP/1.1 200") and length is not None, head
            await reader.readexactly(int(length.group(1)))
            answered[0] += 1
    finally:
        writer.close()


def load(port: int, paths: list[str], concurrency: int, seconds: float) -> int:
    """`concurrency` clients at once for `seconds`; how many requests were answered."""
    answered = [0]

    async def run() -> None:
        until = time.perf_counter() + seconds
        await asyncio.gather(*(_client(port, paths, until, answered) for _ in range(concurrency)))

    asyncio.run(run())
    return answered[0]


@pytest.mark.slow
@pytest.mark.serial
def test_with_a_tiny_pool_waiting_for_a_connection_dominates(postgres_url):
    """Seed 001: at saturation "everyone else waits for a connection", which no error count shows.

    PostgreSQL, one pooled connection, 24 concurrent clients: each request holds the connection
    for a round trip to the server, while the others queue in the pool.
    """
    seed(postgres_url)
    with running_service(ServiceConfig(postgres_url, port=0, pool_size=1)) as service:
        load(service.config.port, PAGES, 4, 0.3)  # connect, prepare the statements
        before = service.stats()
        answered = load(service.config.port, PAGES, 24, 1.5)
        after = service.stats()
    figures = service_breakdown(before, after)
    assert figures["timed_requests"] == answered > 100
    assert figures["pool_wait_share"] > 0.5
    assert figures["pool_wait_p50_ms"] > figures["database_p50_ms"]
    assert figures["pool_wait_p95_ms"] > figures["database_p95_ms"]
    # Each request's wait is its own: were the per-request timing shared between concurrent
    # requests, most would file their whole time as "other".
    assert figures["other_p50_ms"] < figures["pool_wait_p50_ms"] / 5
    shares = figures["pool_wait_share"] + figures["database_share"] + figures["other_share"]
    assert shares == pytest.approx(1)
    means = figures["pool_wait_mean_ms"] + figures["database_mean_ms"] + figures["other_mean_ms"]
    assert figures["service_mean_ms"] == pytest.approx(means)


@pytest.mark.slow
@pytest.mark.serial
def test_sqlite_requests_never_wait_for_the_pool(sqlite_url):
    """SQLite calls run inline on the event loop: even one pooled connection is never busy when
    another request asks, so the time is the database's and the rest's, and pool wait stays ~0."""
    seed(sqlite_url)
    with running_service(ServiceConfig(sqlite_url, port=0, pool_size=1)) as service:
        before = service.stats()
        answered = load(service.config.port, PRODUCTS + PAGES, 16, 1.0)
        after = service.stats()
    figures = service_breakdown(before, after)
    assert figures["timed_requests"] == answered > 100
    assert figures["database_p50_ms"] > 0 and figures["other_p50_ms"] > 0
    assert figures["pool_wait_share"] < 0.1
    assert figures["pool_wait_p95_ms"] < figures["database_p95_ms"]


def test_an_empty_window_has_no_figures():
    empty = {"timing": {part: _histogram([]) for part in ("pool_wait", "database", "other")}}
    figures = service_breakdown(empty, empty)
    assert figures["timed_requests"] == 0
    assert figures["database_p95_ms"] is None and figures["pool_wait_share"] is None


def test_snapshots_that_do_not_belong_together_are_refused():
    earlier = {"timing": {part: _histogram([10, 20]) for part in ("pool_wait", "database", "other")}}
    later = {"timing": {part: _histogram([10]) for part in ("pool_wait", "database", "other")}}
    with pytest.raises(NoTiming, match="not a continuation"):
        service_breakdown(earlier, later)
    with pytest.raises(NoTiming, match="no request-time histograms"):
        service_breakdown({"totals": {}}, later)


def _histogram(values: list[int]) -> dict:
    histogram = Histogram()
    histogram.record_many(values)
    return histogram.to_dict()
