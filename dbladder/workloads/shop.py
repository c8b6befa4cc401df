"""The shop of seeds 000 and 001: products, orders and their items.

SQL is written once, with `?` placeholders; each engine rewrites and prepares it. Ids and
timestamps are plain integers so that the same rows are byte-identical on every engine.

Operations (what one request does):
  product_by_id      one row by primary key
  products_page      20 products of a category after an id (keyset pagination on (category, id))
  order_with_items   an order and its items
  create_order       one transaction: per item a stock update and a price read, then the order
                     insert and the item inserts - 7 statements for the seeds' 2 items. Items are
                     sorted by product id so every transaction takes row locks in the same order.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engines.base import Column, Engine, Index, Row, Schema, Table
from ..errors import InvalidConfig, OutOfStock, UnknownProduct

PAGE_SIZE = 20
CATEGORIES = 100
CUSTOMERS = 100_000
INITIAL_STOCK = 1_000_000  # enough that a long write ladder never runs a product out
FIRST_ORDER_AT = 1_700_000_000  # unix seconds of order 1; order n is n seconds later
MAX_ITEMS_PER_ORDER = 20

SCHEMA = Schema(
    tables=(
        Table(
            "products",
            (
                Column("id", "bigint"),
                Column("name", "text", max_length=64),
                Column("category", "text", max_length=32),
                Column("price_cents", "bigint"),
                Column("stock", "bigint"),
            ),
            primary_key=("id",),
        ),
        Table(
            "orders",
            (
                Column("id", "bigint", generated_id=True),
                Column("customer_id", "bigint"),
                Column("total_cents", "bigint"),
                Column("created_at", "bigint"),
            ),
            primary_key=("id",),
        ),
        Table(
            "order_items",
            (
                Column("order_id", "bigint"),
                Column("product_id", "bigint"),
                Column("qty", "int"),
                Column("price_cents", "bigint"),
            ),
            # The primary key starts with order_id, so it is also the index for "items by order".
            primary_key=("order_id", "product_id"),
        ),
    ),
    indexes=(Index("products_category_id", "products", ("category", "id")),),
)

PRODUCT_BY_ID = "SELECT id, name, category, price_cents, stock FROM products WHERE id = ?"
PRODUCTS_PAGE = (
    "SELECT id, name, category, price_cents, stock FROM products "
    f"WHERE category = ? AND id > ? ORDER BY id LIMIT {PAGE_SIZE}"
)
ORDER_BY_ID = "SELECT id, customer_id, total_cents, created_at FROM orders WHERE id = ?"
ORDER_ITEMS = "SELECT product_id, qty, price_cents FROM order_items WHERE order_id = ? ORDER BY product_id"
TAKE_STOCK = "UPDATE products SET stock = stock - ? WHERE id = ? AND stock >= ?"
PRICE = "SELECT price_cents FROM products WHERE id = ?"
INSERT_ORDER = "INSERT INTO orders (customer_id, total_cents, created_at) VALUES (?, ?, ?) RETURNING id"
INSERT_ITEM = "INSERT INTO order_items (order_id, product_id, qty, price_cents) VALUES (?, ?, ?, ?)"

PRODUCT_FIELDS = ("id", "name", "category", "price_cents", "stock")
ORDER_FIELDS = ("id", "customer_id", "total_cents", "created_at")
ITEM_FIELDS = ("product_id", "qty", "price_cents")


def category_name(number: int) -> str:
    return f"cat-{number:02d}"


# ---------------------------------------------------------------------------------------------
# Operations


async def product_by_id(engine: Engine, product_id: int) -> dict[str, Any] | None:
    async with engine.read() as session:
        row = await session.fetch_one(PRODUCT_BY_ID, (product_id,))
    return dict(zip(PRODUCT_FIELDS, row, strict=True)) if row else None


async def products_page(engine: Engine, category: str, after_id: int = 0) -> list[dict[str, Any]]:
    async with engine.read() as session:
        rows = await session.fetch_all(PRODUCTS_PAGE, (category, after_id))
    return [dict(zip(PRODUCT_FIELDS, row, strict=True)) for row in rows]


async def order_with_items(engine: Engine, order_id: int) -> dict[str, Any] | None:
    async with engine.read() as session:
        row = await session.fetch_one(ORDER_BY_ID, (order_id,))
        if row is None:
            return None
        items = await session.fetch_all(ORDER_ITEMS, (order_id,))
    order = dict(zip(ORDER_FIELDS, row, strict=True))
    order["items"] = [dict(zip(ITEM_FIELDS, item, strict=True)) for item in items]
    return order


async def create_order(engine: Engine, customer_id: int, items: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """Create an order from (product_id, qty) pairs; its (id, total_cents).

    Raises OutOfStock or UnknownProduct after rolling the whole transaction back. Callers validate
    input (distinct product ids, qty >= 1); this function trusts it.
    """
    ordered = sorted(items)
    async with engine.transaction() as session:
        prices = []
        for product_id, qty in ordered:
            if await session.execute(TAKE_STOCK, (qty, product_id, qty)) != 1:
                # Not updated: either no such product or not enough stock. The price read tells which.
                if await session.fetch_one(PRICE, (product_id,)) is None:
                    raise UnknownProduct(product_id)
                raise OutOfStock(product_id)
            price_row = await session.fetch_one(PRICE, (product_id,))
            prices.append(price_row[0])  # type: ignore[index]
        total = sum(qty * price for (_, qty), price in zip(ordered, prices, strict=True))
        id_row = await session.fetch_one(INSERT_ORDER, (customer_id, total, int(time.time())))
        order_id = int(id_row[0])  # type: ignore[index]
        for (product_id, qty), price in zip(ordered, prices, strict=True):
            await session.execute(INSERT_ITEM, (order_id, product_id, qty, price))
    return order_id, total


# ---------------------------------------------------------------------------------------------
# Seed data: deterministic from (seed, row number) alone, so any chunk can be made on its own and
# every engine receives identical rows. splitmix64 over the row number, vectorised with numpy;
# uint64 arithmetic wraps, which is what the hash wants.


@dataclass(frozen=True)
class SeedConfig:
    products: int = 100_000
    orders: int = 1_000_000
    seed: int = 1
    chunk_rows: int = 50_000

    def validate(self) -> list[str]:
        problems = []
        if not 2 <= self.products <= 100_000_000:
            problems.append(
                "products must be from 2 to 100,000,000 (an order has 2 distinct products), "
                f"not {self.products}"
            )
        if not 0 <= self.orders <= 1_000_000_000:
            problems.append(f"orders must be from 0 to 1,000,000,000, not {self.orders}")
        if not 0 <= self.seed < 2**63:
            problems.append(f"seed must be from 0 to 2**63-1, not {self.seed}")
        if not 1 <= self.chunk_rows <= 10_000_000:
            problems.append(f"chunk_rows must be from 1 to 10,000,000, not {self.chunk_rows}")
        return problems

    def checked(self) -> SeedConfig:
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self

    def planned_rows(self) -> dict[str, int]:
        return {"products": self.products, "orders": self.orders, "order_items": 2 * self.orders}


_MASK = (1 << 64) - 1
_STREAMS = {"category": 1, "price": 2, "customer": 3, "item_a": 4, "item_b": 5, "qty_a": 6, "qty_b": 7}


def _hash(seed: int, stream: str, index: np.ndarray) -> np.ndarray:
    offset = np.uint64((seed * 0x9E3779B97F4A7C15 + _STREAMS[stream] * 0xD1B54A32D192ED03) & _MASK)
    z = index.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) + offset
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _below(seed: int, stream: str, index: np.ndarray, bound: int) -> np.ndarray:
    """A value from 0 to bound-1 per index, as int64."""
    return (_hash(seed, stream, index) % np.uint64(bound)).astype(np.int64)


def product_prices(config: SeedConfig) -> np.ndarray:
    """price_cents of products 1..P, as an array indexed by id - 1."""
    ids = np.arange(1, config.products + 1, dtype=np.int64)
    return 100 + _below(config.seed, "price", ids, 99_901)


def product_rows(config: SeedConfig) -> Iterator[list[Row]]:
    """Chunks of product rows (id, name, category, price_cents, stock)."""
    prices = product_prices(config)
    for start in range(1, config.products + 1, config.chunk_rows):
        ids = np.arange(start, min(start + config.chunk_rows, config.products + 1), dtype=np.int64)
        categories = _below(config.seed, "category", ids, CATEGORIES)
        names = [
            f"category {c:02d} product {i}" for i, c in zip(ids.tolist(), categories.tolist(), strict=True)
        ]
        yield list(
            zip(
                ids.tolist(),
                names,
                [category_name(c) for c in categories.tolist()],
                prices[ids - 1].tolist(),
                [INITIAL_STOCK] * len(ids),
                strict=True,
            )
        )


def _items(config: SeedConfig, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The two items of each order: (first product, second product, first qty, second qty), sorted."""
    a = 1 + _below(config.seed, "item_a", ids, config.products)
    b = 1 + _below(config.seed, "item_b", ids, config.products - 1)
    b = b + (b >= a)  # distinct from a, still uniform over the other products
    low, high = np.minimum(a, b), np.maximum(a, b)
    qty_low = 1 + _below(config.seed, "qty_a", ids, 3)
    qty_high = 1 + _below(config.seed, "qty_b", ids, 3)
    return low, high, qty_low, qty_high


