"""What each request does: the request mix of seeds 000 and 001.

A request is a write (create an order) with probability `write_share`, else a read. Reads split
as seed 001 does: 50 % a product by id, 30 % a page of a category, 20 % an order with its items.
Ids are uniform over the seeded rows, so every engine sees the same spread of hot and cold pages.

Each generator process draws its own stream; a (seed, stream) pair always gives the same
sequence, on every platform and Python version: only random.random() is used, whose output the
random module guarantees, and ids are scaled from it with plain arithmetic.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..errors import InvalidConfig
from ..workloads.shop import CATEGORIES, CUSTOMERS, category_name

PRODUCT_SHARE = 0.5
"""Share of reads that fetch one product by id."""
PAGE_SHARE = 0.3
"""Share of reads that fetch a page of a category's products."""
ORDER_SHARE = 0.2
"""Share of reads that fetch an order with its items."""


class Operation(NamedTuple):
    """One request of the mix.

    kind     args
    product  (product_id,)
    page     (category_name, after_id)
    order    (order_id,)
    create   (customer_id, ((product_a, 1), (product_b, 1)))  two distinct products, a < b
    """

    kind: str
    args: tuple[Any, ...]


@dataclass(frozen=True)
class Mix:
    """The request mix: the share of writes and the ranges ids are drawn from (the seeded shop's)."""

    write_share: float = 0.0
    products: int = 100_000
    orders: int = 1_000_000
    categories: int = CATEGORIES
    seed: int = 1

    def validate(self) -> list[str]:
        """Every problem with the mix, each naming its field; empty when it is valid."""
        problems = []
        share = self.write_share
        if not (_is_number(share) and 0 <= share <= 1):
            problems.append(f"write_share must be a number from 0 to 1, not {share!r}")
        if not (_is_whole(self.products) and 2 <= self.products <= 100_000_000):
            problems.append(
                f"products must be from 2 to 100,000,000 (an order has 2 distinct products), "
                f"not {self.products!r}"
            )
        if not (_is_whole(self.orders) and 1 <= self.orders <= 1_000_000_000):
            problems.append(f"orders must be from 1 to 1,000,000,000, not {self.orders!r}")
        if not (_is_whole(self.categories) and 1 <= self.categories <= CATEGORIES):
            problems.append(
                f"categories must be from 1 to {CATEGORIES} (the seeded shop has {CATEGORIES}), "
                f"not {self.categories!r}"
            )
        if not (_is_whole(self.seed) and 0 <= self.seed < 2**63):
            problems.append(f"seed must be from 0 to 2**63-1, not {self.seed!r}")
        return problems

    def checked(self) -> Mix:
        """This mix, or InvalidConfig listing every problem."""
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self


def operations(mix: Mix, stream: int = 0) -> Iterator[Operation]:
    """An endless, reproducible sequence of operations for one generator process.

    The same (mix, stream) always gives the same sequence; different streams give independent
    ones. Raises InvalidConfig if the mix is invalid and ValueError for a negative stream.
    """
    mix.checked()
    if not (_is_whole(stream) and stream >= 0):
        raise ValueError(f"stream must be a whole number, 0 or more, not {stream!r}")
    # A str seed is hashed with SHA-512, the same in every process (unlike hash()).
    uniform = random.Random(f"dbladder.mix:{mix.seed}:{stream}").random

    # One uniform number picks the kind: [0, w) create, then the reads' shares of [w, 1).
    write_below = mix.write_share
    reads = 1.0 - write_below
    product_below = write_below + reads * PRODUCT_SHARE
    page_below = write_below + reads * (PRODUCT_SHARE + PAGE_SHARE)
    products, orders = mix.products, mix.orders
    other_products = products - 1
    names = [category_name(n) for n in range(mix.categories)]
    categories = len(names)
    # This runs once per request. Measured (CPython 3.11, x86-64): about 0.4 us per read and
    # 0.7 us per create. Building the tuple directly skips NamedTuple.__new__'s argument handling
    # (0.1 us instead of 0.2 us); int(uniform() * n) costs half of randrange(n), and is uniform
    # over 0..n-1 to within n / 2**53 and never reaches n for n < 2**53. Pre-drawing batches into
    # a list and yielding from it was slower (0.6 us), so each operation is drawn when asked for.
    make = tuple.__new__

    while True:
        u = uniform()
        if write_below <= u < product_below:
            yield make(Operation, ("product", (int(uniform() * products) + 1,)))
        elif u < write_below:
            first = int(uniform() * products) + 1
            # Uniform over the other products: draw from P - 1 and skip over `first`.
            second = int(uniform() * other_products) + 1
            items = ((first, 1), (second + 1, 1)) if second >= first else ((second, 1), (first, 1))
            yield make(Operation, ("create", (int(uniform() * CUSTOMERS) + 1, items)))
        elif u < page_below:
            category = names[int(uniform() * categories)]
            yield make(Operation, ("page", (category, int(uniform() * (products + 1)))))
        else:
            yield make(Operation, ("order", (int(uniform() * orders) + 1,)))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
