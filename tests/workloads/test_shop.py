"""Shop operations and seeding, on every engine."""

import asyncio
from contextlib import asynccontextmanager

import pytest

from dbladder.data.seeding import checksum, row_counts, seed
from dbladder.engines import opened
from dbladder.workloads import shop
from dbladder.workloads.shop import OutOfStock, UnknownProduct, schema
from dbladder.workloads.shop.data import generate

SMALL = shop.dataset(products=1000, orders=5000, seed=7)
PAGED = shop.dataset(products=3000, orders=100, seed=7)


def run(coroutine):
    return asyncio.run(coroutine)


def test_seed_creates_exact_counts_and_reseeding_replaces(any_url):
    async def scenario():
        async with opened(any_url) as engine:
            report = await seed(engine, shop.workload, SMALL)
            first = await row_counts(engine, shop.SCHEMA)
            await shop.create_order(engine, 1, [(1, 1)])
            await seed(engine, shop.workload, shop.dataset(products=50, orders=10, seed=7))
            second = await row_counts(engine, shop.SCHEMA)
            return report, first, second

    report, first, second = run(scenario())
    assert first == {"products": 1000, "orders": 5000, "order_items": 10000}
    assert {t.table: t.rows for t in report.tables} == first
    assert second == {"products": 50, "orders": 10, "order_items": 20}


def test_operations_read_what_was_seeded(any_url):
    async def scenario():
        async with opened(any_url) as engine:
            await seed(engine, shop.workload, PAGED)
            product = await shop.product_by_id(engine, 5)
            absent = await shop.product_by_id(engine, 3001)
            page = await shop.products_page(engine, product["category"], 0)
            next_page = await shop.products_page(engine, product["category"], page[-1]["id"])
            order = await shop.order_with_items(engine, 77)
            no_order = await shop.order_with_items(engine, 101)
            return product, absent, page, next_page, order, no_order

    product, absent, page, next_page, order, no_order = run(scenario())
    # The answers are written out key by key for speed; they must keep the schema's fields, in order.
    assert tuple(product) == schema.PRODUCT_FIELDS and all(tuple(p) == schema.PRODUCT_FIELDS for p in page)
    assert tuple(order) == (*schema.ORDER_FIELDS, "items") and order["id"] == 77
    assert order["items"] and all(tuple(item) == schema.ITEM_FIELDS for item in order["items"])
    assert product["id"] == 5 and product["stock"] == shop.INITIAL_STOCK and product["price_cents"] >= 100
    assert absent is None and no_order is None
    in_category = [
        row[0]
        for chunk in shop.product_rows(shop.ShopData(products=3000, orders=100, seed=7))
        for row in chunk
        if row[2] == product["category"]
    ]
    assert [p["id"] for p in page] == in_category[: shop.PAGE_SIZE]
    assert [p["id"] for p in next_page] == in_category[len(page) : len(page) + shop.PAGE_SIZE]
    assert len(order["items"]) == 2
    assert order["total_cents"] == sum(i["qty"] * i["price_cents"] for i in order["items"])
    assert order["items"][0]["product_id"] < order["items"][1]["product_id"]


class CountingEngine:
    """The real engine, with every statement inside a transaction counted."""

    def __init__(self, engine):
        self.engine = engine
        self.statements = []

    def read(self):
        return self.engine.read()

    @asynccontextmanager
    async def transaction(self):
        async with self.engine.transaction() as session:
            outer = self

            class Counting:
                async def fetch_one(self, sql, args=()):
                    outer.statements.append(sql)
                    return await session.fetch_one(sql, args)

                async def fetch_all(self, sql, args=()):
                    outer.statements.append(sql)
                    return await session.fetch_all(sql, args)

                async def execute(self, sql, args=()):
                    outer.statements.append(sql)
                    return await session.execute(sql, args)

            yield Counting()


