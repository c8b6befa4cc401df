"""The shop's integrity check against answers known in advance, on every engine: orders written
through the operation itself, then lost, changed or left alone behind dbladder's back."""

from __future__ import annotations

import asyncio

from dbladder.data.seeding import seed
from dbladder.engines import opened
from dbladder.load.acknowledged import AcknowledgedWrites
from dbladder.workloads import shop
from dbladder.workloads.shop.operations import _acknowledge_create

DATA = shop.dataset(products=200, orders=300, seed=5)
ORDERS = [(1 + n % 50, ((1 + n % 199, 1 + n % 3), (200 - n % 97, 2))) for n in range(40)]


async def _orders(engine) -> AcknowledgedWrites:
    """Seed, then create ORDERS through the shop's own operation, keeping what each acknowledged."""
    await seed(engine, shop.workload, DATA)
    store = AcknowledgedWrites()
    for customer, items in ORDERS:
        order_id, total = await shop.create_order(engine, customer, items)
        store.add("create", _acknowledge_create((customer, items), {"id": order_id, "total_cents": total}))
    return store


def test_every_acknowledged_order_is_found_and_the_books_balance(any_url):
    async def scenario():
        async with opened(any_url) as engine:
            store = await _orders(engine)
            before = await shop.workload.before_writes(engine)
            clean = await shop.workload.verify(engine, DATA, store.by_operation())
            # One more order nobody acknowledged (as if its answer was lost to a timeout).
            await shop.create_order(engine, 9, [(3, 1), (4, 1)])
            extra = await shop.workload.verify(engine, DATA, store.by_operation())
            return before, clean, extra

    before, clean, extra = asyncio.run(scenario())
    assert before["last_order"] == DATA.sizes["orders"] + len(ORDERS)
    assert len(before["stock"]) > 0  # the orders took stock of these products
    assert clean["acknowledged"] == clean["present"] == len(ORDERS)
    assert (clean["lost"], clean["corrupted"], clean["violations"]) == (0, 0, [])
    assert clean["unacknowledged_present"] == 0
    assert clean["rows_read"]["orders"] == len(ORDERS)
    assert extra["unacknowledged_present"] == 1 and extra["lost"] == 0 and extra["violations"] == []


def test_a_deleted_order_is_lost_and_a_changed_total_is_corrupted(any_url):
    async def scenario():
        async with opened(any_url) as engine:
            store = await _orders(engine)
            records = store.by_operation()["create"]
            gone, changed = records[3][0], records[7][0]
            async with engine.transaction() as session:
                await session.execute("DELETE FROM order_items WHERE order_id = ?", (gone,))
                await session.execute("DELETE FROM orders WHERE id = ?", (gone,))
                await session.execute(
                    "UPDATE orders SET total_cents = total_cents + 1 WHERE id = ?", (changed,)
                )
            return gone, changed, await shop.workload.verify(engine, DATA, {"create": records})

    gone, changed, report = asyncio.run(scenario())
    assert report["acknowledged"] == len(ORDERS) and report["present"] == len(ORDERS) - 1
    assert (report["lost"], report["lost_ids"]) == (1, [gone])
    assert (report["corrupted"], report["corrupted_ids"]) == (1, [changed])
    # The changed total no longer matches its items; the deleted order's two products lost stock
    # that no order accounts for.
    assert report["invariants"] == {
        "order_totals": 1,
        "orders_without_items": 0,
        "orphan_items": 0,
        "stock": 2,
    }
    assert len(report["violations"]) == 2


def test_changed_items_are_corrupted_even_when_the_total_still_adds_up(sqlite_url):
    async def scenario():
        async with opened(sqlite_url) as engine:
            store = await _orders(engine)
            records = store.by_operation()["create"]
            order_id, _, product, _, other, _ = records[0]
            stranger = next(p for p in range(1, 200) if p not in (product, other))
            async with engine.transaction() as session:
                # Another product on the same line, same quantity and price: the total still adds up.
                await session.execute(
                    "UPDATE order_items SET product_id = ? WHERE order_id = ? AND product_id = ?",
                    (stranger, order_id, product),
                )
            return await shop.workload.verify(engine, DATA, {"create": records})

    report = asyncio.run(scenario())
    assert (report["lost"], report["corrupted"]) == (0, 1)
    assert report["invariants"]["order_totals"] == 0
    # One product lost stock that no item accounts for, another has an item that took none.
    assert report["invariants"]["stock"] == 2


def test_an_id_acknowledged_twice_counts_the_order_it_no_longer_holds_as_lost(sqlite_url):
    async def scenario():
        async with opened(sqlite_url) as engine:
            store = await _orders(engine)
            first = store.by_operation()["create"][0]
            # As after a crash that lost order `first` and the id counter with it: another order,
            # acknowledged earlier, had been given the same id.
            store.add("create", (first[0], first[1] + 5, 1, 1, 2, 1))
            return await shop.workload.verify(engine, DATA, store.by_operation())

    report = asyncio.run(scenario())
    assert report["acknowledged"] == len(ORDERS) + 1
    assert (report["lost"], report["corrupted"], report["ids_reused"]) == (1, 0, 1)
    assert report["present"] == len(ORDERS)
