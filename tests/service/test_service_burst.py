"""A burst far above capacity: 503s are allowed; a crash, a 500 or unbounded memory is not.

Capacity here is the number of transactions the service can run at once: workers x pool size
(for SQLite with one writer: one). The burst keeps BURST_FACTOR times that many connections
posting orders as fast as answers come back, with a pool timeout of 20 ms, so many requests are
refused with 503 quickly; afterwards the service must serve normally.
"""

from __future__ import annotations

import asyncio
import collections
import json
import time

import pytest
from service_support import Client, rss_bytes, seed

from dbladder.service import ServiceConfig, running_service

WORKERS = 2
POOL = 2
BURST_FACTOR = 10
BURST_CONNECTIONS = 100  # at least BURST_FACTOR x the most transactions at once (WORKERS x POOL = 4)
BURST_SECONDS = 2.5
MEMORY_GROWTH_BOUND = 150 * 1024 * 1024


def post_request(product_id: int) -> bytes:
    body = json.dumps({"customer_id": 1, "items": [{"product_id": product_id, "qty": 1}]}).encode()
    head = (
        "POST /orders HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def burst(port: int, connections: int, seconds: float) -> collections.Counter[str]:
    """Statuses of requests sent back to back on `connections` kept-alive connections for `seconds`."""
    counts: collections.Counter[str] = collections.Counter()
    deadline = time.monotonic() + seconds

    async def one_connection(number: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        request = post_request(1 + number % 50)
        try:
            while time.monotonic() < deadline:
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                status = head.split(b" ", 2)[1].decode()
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                counts[status] += 1
        except (ConnectionError, asyncio.IncompleteReadError):
            counts["connection lost"] += 1
        finally:
            writer.close()

    await asyncio.gather(*(one_connection(n) for n in range(connections)))
    return counts


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_service_survives_a_burst_and_serves_after_it(engine, request):
    url = request.getfixturevalue({"sqlite": "sqlite_url", "postgresql": "postgres_url"}[engine])
    seed(url)
    writers = 1 if engine == "sqlite" else 0
    assert BURST_CONNECTIONS >= BURST_FACTOR * WORKERS * POOL
    config = ServiceConfig(
        url,
        port=0,
        workers=WORKERS,
        pool_size=POOL,
        pool_timeout=0.02,
        engine_settings={"sqlite_writers": writers},
    )
    with running_service(config) as service:
        before = service.stats()
        pids = sorted(p["pid"] for p in before["processes"])
        memory_before = rss_bytes([service.pid, *pids])

        counts = asyncio.run(burst(service.config.port, BURST_CONNECTIONS, BURST_SECONDS))

        assert set(counts) <= {"201", "503"}, counts
        assert counts["201"] > 0 and counts["503"] > 0, counts
        after = service.stats()
        assert sorted(p["pid"] for p in after["processes"]) == pids  # no process died or was replaced
        assert all(p["alive"] for p in after["processes"])
        assert after["totals"]["server_errors"] == 0
        assert rss_bytes([service.pid, *pids]) - memory_before < MEMORY_GROWTH_BOUND

        client = Client(service.config.port)
        assert client.get("/healthz")[0] == 200
        assert client.get("/products/1")[0] == 200
        status, created = client.post("/orders", {"customer_id": 1, "items": [{"product_id": 9, "qty": 1}]})
        assert status == 201
        assert client.get(f"/orders/{created['id']}")[0] == 200
        client.close()
