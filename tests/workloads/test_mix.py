"""The request mix: reproducible, in proportion, and within the seeded ranges."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from dbladder.errors import InvalidConfig
from dbladder.load.mix import ORDER_SHARE, PAGE_SHARE, PRODUCT_SHARE, Mix, Operation, operations
from dbladder.workloads.shop import CUSTOMERS, category_name

DRAWS = 100_000


def draw(mix: Mix, n: int = DRAWS, stream: int = 0) -> list[Operation]:
    return list(itertools.islice(operations(mix, stream), n))


def within(observed: int, n: int, p: float) -> bool:
    """observed is within 5 standard deviations of n * p: a false alarm about once in 3 million."""
    return abs(observed - n * p) <= 5 * math.sqrt(n * p * (1 - p)) + 1


def test_same_seed_and_stream_give_the_same_sequence() -> None:
    mix = Mix(write_share=0.3)
    assert draw(mix, 5_000) == draw(mix, 5_000)
    assert draw(Mix(write_share=0.3), 5_000) == draw(mix, 5_000)


def test_sequence_is_pinned() -> None:
    # The first operations, written out: if this changes, every run's load changes with it, and
    # results from before are no longer comparable.
    assert draw(Mix(write_share=0.5), 5) == [
        ("create", (85920, ((82480, 1), (86657, 1)))),
        ("product", (2425,)),
        ("page", ("cat-71", 33419)),
        ("create", (39354, ((72919, 1), (79858, 1)))),
        ("page", ("cat-87", 17166)),
    ]


def test_streams_and_seeds_differ() -> None:
    mix = Mix(write_share=0.2)
    sequences = [draw(mix, 1_000, stream) for stream in range(4)]
    sequences.append(draw(Mix(write_share=0.2, seed=2), 1_000))
    for a, b in itertools.combinations(sequences, 2):
        assert a != b


@pytest.mark.parametrize("write_share", [0.0, 0.1, 0.5, 1.0])
def test_shares_hold(write_share: float) -> None:
    ops = draw(Mix(write_share=write_share))
    kinds = Counter(op.kind for op in ops)
    assert within(kinds["create"], DRAWS, write_share)
    reads = DRAWS - kinds["create"]
    assert reads == kinds["product"] + kinds["page"] + kinds["order"]
    if reads:
        assert within(kinds["product"], reads, PRODUCT_SHARE)
        assert within(kinds["page"], reads, PAGE_SHARE)
        assert within(kinds["order"], reads, ORDER_SHARE)


def test_read_split_constants() -> None:
    assert (PRODUCT_SHARE, PAGE_SHARE, ORDER_SHARE) == (0.5, 0.3, 0.2)


def test_ids_within_ranges_and_spread() -> None:
    mix = Mix(write_share=0.25, products=50, orders=30, categories=7)
    ops = draw(mix)
    by_kind: dict[str, list[tuple]] = {}
    for op in ops:
        assert isinstance(op, Operation)
        by_kind.setdefault(op.kind, []).append(op.args)
    assert {product_id for (product_id,) in by_kind["product"]} == set(range(1, 51))
    assert {order_id for (order_id,) in by_kind["order"]} == set(range(1, 31))
    assert {category for category, _ in by_kind["page"]} == {category_name(n) for n in range(7)}
    assert {after_id for _, after_id in by_kind["page"]} == set(range(0, 51))
    customers = [customer for customer, _ in by_kind["create"]]
    assert 1 <= min(customers) <= max(customers) <= CUSTOMERS
    products_in_orders: Counter[int] = Counter()
    for _, items in by_kind["create"]:
        products_in_orders.update(product_id for product_id, _ in items)
    assert set(products_in_orders) == set(range(1, 51))
    # Every product equally likely in an order: 2 of 50 per create.
    creates = len(by_kind["create"])
    for count in products_in_orders.values():
        assert within(count, creates, 2 / 50)


def test_create_has_two_distinct_sorted_products_of_qty_one() -> None:
    for products in (2, 3, 100_000):
        for op in draw(Mix(write_share=1.0, products=products), 20_000):
            assert op.kind == "create"
            customer_id, ((first, qty_a), (second, qty_b)) = op.args
            assert 1 <= first < second <= products
            assert qty_a == qty_b == 1
            assert isinstance(customer_id, int)


def test_default_ranges_match_seed() -> None:
    ops = draw(Mix(write_share=0.5), 20_000)
    for op in ops:
        if op.kind in ("product", "order"):
            limit = 100_000 if op.kind == "product" else 1_000_000
            assert 1 <= op.args[0] <= limit
        elif op.kind == "page":
            assert op.args[0] in {category_name(n) for n in range(100)}
            assert 0 <= op.args[1] <= 100_000


def test_validation_lists_every_problem() -> None:
    problems = Mix(write_share=1.5, products=1, orders=0, categories=0, seed=-1).validate()
    assert [p.split()[0] for p in problems] == ["write_share", "products", "orders", "categories", "seed"]
    problems = Mix(write_share=float("nan"), categories=101).validate()
    assert [p.split()[0] for p in problems] == ["write_share", "categories"]
    assert Mix().validate() == []
    with pytest.raises(InvalidConfig) as caught:
        Mix(products=1).checked()
    assert caught.value.problems == Mix(products=1).validate()
    with pytest.raises(InvalidConfig):
        next(operations(Mix(write_share=-0.1)))


def test_stream_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="stream"):
        next(operations(Mix(), -1))
