"""Direct mode's query counts per level: a context's counts read at the levels' window edges."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from dbladder.load.queries import QueryWindows
from dbladder.plans import Ladder
from dbladder.workloads.base import Workload


class Counting(Workload):
    """A workload whose context is a plain dict of counts (what an ORM's context would report)."""

    name = "counting"

    def query_counts(self, context: Any) -> dict[str, dict[str, int]] | None:
        return {name: dict(values) for name, values in context.items()} if context is not None else None


def test_each_level_gets_the_counts_of_its_measured_window():
    levels = Ladder(10, 10, 2, 0.3, warmup=0.1).levels()
    counts = {"op": {"requests": 0, "statements": 0}}

    async def scenario() -> QueryWindows:
        origin = time.perf_counter()
        windows = QueryWindows(Counting(), counts, levels, origin)
        windows.start()
        # One request of 3 statements every 10 ms for the whole ladder (0.6 s).
        while time.perf_counter() < origin + 0.65:
            counts["op"]["requests"] += 1
            counts["op"]["statements"] += 3
            await asyncio.sleep(0.01)
        windows.stop()
        return windows

    windows = asyncio.run(scenario())
    for index in (0, 1):
        counted = windows.level(index)
        assert counted is not None
        # The measured window is 0.2 s: about 20 requests, each exactly 3 statements.
        assert 8 <= counted["op"]["requests"] <= 22, counted
        assert counted["op"]["statements"] == 3 * counted["op"]["requests"]
    assert windows.level(2) is None


def test_a_workload_that_does_not_count_gets_nothing():
    levels = Ladder(10, 10, 1, 0.2).levels()
    windows = QueryWindows(Counting(), None, levels, time.perf_counter())
    assert not windows.counting and windows.level(0) is None
