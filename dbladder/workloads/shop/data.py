"""The shop's data set: deterministic from (seed, row number) alone.

Any chunk can be made on its own and every engine receives identical rows: splitmix64 over the
row number, vectorised with numpy; uint64 arithmetic wraps, which is what the hash wants. Stock
starts at INITIAL_STOCK for every product whatever the seeded orders took, so after a run the
stock a product lost is exactly what the run's acknowledged orders took (the integrity check).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ...engines.base import Row, Table
from .. import hashing
from .schema import CATEGORIES, CUSTOMERS, FIRST_ORDER_AT, INITIAL_STOCK, SCHEMA, category_name

CHUNK_ROWS = 50_000


@dataclass(frozen=True)
class ShopData:
    """The size of a shop data set and its seed."""

    products: int = 100_000
    orders: int = 1_000_000
    seed: int = 1
    chunk_rows: int = CHUNK_ROWS


_STREAMS = {"category": 1, "price": 2, "customer": 3, "item_a": 4, "item_b": 5, "qty_a": 6, "qty_b": 7}


def _below(seed: int, stream: str, index: np.ndarray, bound: int) -> np.ndarray:
    """A value from 0 to bound-1 per index, as int64."""
    return hashing.below(seed, _STREAMS[stream], index, bound)


def product_prices(config: ShopData) -> np.ndarray:
    """price_cents of products 1..P, as an array indexed by id - 1."""
    ids = np.arange(1, config.products + 1, dtype=np.int64)
    return 100 + _below(config.seed, "price", ids, 99_901)


def product_rows(config: ShopData) -> Iterator[list[Row]]:
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


def _items(config: ShopData, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The two items of each order: (first product, second product, first qty, second qty), sorted."""
    a = 1 + _below(config.seed, "item_a", ids, config.products)
    b = 1 + _below(config.seed, "item_b", ids, config.products - 1)
    b = b + (b >= a)  # distinct from a, still uniform over the other products
    low, high = np.minimum(a, b), np.maximum(a, b)
    qty_low = 1 + _below(config.seed, "qty_a", ids, 3)
    qty_high = 1 + _below(config.seed, "qty_b", ids, 3)
    return low, high, qty_low, qty_high


def _order_chunks(config: ShopData) -> Iterator[np.ndarray]:
    for start in range(1, config.orders + 1, config.chunk_rows):
        yield np.arange(start, min(start + config.chunk_rows, config.orders + 1), dtype=np.int64)


def order_rows(config: ShopData, prices: np.ndarray) -> Iterator[list[Row]]:
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


def item_rows(config: ShopData, prices: np.ndarray) -> Iterator[list[Row]]:
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


def generate(config: ShopData) -> Iterator[tuple[Table, Iterator[list[Row]]]]:
    """(table, chunks of rows) for every table, in load order."""
    prices = product_prices(config)
    yield SCHEMA.table("products"), product_rows(config)
    yield SCHEMA.table("orders"), order_rows(config, prices)
    yield SCHEMA.table("order_items"), item_rows(config, prices)
