"""The request mix: reproducible, in proportion to the weights, and within the seeded ranges."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from dbladder.errors import InvalidConfig
from dbladder.load.mix import Request, requests
from dbladder.workloads import shop
from dbladder.workloads.base import Mix
from dbladder.workloads.shop.schema import CUSTOMERS, category_name

DRAWS = 100_000
SHOP = shop.workload
NAMES = [op.name for op in SHOP.operations]


def draw(mix: Mix, n: int = DRAWS, stream: int = 0, sizes=None, seed: int = 1) -> list[tuple[str, tuple]]:
    """The first n requests, with the operation's name instead of its index."""
    stream_of = requests(SHOP, mix, sizes or SHOP.sizes, seed=seed, stream=stream)
    return [(NAMES[index], args) for index, args in itertools.islice(stream_of, n)]


def within(observed: int, n: int, p: float) -> bool:
    """observed is within 5 standard deviations of n * p: a false alarm about once in 3 million."""
    return abs(observed - n * p) <= 5 * math.sqrt(n * p * (1 - p)) + 1


def test_same_seed_and_stream_give_the_same_sequence() -> None:
    mix = SHOP.mix(write_share=0.3)
    assert draw(mix, 5_000) == draw(mix, 5_000)
    assert draw(SHOP.mix(write_share=0.3), 5_000) == draw(mix, 5_000)


def test_sequence_is_pinned() -> None:
    # The first requests, written out: if this changes, every run's load changes with it, and
    # results from before are no longer comparable.
    assert draw(SHOP.mix(write_share=0.5), 5) == [
        ("page", ("cat-86", 82_480)),
        ("create", (87_860, ((2_425, 1), (58_164, 1)))),
        ("create", (79_858, ((29_617, 1), (33_420, 1)))),
        ("create", (87_219, ((39_354, 1), (87_944, 1)))),
        ("product", (26_129,)),
    ]


def test_streams_and_seeds_differ() -> None:
    mix = SHOP.mix(write_share=0.2)
    sequences = [draw(mix, 1_000, stream) for stream in range(4)]
    sequences.append(draw(mix, 1_000, seed=2))
    for a, b in itertools.combinations(sequences, 2):
        assert a != b


@pytest.mark.parametrize("write_share", [0.0, 0.1, 0.5, 1.0])
def test_a_write_share_keeps_the_reads_in_their_own_proportions(write_share: float) -> None:
    kinds = Counter(name for name, _ in draw(SHOP.mix(write_share=write_share)))
    assert within(kinds["create"], DRAWS, write_share)
    reads = DRAWS - kinds["create"]
    assert reads == kinds["product"] + kinds["page"] + kinds["order"]
    if reads:
        # The shop's reads split 50 / 30 / 20, as "Postgres vs MariaDB on two dedicated CPUs" does.
        assert within(kinds["product"], reads, 0.5)
        assert within(kinds["page"], reads, 0.3)
        assert within(kinds["order"], reads, 0.2)


def test_weights_by_name_and_zero_weights_are_never_drawn() -> None:
    mix = SHOP.mix(weights={"product": 3, "order": 1})
    assert mix.to_dict() == {"product": 0.75, "order": 0.25}
    kinds = Counter(name for name, _ in draw(mix))
    assert set(kinds) == {"product", "order"}
    assert within(kinds["product"], DRAWS, 0.75)


def test_ids_within_ranges_and_spread() -> None:
    by_kind: dict[str, list[tuple]] = {}
    for name, args in draw(SHOP.mix(write_share=0.25), sizes={"products": 50, "orders": 30}):
        by_kind.setdefault(name, []).append(args)
    assert {product_id for (product_id,) in by_kind["product"]} == set(range(1, 51))
    assert {order_id for (order_id,) in by_kind["order"]} == set(range(1, 31))
    assert {category for category, _ in by_kind["page"]} == {category_name(n) for n in range(100)}
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
        for name, args in draw(SHOP.mix(write_share=1.0), 20_000, sizes={"products": products, "orders": 1}):
            assert name == "create"
            customer_id, ((first, qty_a), (second, qty_b)) = args
            assert 1 <= first < second <= products
            assert qty_a == qty_b == 1
            assert isinstance(customer_id, int)


def test_mix_problems_are_listed_together() -> None:
    with pytest.raises(InvalidConfig) as caught:
        SHOP.mix(write_share=1.5, weights={"delete": 1, "product": -1})
    text = str(caught.value)
    assert "no operation delete" in text and "weight of product" in text and "write share" in text
    with pytest.raises(InvalidConfig, match="needs a write operation"):
        SHOP.mix(write_share=0.5, weights={"product": 1})
    with pytest.raises(InvalidConfig, match="at least one operation"):
        SHOP.mix(weights={"product": 0})


def test_stream_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="stream"):
        next(requests(SHOP, SHOP.mix(), SHOP.sizes, stream=-1))


def test_request_type_is_an_index_and_args() -> None:
    first: Request = next(requests(SHOP, SHOP.mix(), SHOP.sizes))
    index, args = first
    assert 0 <= index < len(SHOP.operations) and isinstance(args, tuple)
