"""The shop's integrity check: every acknowledged order present and intact, and the books balance.

Before the load, `before_writes` notes the last order id and the stock of every product that is
not at INITIAL_STOCK (none, on data just seeded: seeding sets every product's stock to it,
whatever the seeded orders took). After the load, `verify` reads the orders created since then
and their items, in id ranges, and checks with numpy:

  lost        an acknowledged order id that is not in `orders`
  corrupted   an acknowledged order whose total, or whose items (product, quantity), differ
              from what the service answered and the request asked for
  invariants  every new order's total is the sum of its items' qty x price, and it has items;
              no item belongs to a missing order; for every product, its stock before the run
              minus its stock now equals the quantities the new orders' items took of it

Orders present but never acknowledged (in flight when a fault struck, or answered after the
client's timeout) are counted, not failed: the database kept more than it promised, which is
allowed. Reading 600,000 new orders and their 1,200,000 items takes a few seconds on any engine;
`dbladder.run.integrity` times it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...engines.base import Engine, Session
from ..base import DataSpec
from .schema import INITIAL_STOCK

CHUNK_ORDERS = 100_000
"""Orders (and their items) read per query: bounds the rows one fetch holds at once."""
EXAMPLES = 10
"""Ids named in the result for each kind of problem, at most."""

LAST_ORDER = "SELECT max(id) FROM orders"
CHANGED_STOCK = "SELECT id, stock FROM products WHERE stock <> ?"
NEW_ORDERS = "SELECT id, total_cents FROM orders WHERE id > ? AND id <= ?"
NEW_ITEMS = (
    "SELECT order_id, product_id, qty, price_cents FROM order_items WHERE order_id > ? AND order_id <= ?"
)
PRODUCT_COUNT = "SELECT max(id) FROM products"


async def before_writes(engine: Engine) -> dict[str, Any]:
    """What the check compares with: the last order id, and the stock of every product not at
    INITIAL_STOCK (product id -> stock)."""
    async with engine.read() as session:
        row = await session.fetch_one(LAST_ORDER)
        changed = await session.fetch_all(CHANGED_STOCK, (INITIAL_STOCK,))
    return {
        "last_order": int(row[0]) if row and row[0] is not None else 0,
        "stock": {int(product): int(stock) for product, stock in changed},
    }


def _array(rows: Sequence[Sequence[Any]], width: int) -> np.ndarray:
    return np.array(rows, dtype=np.int64).reshape(-1, width)


async def _read_new(session: Session, last_order: int, newest: int) -> tuple[np.ndarray, np.ndarray]:
    """(orders: id, total) and (items: order id, product id, qty, price) of orders after last_order."""
    orders, items = [], []
    for low in range(last_order, newest, CHUNK_ORDERS):
        high = min(low + CHUNK_ORDERS, newest)
        orders.append(_array(await session.fetch_all(NEW_ORDERS, (low, high)), 2))
        items.append(_array(await session.fetch_all(NEW_ITEMS, (low, high)), 4))
    return (
        np.concatenate(orders) if orders else np.zeros((0, 2), np.int64),
        np.concatenate(items) if items else np.zeros((0, 4), np.int64),
    )


def _ids(values: np.ndarray) -> list[int]:
    return [int(value) for value in values[:EXAMPLES]]


async def verify(
    engine: Engine,
    data: DataSpec,
    acknowledged: Mapping[str, Sequence[tuple[Any, ...]]],
    before: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The check described in the module notes; `acknowledged["create"]` holds the records of
    `_acknowledge_create`: (order id, total, product, qty, product, qty, ...)."""
    if before is None:  # data just seeded: the seeded orders, every stock at INITIAL_STOCK
        before = {"last_order": int(data.sizes["orders"]), "stock": {}}
    last_order = int(before["last_order"])
    async with engine.read() as session:
        row = await session.fetch_one(LAST_ORDER)
        newest = int(row[0]) if row and row[0] is not None else 0
        orders, items = await _read_new(session, last_order, max(newest, last_order))
        changed = await session.fetch_all(CHANGED_STOCK, (INITIAL_STOCK,))
        row = await session.fetch_one(PRODUCT_COUNT)
        products = int(row[0]) if row and row[0] is not None else 0

    span = max(newest - last_order, 0) + 1
    present = np.zeros(span, dtype=bool)
    total = np.zeros(span, dtype=np.int64)
    present[orders[:, 0] - last_order] = True
    total[orders[:, 0] - last_order] = orders[:, 1]

    violations: list[str] = []
    counts = {"order_totals": 0, "orders_without_items": 0, "orphan_items": 0, "stock": 0}

    # Invariant: each new order's total is the sum of its items; it has items; items have orders.
    offset = items[:, 0] - last_order
    sums = np.zeros(span, dtype=np.int64)
    np.add.at(sums, offset, items[:, 2] * items[:, 3])
    item_count = np.bincount(offset, minlength=span)
    no_items = present & (item_count == 0)
    wrong_total = present & (item_count > 0) & (sums != total)
    orphans = ~present & (item_count > 0)
    for key, mask, sentence in (
        ("orders_without_items", no_items, "new order(s) have no items"),
        ("order_totals", wrong_total, "new order(s) have a total that is not the sum of their items"),
        ("orphan_items", orphans, "order id(s) have items but no order"),
    ):
        where = np.flatnonzero(mask) + last_order
        counts[key] = int(where.size)
        if where.size:
            violations.append(f"{where.size:,} {sentence}: {_ids(where)}")

    # Invariant: stock before minus stock now = what the new orders' items took, per product.
    size = max(products, int(items[:, 1].max()) if len(items) else 0) + 1
    expected = np.full(size, INITIAL_STOCK, dtype=np.int64)
    for product, stock in before["stock"].items():
        if product < size:
            expected[product] = stock
    taken = np.zeros(size, dtype=np.int64)
    np.add.at(taken, items[:, 1], items[:, 2])
    expected -= taken
    actual = np.full(size, INITIAL_STOCK, dtype=np.int64)
    for product, stock in changed:
        if 0 <= int(product) < size:
            actual[int(product)] = int(stock)
    stock_wrong = np.flatnonzero(expected[1:] != actual[1:]) + 1
    counts["stock"] = int(stock_wrong.size)
    if stock_wrong.size:
        first = int(stock_wrong[0])
        violations.append(
            f"{stock_wrong.size:,} product(s) whose stock does not match the orders: product {first} has "
            f"{actual[first]:,}, but its stock before the run minus the {taken[first]:,} ordered is "
            f"{expected[first]:,}; products {_ids(stock_wrong)}"
        )

    # Every acknowledged order: present, with its total and items.
    records = acknowledged.get("create", ())
    checked = lost = corrupted = 0
    lost_ids: list[int] = []
    corrupted_ids: list[int] = []
    order_of_items = np.lexsort((items[:, 1], items[:, 0]))
    sorted_items = items[order_of_items]
    reused = 0
    for width, block in _blocks(records).items():
        if width < 2 or width % 2:
            continue  # not a shop record; nothing to compare it with
        checked += len(block)
        ids = block[:, 0]
        inside = (ids > last_order) & (ids <= newest)
        here = np.zeros(len(block), dtype=bool)
        here[inside] = present[ids[inside] - last_order]
        bad = np.zeros(len(block), dtype=bool)
        found = block[here]
        bad[here] = total[found[:, 0] - last_order] != found[:, 1]
        pairs = (width - 2) // 2
        if pairs and len(found):
            wanted = found[:, 2:].reshape(-1, pairs, 2)
            wanted = np.take_along_axis(wanted, np.argsort(wanted[:, :, 0], axis=1)[:, :, None], axis=1)
            has = item_count[found[:, 0] - last_order]
            differs = has != pairs
            same = ~differs
            starts = np.searchsorted(sorted_items[:, 0], found[same, 0])
            got = sorted_items[starts[:, None] + np.arange(pairs)[None, :]][:, :, 1:3]
            differs[same] = np.any(got != wanted[same], axis=(1, 2))
            bad[here] |= differs
        # An id acknowledged twice: the database gave one id to two orders it acknowledged, which
        # happens when a crash lost the first and the id counter with it. The order the id holds
        # now is the later one; every other order acknowledged under that id is lost, not changed.
        _, inverse, repeats = np.unique(ids, return_inverse=True, return_counts=True)
        twice = repeats[inverse] > 1
        lost_mask = ~here | (bad & twice)
        corrupted_mask = bad & ~twice
        reused += int((bad & twice).sum())
        lost += int(lost_mask.sum())
        lost_ids += _ids(ids[lost_mask])
        corrupted += int(corrupted_mask.sum())
        corrupted_ids += _ids(ids[corrupted_mask])
    acknowledged_present = checked - lost
    return {
        "checked": True,
        "acknowledged": checked,
        "present": acknowledged_present,
        "lost": lost,
        "corrupted": corrupted,
        "lost_ids": lost_ids[:EXAMPLES],
        "corrupted_ids": corrupted_ids[:EXAMPLES],
        "violations": violations,
        "invariants": counts,
        "rows_read": {"orders": len(orders), "order_items": len(items), "products": len(changed)},
        "unacknowledged_present": max(0, int(present.sum()) - acknowledged_present),
        "ids_reused": reused,
        "what": "every acknowledged order's id, total and items; every new order's total against its items; "
        "every product's stock against the quantities ordered",
    }


def _blocks(records: Sequence[tuple[Any, ...]]) -> dict[int, np.ndarray]:
    """The records as (n, width) int64 arrays by width, packed ones without a copy."""
    columns = getattr(records, "columns", None)
    blocks: dict[int, list[np.ndarray]] = {}
    other: Sequence[tuple[Any, ...]] = records
    if columns is not None:
        for width, block in columns().items():
            blocks.setdefault(width, []).append(block)
        other = getattr(records, "other", ())
    by_width: dict[int, list[tuple[Any, ...]]] = {}
    for record in other:
        if all(isinstance(value, int) for value in record):
            by_width.setdefault(len(record), []).append(record)
    for width, rows in by_width.items():
        blocks.setdefault(width, []).append(_array(rows, width))
    return {width: np.concatenate(parts) for width, parts in blocks.items()}