def _order_chunks(config: SeedConfig) -> Iterator[np.ndarray]:
    for start in range(1, config.orders + 1, config.chunk_rows):
        yield np.arange(start, min(start + config.chunk_rows, config.orders + 1), dtype=np.int64)


def order_rows(config: SeedConfig, prices: np.ndarray) -> Iterator[list[Row]]:
    """Chunks of order rows (id, customer_id, total_cents, created_at)."""
    for ids in _order_chunks(config):
        low, high, qty_low, qty_high = _items(config, ids)
        totals = qty_low * prices[low - 1] + qty_high * prices[high - 1]
        customers = 1 + _below(config.seed, "customer", ids, CUSTOMERS)
        yield list(
            zip(
                ids.tolist(),
                customers.tolist(),
                totals.tolist(),
                (FIRST_ORDER_AT + ids).tolist(),
                strict=True,
            )
        )


def item_rows(config: SeedConfig, prices: np.ndarray) -> Iterator[list[Row]]:
    """Chunks of order_items rows (order_id, product_id, qty, price_cents), two per order."""
    for ids in _order_chunks(config):
        low, high, qty_low, qty_high = _items(config, ids)
        columns = (
            np.column_stack((ids, ids)).ravel(),
            np.column_stack((low, high)).ravel(),
            np.column_stack((qty_low, qty_high)).ravel(),
            np.column_stack((prices[low - 1], prices[high - 1])).ravel(),
        )
        yield list(zip(*(c.tolist() for c in columns), strict=True))


