"""The shop of "Postgres vs SQLite under load" and "Postgres vs MariaDB on two dedicated CPUs" (db-wars).

Products, orders and their items; four operations (a product, a page of a category, an order with
its items, and an order of two products written in one transaction of 7 statements). Its rounds
are the posts' own, with their exact parameters (`presets.py`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ...engines.base import Engine, Row, Table
from ..base import DataSpec, Workload
from . import integrity
from .data import ShopData, generate, product_rows
from .operations import (
    OPERATIONS,
    OutOfStock,
    UnknownProduct,
    create_order,
    order_with_items,
    product_by_id,
    products_page,
)
from .presets import PRESETS
from .schema import INITIAL_STOCK, MAX_ITEMS_PER_ORDER, PAGE_SIZE, SCHEMA

__all__ = [
    "INITIAL_STOCK",
    "MAX_ITEMS_PER_ORDER",
    "PAGE_SIZE",
    "SCHEMA",
    "OutOfStock",
    "Shop",
    "ShopData",
    "UnknownProduct",
    "create_order",
    "dataset",
    "order_with_items",
    "product_by_id",
    "product_rows",
    "products_page",
    "workload",
]


class Shop(Workload):
    name = "shop"
    description = "the db-wars shop: products, orders, order items; an order is a 7-statement transaction"
    schema = SCHEMA
    sizes = MappingProxyType({"products": 100_000, "orders": 1_000_000})
    operations = OPERATIONS
    presets = PRESETS
    source = "built-in"

    def generate(self, data: DataSpec) -> Iterator[tuple[Table, Iterator[list[Row]]]]:
        return generate(
            ShopData(products=data.sizes["products"], orders=data.sizes["orders"], seed=data.seed)
        )

    def planned_rows(self, sizes: dict[str, int]) -> dict[str, int]:  # type: ignore[override]
        return {"products": sizes["products"], "orders": sizes["orders"], "order_items": 2 * sizes["orders"]}

    def validate_sizes(self, sizes: dict[str, int]) -> list[str]:  # type: ignore[override]
        problems = super().validate_sizes(sizes)
        if sizes.get("products", 2) < 2:
            problems.append("products must be at least 2: an order has two distinct products")
        return problems

    async def before_writes(self, engine: Engine) -> dict[str, Any]:
        return await integrity.before_writes(engine)

    async def verify(
        self,
        engine: Engine,
        data: DataSpec,
        acknowledged: Mapping[str, Sequence[tuple[Any, ...]]],
        before: Any = None,
    ) -> dict[str, Any]:
        """Every acknowledged order present with its total and items; every new order's total is the
        sum of its items; every product's stock went down by exactly what was ordered
        (`integrity.py`)."""
        return await integrity.verify(engine, data, acknowledged, before)


workload = Shop()


def dataset(products: int = 100_000, orders: int = 1_000_000, seed: int = 1) -> DataSpec:
    """A shop data set of these sizes."""
    return DataSpec(seed, {"products": products, "orders": orders})
