"""How long does the integrity check take after a long write ladder?

    .venv/bin/python benchmarks/integrity.py URL [URL ...] [--new-orders 630000] [--seeded 100000]

For each database: the shop seeded (100,000 products, --seeded orders), then --new-orders orders
added as a run would leave them (two items each, stock taken, ids after the seeded ones: 630,000
is the `write` preset climbing all 20 levels), all of them acknowledged; then the check a run makes
after its load (`dbladder.run.integrity.check_integrity`): every acknowledged order looked up with
its total and items, every new order's total against its items, every product's stock against
the quantities ordered. Prints the seconds the check took, the rows it read, and its verdict,
which must be nothing lost and no violation.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

import numpy as np

from dbladder.data.seeding import seed
from dbladder.engines import opened
from dbladder.engines.base import EngineOptions
from dbladder.load.acknowledged import AcknowledgedWrites
from dbladder.run.integrity import check_integrity
from dbladder.workloads import shop
from dbladder.workloads.shop.schema import FIRST_ORDER_AT, SCHEMA

CHUNK = 50_000


async def prepare(url: str, seeded: int, new_orders: int) -> tuple[Any, ...]:
    """Seed, add the new orders as a run would, and return (their records, before_writes, seconds)."""
    data = shop.dataset(products=100_000, orders=seeded, seed=1)
    began = time.perf_counter()
    async with opened(url, EngineOptions(pool_size=2)) as engine:
        await seed(engine, shop.workload, data)
        before = await shop.workload.before_writes(engine)
        async with engine.read() as session:
            products = np.array(
                await session.fetch_all(
                    "SELECT id, name, category, price_cents, stock FROM products ORDER BY id"
                ),
                dtype=object,
            )
        prices = products[:, 3].astype(np.int64)
        random = np.random.default_rng(7)
        first = random.integers(1, 100_001, new_orders)
        second = (first + random.integers(1, 100_000, new_orders) - 1) % 100_000 + 1
        low, high = np.minimum(first, second), np.maximum(first, second)
        qty_low, qty_high = random.integers(1, 4, new_orders), random.integers(1, 4, new_orders)
        ids = np.arange(seeded + 1, seeded + new_orders + 1)
        totals = qty_low * prices[low - 1] + qty_high * prices[high - 1]
        store = AcknowledgedWrites()
        for row in zip(
            ids.tolist(),
            totals.tolist(),
            low.tolist(),
            qty_low.tolist(),
            high.tolist(),
            qty_high.tolist(),
            strict=True,
        ):
            store.add("create", row)
        for start in range(0, new_orders, CHUNK):
            part = slice(start, start + CHUNK)
            await engine.bulk_load(
                SCHEMA.table("orders"),
                zip(
                    ids[part].tolist(),
                    [1] * len(ids[part]),
                    totals[part].tolist(),
                    (FIRST_ORDER_AT + ids[part]).tolist(),
                    strict=True,
                ),
            )
            items = []
            for order, a, qa, b, qb in zip(
                ids[part].tolist(),
                low[part].tolist(),
                qty_low[part].tolist(),
                high[part].tolist(),
                qty_high[part].tolist(),
                strict=True,
            ):
                items.append((order, a, qa, int(prices[a - 1])))
                items.append((order, b, qb, int(prices[b - 1])))
            await engine.bulk_load(SCHEMA.table("order_items"), items)
        taken = np.zeros(100_001, dtype=np.int64)
        np.add.at(taken, low, qty_low)
        np.add.at(taken, high, qty_high)
        stock = products[:, 4].astype(np.int64) - taken[1:]
        async with engine.transaction() as session:
            await session.execute("DELETE FROM products")
        rows = [(int(p[0]), p[1], p[2], int(p[3]), int(s)) for p, s in zip(products, stock, strict=True)]
        await engine.bulk_load(SCHEMA.table("products"), rows)
        info = await engine.describe()
    return store, before, time.perf_counter() - began, info, data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("urls", nargs="+")
    parser.add_argument("--new-orders", type=int, default=630_000)
    parser.add_argument("--seeded", type=int, default=100_000)
    options = parser.parse_args()
    for url in options.urls:
        store, before, setup, info, data = asyncio.run(prepare(url, options.seeded, options.new_orders))
        report = check_integrity(url, shop.workload, data, store, before, info)
        print(
            f"{info.engine:<10} {options.new_orders:,} new orders (set up in {setup:.0f} s): check "
            f"{report['seconds']:.2f} s, read {report['rows_read']}; "
            f"acknowledged {report['acknowledged']:,}, "
            f"present {report['present']:,}, lost {report['lost']}, corrupted {report['corrupted']}, "
            f"violations {len(report['violations'])}"
        )


if __name__ == "__main__":
    main()
