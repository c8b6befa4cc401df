"""What a client can send to the shop, checked before the database sees it.

Bodies are decoded by msgspec straight into Structs that forbid unknown fields and bound every
number, so a wrong type, a missing or extra field, or an out-of-range value fails in the decoder
with a message that names the place (`... - at $.items[0].qty`). Every failure raises
InvalidRequest, which the service answers with 400.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from ...errors import InvalidRequest
from ..parsing import MAX_ID, decode_body, parse_id, parse_query
from .schema import CATEGORY_LENGTH, MAX_ITEMS_PER_ORDER

# Bounds one order line; with at most MAX_ITEMS_PER_ORDER lines and prices below 10^5 cents the
# total stays far below 2^63.
MAX_QTY = 1_000

Id = Annotated[int, msgspec.Meta(ge=1, le=MAX_ID)]
Quantity = Annotated[int, msgspec.Meta(ge=1, le=MAX_QTY)]


class OrderItem(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    product_id: Id
    qty: Quantity


class NewOrder(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """The body of `POST /orders`."""

    customer_id: Id
    items: Annotated[list[OrderItem], msgspec.Meta(min_length=1, max_length=MAX_ITEMS_PER_ORDER)]


_order_decoder = msgspec.json.Decoder(NewOrder)


def parse_new_order(body: bytes) -> tuple[int, list[tuple[int, int]]]:
    """(customer_id, [(product_id, qty), ...]) from a `POST /orders` body, or InvalidRequest.

    A product may appear once per order: a repeated product id is rejected rather than merged,
    so that the qty bound holds for what is actually taken from stock and the client learns of
    its mistake.
    """
    order = decode_body(body, _order_decoder, "order")
    items = [(item.product_id, item.qty) for item in order.items]
    seen: set[int] = set()
    for product_id, _ in items:
        if product_id in seen:
            raise InvalidRequest(
                f"product {product_id} appears in more than one item; "
                "send one item per product with the total qty"
            )
        seen.add(product_id)
    return order.customer_id, items


PAGE_PARAMETERS = ("category", "after")


def parse_page_query(query: str) -> tuple[str, int]:
    """(category, after_id) from `category=C&after=ID`; `after` defaults to 0 (the first page)."""
    values = parse_query(query, PAGE_PARAMETERS)
    category = values.get("category")
    if category is None:
        raise InvalidRequest("the query parameter category is required, e.g. /products?category=cat-01")
    if not 1 <= len(category) <= CATEGORY_LENGTH or not category.isprintable():
        raise InvalidRequest(f"category must be 1 to {CATEGORY_LENGTH} printable characters")
    after = values.get("after")
    if after is None or after == "0":
        return category, 0
    return category, parse_id(after, "after")
