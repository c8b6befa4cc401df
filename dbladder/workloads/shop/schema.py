"""The shop's tables and SQL, as the "Postgres vs SQLite under load" and "Postgres vs MariaDB on two
dedicated CPUs" posts (db-wars) define them: products, orders and their items.

SQL is written once, with `?` placeholders; each engine rewrites and prepares it. Ids and
timestamps are plain integers so that the same rows are byte-identical on every engine.
"""

from __future__ import annotations

from ...engines.base import Column, Index, Schema, Table

PAGE_SIZE = 20
CATEGORIES = 100
CUSTOMERS = 100_000
INITIAL_STOCK = 1_000_000  # enough that a long write ladder never runs a product out
FIRST_ORDER_AT = 1_700_000_000  # unix seconds of order 1; order n is n seconds later
MAX_ITEMS_PER_ORDER = 20
CATEGORY_LENGTH = 32

SCHEMA = Schema(
    tables=(
        Table(
            "products",
            (
                Column("id", "bigint"),
                Column("name", "text", max_length=64),
                Column("category", "text", max_length=CATEGORY_LENGTH),
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
