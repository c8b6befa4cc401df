"""Everything a client can send, checked before the database sees it.

Bodies are decoded by msgspec straight into Structs that forbid unknown fields and bound every
number, so a wrong type, a missing or extra field, or an out-of-range value fails in the decoder
with a message that names the place (`... - at $.items[0].qty`). Path and query values are checked
by the small parsers below. Every failure raises InvalidRequest, which the app answers with 400.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import parse_qsl

import msgspec

from ..errors import InvalidRequest
from ..workloads import shop

# Ids are positive 63-bit integers: the largest value a BIGINT holds on every engine.
MAX_ID = 2**63 - 1
# Bounds one order line; with at most MAX_ITEMS_PER_ORDER lines and prices below 10^5 cents the
# total stays far below 2^63.
MAX_QTY = 1_000
# The largest order is about 1 kB of JSON; 16 kB leaves room for whitespace and nothing else.
MAX_BODY_BYTES = 16_384
# Categories are stored in a column bounded at 32 characters (MariaDB VARCHAR(32)).
MAX_CATEGORY_LENGTH = shop.SCHEMA.table("products").columns[2].max_length

Id = Annotated[int, msgspec.Meta(ge=1, le=MAX_ID)]
Quantity = Annotated[int, msgspec.Meta(ge=1, le=MAX_QTY)]


class OrderItem(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    product_id: Id
    qty: Quantity


class NewOrder(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """The body of `POST /orders`."""

    customer_id: Id
    items: Annotated[list[OrderItem], msgspec.Meta(min_length=1, max_length=shop.MAX_ITEMS_PER_ORDER)]


_order_decoder = msgspec.json.Decoder(NewOrder)


def parse_new_order(body: bytes) -> tuple[int, list[tuple[int, int]]]:
    """(customer_id, [(product_id, qty), ...]) from a `POST /orders` body, or InvalidRequest.

    A product may appear once per order: a repeated product id is rejected rather than merged,
    so that the qty bound holds for what is actually taken from stock and the client learns of
    its mistake.
    """
    if len(body) > MAX_BODY_BYTES:
        raise InvalidRequest(f"the body is larger than {MAX_BODY_BYTES} bytes")
    try:
        order = _order_decoder.decode(body)
    except msgspec.ValidationError as exc:
        raise InvalidRequest(f"invalid order: {exc}") from None
    except msgspec.DecodeError as exc:
        raise InvalidRequest(f"the body is not valid JSON: {exc}") from None
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


def parse_id(text: str, what: str) -> int:
    """A path segment as a positive 63-bit id, or InvalidRequest naming `what`."""
    # isascii() first: str.isdigit() also accepts digits such as '²' that int() refuses.
    if not (text.isascii() and text.isdigit() and len(text) <= 19):
        raise InvalidRequest(f"{what} must be a whole number from 1 to {MAX_ID}, not {text[:40]!r}")
    value = int(text)
    if not 1 <= value <= MAX_ID:
        raise InvalidRequest(f"{what} must be a whole number from 1 to {MAX_ID}, not {text[:40]!r}")
    return value


PAGE_PARAMETERS = ("category", "after")


def parse_page_query(query: str) -> tuple[str, int]:
    """(category, after_id) from `category=C&after=ID`; `after` defaults to 0 (the first page)."""
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query), max_num_fields=2)
    except ValueError:
        raise InvalidRequest(
            "the query must be category=NAME with an optional &after=ID, and nothing else"
        ) from None
    values: dict[str, str] = {}
    for key, value in pairs:
        if key not in PAGE_PARAMETERS:
            raise InvalidRequest(f"unknown query parameter {key[:40]!r}; known: category, after")
        if key in values:
            raise InvalidRequest(f"query parameter {key!r} is given more than once")
        values[key] = value
    category = values.get("category")
    if category is None:
        raise InvalidRequest("the query parameter category is required, e.g. /products?category=cat-01")
    if not 1 <= len(category) <= MAX_CATEGORY_LENGTH or not category.isprintable():
        raise InvalidRequest(f"category must be 1 to {MAX_CATEGORY_LENGTH} printable characters")
    after = values.get("after")
    if after is None:
        return category, 0
    if after == "0":
        return category, 0
    return category, parse_id(after, "after")