def test_create_order_is_seven_statements_in_product_order(any_url):
    async def scenario():
        async with opened(any_url) as engine:
            await seed(engine, shop.workload, SMALL)
            before = {p: (await shop.product_by_id(engine, p))["stock"] for p in (3, 9)}
            counting = CountingEngine(engine)
            order_id, total = await shop.create_order(counting, 42, [(9, 2), (3, 1)])
            after = {p: (await shop.product_by_id(engine, p))["stock"] for p in (3, 9)}
            order = await shop.order_with_items(engine, order_id)
            return counting.statements, before, after, order, order_id, total

    statements, before, after, order, order_id, total = run(scenario())
    assert statements == [
        schema.TAKE_STOCK,
        schema.PRICE,
        schema.TAKE_STOCK,
        schema.PRICE,
        schema.INSERT_ORDER,
        schema.INSERT_ITEM,
        schema.INSERT_ITEM,
    ]
    assert order_id == 5001
    assert after == {3: before[3] - 1, 9: before[9] - 2}
    assert order["customer_id"] == 42 and order["total_cents"] == total
    assert [(i["product_id"], i["qty"]) for i in order["items"]] == [(3, 1), (9, 2)]


def test_an_order_that_fails_on_its_second_item_changes_nothing(any_url):
    async def scenario():
        async with opened(any_url) as engine:
            await seed(engine, shop.workload, SMALL)
            async with engine.transaction() as session:
                await session.execute("UPDATE products SET stock = 1 WHERE id = ?", (8,))
            before_counts = await row_counts(engine, shop.SCHEMA)
            with pytest.raises(OutOfStock) as out_of_stock:
                await shop.create_order(engine, 1, [(2, 1), (8, 5)])
            with pytest.raises(UnknownProduct) as unknown:
                await shop.create_order(engine, 1, [(2, 1), (999_999, 1)])
            stock = [(await shop.product_by_id(engine, p))["stock"] for p in (2, 8)]
            return (
                before_counts,
                await row_counts(engine, shop.SCHEMA),
                stock,
                out_of_stock.value,
                unknown.value,
            )

    before_counts, after_counts, stock, out_of_stock, unknown = run(scenario())
    assert before_counts == after_counts
    assert stock == [shop.INITIAL_STOCK, 1], "the first item's stock update must be rolled back"
    assert out_of_stock.product_id == 8 and unknown.product_id == 999_999


def test_concurrent_orders_never_oversell(any_url):
    async def scenario():
        async with opened(any_url) as engine:
            await seed(engine, shop.workload, SMALL)
            async with engine.transaction() as session:
                await session.execute("UPDATE products SET stock = 10 WHERE id IN (?, ?)", (4, 6))

            async def buy(customer):
                try:
                    return await shop.create_order(engine, customer, [(4, 1), (6, 1)])
                except OutOfStock:
                    return None

            results = await asyncio.gather(*(buy(c) for c in range(1, 21)))
            orders = [await shop.order_with_items(engine, r[0]) for r in results if r]
            stock = [(await shop.product_by_id(engine, p))["stock"] for p in (4, 6)]
            return results, orders, stock

    results, orders, stock = run(scenario())
    assert stock == [0, 0]
    assert sum(r is not None for r in results) == 10
    assert all([i["product_id"] for i in o["items"]] == [4, 6] for o in orders)


def test_same_seed_gives_identical_rows_on_every_engine(sqlite_url, postgres_url, mariadb_url):
    async def digest(url):
        async with opened(url) as engine:
            await seed(engine, shop.workload, SMALL)
            return await checksum(engine, shop.SCHEMA)

    digests = [run(digest(url)) for url in (sqlite_url, postgres_url, mariadb_url)]
    assert digests[0] == digests[1] == digests[2]
    assert set(digests[0]) == {"products", "orders", "order_items"}


def test_a_different_seed_gives_different_rows(sqlite_url):
    async def digest(config):
        async with opened(sqlite_url) as engine:
            await seed(engine, shop.workload, config)
            return await checksum(engine, shop.SCHEMA)

    assert run(digest(SMALL)) != run(digest(shop.dataset(products=1000, orders=5000, seed=8)))


def test_generation_does_not_depend_on_chunk_size():
    small = shop.ShopData(products=100, orders=300, seed=3, chunk_rows=7)
    large = shop.ShopData(products=100, orders=300, seed=3, chunk_rows=1000)
    for (_, a), (_, b) in zip(generate(small), generate(large), strict=True):
        assert [row for chunk in a for row in chunk] == [row for chunk in b for row in chunk]
