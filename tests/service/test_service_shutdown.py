"""SIGTERM: stop accepting, let in-flight requests finish, close the pools, leave no process behind."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest
from service_support import Client, seed

from dbladder.engines import EngineOptions, opened
from dbladder.service import ServiceConfig, running_service
from dbladder.service.server import session_members


def other_connections(url: str) -> int:
    async def run() -> int:
        async with opened(url, EngineOptions(pool_size=1)) as engine, engine.read() as session:
            row = await session.fetch_one(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        return int(row[0]) if row else -1

    return asyncio.run(run())


@pytest.mark.slow
def test_sigterm_finishes_in_flight_requests_then_closes_everything(postgres_url):
    seed(postgres_url)
    locked, release = threading.Event(), threading.Event()

    async def hold_row_lock() -> None:
        # Keeps product 1 locked, so an order for it stays in flight until `release`.
        async with (
            opened(postgres_url, EngineOptions(pool_size=1)) as engine,
            engine.transaction() as session,
        ):
            await session.execute("UPDATE products SET stock = stock WHERE id = ?", (1,))
            locked.set()
            await asyncio.get_running_loop().run_in_executor(None, release.wait, 20)

    holder = threading.Thread(target=asyncio.run, args=(hold_row_lock(),))
    holder.start()
    answers: list[tuple[int, object]] = []
    with running_service(ServiceConfig(postgres_url, port=0, pool_size=4)) as service:
        assert locked.wait(10)
        client = Client(service.config.port)
        assert client.get("/healthz")[0] == 200  # connected before the stop
        in_flight = threading.Thread(
            target=lambda: answers.append(
                client.post("/orders", {"customer_id": 1, "items": [{"product_id": 1, "qty": 1}]})
            )
        )
        in_flight.start()
        time.sleep(0.3)
        service.begin_stop()
        deadline = time.monotonic() + 10
        refused = False
        while not refused and time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", service.config.port), timeout=1).close()
                time.sleep(0.05)
            except ConnectionRefusedError:
                refused = True
        assert refused, "the service still accepts connections after SIGTERM"
        assert answers == []  # still waiting for the lock
        release.set()
        in_flight.join(10)
        holder.join(10)
        assert answers and answers[0][0] == 201
        assert service.stop(timeout=15) == 0
        assert session_members(service.pid) == []
    assert other_connections(postgres_url) == 0
