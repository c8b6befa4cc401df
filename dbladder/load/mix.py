"""What each request does: operations drawn from a workload's mix, a reproducible stream per process.

One uniform number picks the operation (by the mix's cumulative weights), then the operation draws
its own arguments against the data's sizes. Each generator process draws its own stream; a
(seed, stream) pair always gives the same sequence, on every platform and Python version: only
random.random() is used, whose output the random module guarantees, and numbers are scaled from
it with plain arithmetic (`workloads.base.Draw`).
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Iterator, Mapping
from itertools import accumulate
from typing import Any

from ..workloads.base import Args, Draw, Mix, Sizes, Workload

Request = tuple[int, Args]
"""One request of the mix: the operation's index in the workload, and its arguments."""


def requests(workload: Workload, mix: Mix, sizes: Sizes, seed: int = 1, stream: int = 0) -> Iterator[Request]:
    """An endless, reproducible sequence of (operation index, args) for one generator process.

    The same (workload, mix, sizes, seed, stream) always gives the same sequence; different streams
    give independent ones. Raises ValueError for a negative stream or a mix with no weight.
    """
    if not (isinstance(stream, int) and not isinstance(stream, bool) and stream >= 0):
        raise ValueError(f"stream must be a whole number, 0 or more, not {stream!r}")
    weights = [max(0.0, float(mix.weights.get(op.name, 0.0))) for op in workload.operations]
    total = sum(weights)
    if not total > 0:
        raise ValueError("the mix gives no operation a weight above 0")
    # Cumulative shares; the last is set to exactly 1 so a uniform number below 1 always finds one.
    bounds = [cumulative / total for cumulative in accumulate(weights)]
    bounds[-1] = 1.0
    # A str seed is hashed with SHA-512, the same in every process (unlike hash()).
    uniform = random.Random(f"dbladder.mix:{seed}:{stream}").random
    draw = Draw(uniform)
    draws = [op.draw for op in workload.operations]
    frozen: Mapping[str, int] = dict(sizes)
    # Measured on CPython 3.11: about 0.3 us to pick and 0.2-0.5 us for an operation's draw.
    while True:
        index = bisect_right(bounds, uniform())
        yield index, draws[index](draw, frozen)


def first_requests(workload: Workload, mix: Mix, sizes: Sizes, count: int, **options: Any) -> list[Request]:
    """The first `count` requests of a stream (for tests and previews)."""
    stream = requests(workload, mix, sizes, **options)
    return [next(stream) for _ in range(count)]
