"""`--sqlite-writers 1`: every write through one connection, so nobody sleeps on the file lock."""

from __future__ import annotations

import threading
import time

import pytest
from service_support import Client, seed

from dbladder.service import ServiceConfig, running_service

WORKERS = 3
CLIENTS = 12
MAX_SECONDS = 2.5
MAX_POSTS_PER_CLIENT = 150


def post_concurrently(port: int, until_busy: ServiceConfig | None = None) -> list[int]:
    """Statuses of concurrent POSTs from CLIENTS kept-alive connections, bounded in count and time."""
    statuses: list[int] = []
    lock = threading.Lock()
    deadline = time.monotonic() + MAX_SECONDS

    def client_loop(number: int) -> None:
        client = Client(port)
        mine = []
        for i in range(MAX_POSTS_PER_CLIENT):
            if time.monotonic() > deadline:
                break
            product = 1 + (number * MAX_POSTS_PER_CLIENT + i) % 500
            status, _ = client.post(
                "/orders", {"customer_id": number + 1, "items": [{"product_id": product, "qty": 1}]}
            )
            mine.append(status)
        client.close()
        with lock:
            statuses.extend(mine)

    threads = [threading.Thread(target=client_loop, args=(n,)) for n in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=MAX_SECONDS + 30)
    return statuses


@pytest.mark.slow
@pytest.mark.parametrize("writers", [0, 1])
def test_busy_waits_only_without_the_single_writer(sqlite_url, writers):
    seed(sqlite_url)
    config = ServiceConfig(sqlite_url, port=0, workers=WORKERS, engine_settings={"sqlite_writers": writers})
    with running_service(config) as service:
        statuses = post_concurrently(service.config.port)
        stats = service.stats()
    assert statuses and set(statuses) == {201}
    totals = stats["totals"]
    assert totals["writes"] == len(statuses)
    workers_that_wrote = [
        p for p in stats["processes"] if p["role"] == "worker" and p["counters"]["requests"] > 0
    ]
    assert len(workers_that_wrote) >= 2, "the posts must come through several workers"
    if writers == 1:
        assert totals["busy_waits"] == 0
        assert [p["role"] for p in stats["processes"]].count("writer") == 1
    else:
        assert totals["busy_waits"] > 0
