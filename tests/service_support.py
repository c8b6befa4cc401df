"""Helpers for the service tests: seed a database, change stock, talk HTTP on one kept-alive connection."""

from __future__ import annotations

import asyncio
import http.client
import json
from pathlib import Path
from typing import Any

from dbladder.data.seeding import seed_shop
from dbladder.engines import EngineOptions, opened
from dbladder.workloads import shop

PRODUCTS = 3000  # about 30 per category: more than one page
ORDERS = 2000
SEED = shop.SeedConfig(products=PRODUCTS, orders=ORDERS, seed=3)


def seed(url: str, config: shop.SeedConfig = SEED) -> None:
    async def run() -> None:
        async with opened(url, EngineOptions(pool_size=2)) as engine:
            await seed_shop(engine, config)

    asyncio.run(run())


def set_stock(url: str, product_ids: list[int], stock: int) -> None:
    async def run() -> None:
        async with opened(url, EngineOptions(pool_size=1)) as engine, engine.transaction() as session:
            for product_id in product_ids:
                await session.execute("UPDATE products SET stock = ? WHERE id = ?", (stock, product_id))

    asyncio.run(run())


def product(url: str, product_id: int) -> dict[str, Any] | None:
    async def run() -> dict[str, Any] | None:
        async with opened(url, EngineOptions(pool_size=1)) as engine:
            return await shop.product_by_id(engine, product_id)

    return asyncio.run(run())


class Client:
    """One kept-alive HTTP/1.1 connection; answers are (status, decoded JSON or None)."""

    def __init__(self, port: int, timeout: float = 15.0):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)

    def call(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any, http.client.HTTPResponse]:
        payload = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
        self.connection.request(method, path, body=payload, headers=headers or {})
        response = self.connection.getresponse()
        raw = response.read()
        if response.will_close:
            self.connection.close()
        return response.status, json.loads(raw) if raw else None, response

    def get(self, path: str) -> tuple[int, Any]:
        status, body, _ = self.call("GET", path)
        return status, body

    def post(self, path: str, body: Any) -> tuple[int, Any]:
        status, body, _ = self.call("POST", path, body)
        return status, body

    def close(self) -> None:
        self.connection.close()


def rss_bytes(pids: list[int]) -> int:
    """Resident memory of the processes, from /proc."""
    total = 0
    for pid in pids:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) * 1024
    return total