def generate(config: SeedConfig) -> Iterator[tuple[Table, Iterator[list[Row]]]]:
    """(table, chunks of rows) for every table, in load order."""
    prices = product_prices(config)
    yield SCHEMA.table("products"), product_rows(config)
    yield SCHEMA.table("orders"), order_rows(config, prices)
    yield SCHEMA.table("order_items"), item_rows(config, prices)


# ---------------------------------------------------------------------------------------------


async def checksum(engine: Engine) -> dict[str, str]:
    """sha256 of every table's rows in primary-key order, rendered as text the same on every engine."""
    digests = {}
    async with engine.read() as session:
        for table in SCHEMA.tables:
            columns = ", ".join(table.column_names)
            order = ", ".join(table.primary_key)
            digest = hashlib.sha256()
            for row in await session.fetch_all(f"SELECT {columns} FROM {table.name} ORDER BY {order}"):
                digest.update(("\x1f".join(str(v) for v in row) + "\n").encode())
            digests[table.name] = digest.hexdigest()
    return digests


async def row_counts(engine: Engine) -> dict[str, int]:
    counts = {}
    async with engine.read() as session:
        for table in SCHEMA.tables:
            row = await session.fetch_one(f"SELECT count(*) FROM {table.name}")
            counts[table.name] = int(row[0]) if row else 0
    return counts
