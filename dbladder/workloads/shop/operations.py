"""What one request to the shop does: the four operations, on any engine.

  product   one row by primary key                               GET /products/{id}
  page      20 products of a category after an id (keyset        GET /products?category=C&after=ID
            pagination on (category, id))
  order     an order and its items                               GET /orders/{id}
  create    one transaction: per item a stock update and a       POST /orders
            price read, then the order insert and the item
            inserts - 7 statements for the posts' 2 items. Items
            are sorted by product id so every transaction takes
            row locks in the same order.

Reads split as "Postgres vs MariaDB on two dedicated CPUs" does: 50 % a product by id, 30 % a page
of a category, 20 % an order with its items. Ids are uniform over the seeded rows, so every engine
sees the same spread of hot and cold pages.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from ...engines.base import Engine
from ...errors import Conflict
from ..base import Answer, Args, Draw, HttpRequest, Operation, Sizes
from ..parsing import not_found, parse_id
from . import validation
from .schema import (
    CATEGORIES,
    CUSTOMERS,
    INSERT_ITEM,
    INSERT_ORDER,
    ORDER_BY_ID,
    ORDER_ITEMS,
    PAGE_SIZE,
    PRICE,
    PRODUCT_BY_ID,
    PRODUCTS_PAGE,
    TAKE_STOCK,
    category_name,
)


class OutOfStock(Conflict):
    """An order asked for more of a product than is in stock; the transaction was rolled back."""

    def __init__(self, product_id: int):
        super().__init__("out_of_stock", f"not enough stock for product {product_id}", product_id=product_id)
        self.product_id = product_id


class UnknownProduct(Conflict):
    """An order named a product id that does not exist; the transaction was rolled back."""

    def __init__(self, product_id: int):
        super().__init__("unknown_product", f"no product with id {product_id}", product_id=product_id)
        self.product_id = product_id


# ---------------------------------------------------------------------------------------------
# The operations as functions of an engine (what the routes, the direct target and tests call)


async def product_by_id(engine: Engine, product_id: int) -> dict[str, Any] | None:
    async with engine.read() as session:
        row = await session.fetch_one(PRODUCT_BY_ID, (product_id,))
    return _product(row) if row else None


async def products_page(engine: Engine, category: str, after_id: int = 0) -> list[dict[str, Any]]:
    async with engine.read() as session:
        rows = await session.fetch_all(PRODUCTS_PAGE, (category, after_id))
    return [_product(row) for row in rows]


async def order_with_items(engine: Engine, order_id: int) -> dict[str, Any] | None:
    async with engine.read() as session:
        row = await session.fetch_one(ORDER_BY_ID, (order_id,))
        if row is None:
            return None
        items = await session.fetch_all(ORDER_ITEMS, (order_id,))
    order_id, customer_id, total_cents, created_at = row
    return {
        "id": order_id,
        "customer_id": customer_id,
        "total_cents": total_cents,
        "created_at": created_at,
        "items": [
            {"product_id": product_id, "qty": qty, "price_cents": price} for product_id, qty, price in items
        ],
    }


def _product(row: Sequence[Any]) -> dict[str, Any]:
    """A product row as its answer, keys in PRODUCT_FIELDS order.

    Written out rather than dict(zip(PRODUCT_FIELDS, row, strict=True)): 3.0 against 13.4 us for a
    page of 20 rows, which was a fifth of a direct-mode request on SQLite (docs/direct.md).
    tests/workloads/test_shop.py checks the keys against PRODUCT_FIELDS, ORDER_FIELDS, ITEM_FIELDS.
    """
    product_id, name, category, price_cents, stock = row
    return {"id": product_id, "name": name, "category": category, "price_cents": price_cents, "stock": stock}


async def create_order(engine: Engine, customer_id: int, items: Sequence[Sequence[int]]) -> tuple[int, int]:
    """Create an order from (product_id, qty) pairs; its (id, total_cents).

    Raises OutOfStock or UnknownProduct after rolling the whole transaction back. Callers validate
    input (distinct product ids, qty >= 1); this function trusts it.
    """
    ordered = sorted((int(product_id), int(qty)) for product_id, qty in items)
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
# product: GET /products/{id}


async def _run_product(engine: Engine, args: Args) -> Answer:
    found = await product_by_id(engine, args[0])
    return (
        Answer(200, found) if found is not None else Answer(404, not_found(f"no product with id {args[0]}"))
    )


def _parse_product(request: HttpRequest) -> Args:
    return (parse_id(request.params["id"], "product id"),)


def _draw_product(draw: Draw, sizes: Sizes) -> Args:
    return (draw.id(sizes["products"]),)


def _render_product(args: Args) -> tuple[str, bytes | None]:
    return f"/products/{args[0]}", None


# ---------------------------------------------------------------------------------------------
# page: GET /products?category=C&after=ID


async def _run_page(engine: Engine, args: Args) -> Answer:
    products = await products_page(engine, args[0], args[1])
    next_after = products[-1]["id"] if len(products) == PAGE_SIZE else None
    return Answer(200, {"products": products, "next_after": next_after})


def _parse_page(request: HttpRequest) -> Args:
    return validation.parse_page_query(request.query)


def _draw_page(draw: Draw, sizes: Sizes) -> Args:
    return (category_name(draw.below(CATEGORIES)), draw.below(sizes["products"] + 1))


@functools.lru_cache(maxsize=CATEGORIES)
def _quoted(category: str) -> str:
    return quote(category, safe="")


def _render_page(args: Args) -> tuple[str, bytes | None]:
    return f"/products?category={_quoted(args[0])}&after={args[1]}", None


# ---------------------------------------------------------------------------------------------
# order: GET /orders/{id}


async def _run_order(engine: Engine, args: Args) -> Answer:
    found = await order_with_items(engine, args[0])
    return Answer(200, found) if found is not None else Answer(404, not_found(f"no order with id {args[0]}"))


def _parse_order(request: HttpRequest) -> Args:
    return (parse_id(request.params["id"], "order id"),)


def _draw_order(draw: Draw, sizes: Sizes) -> Args:
    return (draw.id(sizes["orders"]),)


def _render_order(args: Args) -> tuple[str, bytes | None]:
    return f"/orders/{args[0]}", None


# ---------------------------------------------------------------------------------------------
# create: POST /orders


async def _run_create(engine: Engine, args: Args) -> Answer:
    order_id, total = await create_order(engine, args[0], args[1])
    return Answer(201, {"id": order_id, "total_cents": total})


def _parse_create(request: HttpRequest) -> Args:
    customer_id, items = validation.parse_new_order(request.body)
    return customer_id, tuple(items)


def _draw_create(draw: Draw, sizes: Sizes) -> Args:
    products = sizes["products"]
    first = draw.id(products)
    # Uniform over the other products: draw from P - 1 and skip over `first`.
    second = draw.id(products - 1)
    items = ((first, 1), (second + 1, 1)) if second >= first else ((second, 1), (first, 1))
    return draw.id(CUSTOMERS), items


def _render_create(args: Args) -> tuple[str, bytes | None]:
    customer_id, items = args
    body = b'{"customer_id":%d,"items":[%b]}' % (
        customer_id,
        b",".join(b'{"product_id":%d,"qty":%d}' % (product_id, qty) for product_id, qty in items),
    )
    return "/orders", body


def _acknowledge_create(args: Args, body: Any) -> tuple[Any, ...]:
    """What the integrity check needs of an acknowledged order, flat so that it packs into 8 bytes a
    number (`load.acknowledged`): its id, its total, then each item's product id and quantity."""
    return (int(body["id"]), int(body["total_cents"]), *(int(v) for item in args[1] for v in item))


OPERATIONS = (
    Operation(
        "product",
        "GET",
        "/products/{id}",
        False,
        0.4,
        _run_product,
        _parse_product,
        _draw_product,
        _render_product,
        statements=(PRODUCT_BY_ID,),
        description="one product by id",
    ),
    Operation(
        "page",
        "GET",
        "/products",
        False,
        0.24,
        _run_page,
        _parse_page,
        _draw_page,
        _render_page,
        statements=(PRODUCTS_PAGE,),
        description="20 products of a category after an id",
    ),
    Operation(
        "order",
        "GET",
        "/orders/{id}",
        False,
        0.16,
        _run_order,
        _parse_order,
        _draw_order,
        _render_order,
        statements=(ORDER_BY_ID, ORDER_ITEMS),
        description="an order with its items",
    ),
    Operation(
        "create",
        "POST",
        "/orders",
        True,
        0.2,
        _run_create,
        _parse_create,
        _draw_create,
        _render_create,
        statements=(TAKE_STOCK, PRICE, INSERT_ORDER, INSERT_ITEM),
        acknowledge=_acknowledge_create,
        description="an order of two products: 7 statements in one transaction",
    ),
)
