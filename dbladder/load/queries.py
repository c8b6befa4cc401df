"""Direct mode's query counts per level: the workload's own counts, read at each level's window edges.

Over HTTP the service counts the queries its workload sends and the run reads them from `/stats`
at the edges of each level's measured window. In direct mode the generator processes run the
operations themselves, so each process reads its own context's counts
(`Workload.query_counts`) at the same moments, on its own loop, and attaches the difference to
the level it reports (`"queries"`); the parent sums the processes' (`merge`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..plans import PlannedLevel
from ..types import QueryCounts
from ..workloads.base import Workload


class QueryWindows:
    """Snapshots of a context's query counts at every level's measured window edges (run time)."""

    def __init__(self, workload: Workload, context: Any, levels: Sequence[PlannedLevel], origin: float):
        self._workload = workload
        self._context = context
        self._edges = {level.index: (origin + level.measured_from, origin + level.end) for level in levels}
        self._taken: dict[float, QueryCounts] = {}
        self._task: asyncio.Task[None] | None = None

    @property
    def counting(self) -> bool:
        """Whether the workload counts its queries at all."""
        return self._workload.query_counts(self._context) is not None

    def start(self) -> None:
        """Take the snapshots as their moments come, on the running loop."""
        if self.counting:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        for moment in sorted({edge for edges in self._edges.values() for edge in edges}):
            await asyncio.sleep(max(0.0, moment - time.perf_counter()))
            self._take(moment)

    def _take(self, moment: float) -> None:
        counts = self._workload.query_counts(self._context)
        if counts is not None:
            self._taken[moment] = {name: dict(values) for name, values in counts.items()}

    def level(self, index: int) -> QueryCounts | None:
        """The counts of level `index`'s window; None before its end has come or when not counting."""
        if index not in self._edges or not self.counting:
            return None
        start, end = self._edges[index]
        if end not in self._taken and time.perf_counter() >= end:
            self._take(end)  # the level finished just as its end came: take it now
        before, after = self._taken.get(start), self._taken.get(end)
        if before is None or after is None:
            return None
        return {
            name: {counter: value - before.get(name, {}).get(counter, 0) for counter, value in values.items()}
            for name, values in after.items()
        }

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


def merge(parts: Iterable[Mapping[str, Mapping[str, int]] | None]) -> QueryCounts | None:
    """Several processes' counts of one level, summed; None when no process counted."""
    total: QueryCounts | None = None
    for part in parts:
        if part is None:
            continue
        total = total if total is not None else {}
        for name, values in part.items():
            into = total.setdefault(name, {})
            for counter, value in values.items():
                into[counter] = into.get(counter, 0) + value
    return total
