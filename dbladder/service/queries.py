"""Queries per operation, for a workload that counts its own (an ORM): shared by the service's processes.

A workload whose context counts what it sends (`Workload.query_counts`: per operation, requests,
statements, round trips ...) is counted in every process that runs operations: each worker, and
the single SQLite writer. Each process publishes its cumulative counts as a small JSON file beside
the counters file, named after its process id (`<counters>.queries.<pid>.json`), replaced
atomically (written to a temporary name, then renamed) when they have changed; `/stats` sums every
file. A process that died leaves its file, so the totals never go down when a worker is
replaced; the price is that its last 0.2 s may be missing, as for the request times.

Files rather than words in the counters file because the operations, and so the size of a
process's counts, belong to the workload: the counters file has a fixed layout for every
workload. A worker publishes every FLUSH_INTERVAL of the app (0.2 s) and before it answers
`/stats`, and only when something changed: a few tens of microseconds per publish, none for a
workload that does not count.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from ..types import QueryCounts

"""{operation: {counter: n}}, cumulative."""


def path_for(stats_path: Path, pid: int) -> Path:
    """The file a process publishes its counts in."""
    return stats_path.with_name(f"{stats_path.name}.queries.{pid}.json")


class Publisher:
    """One process's publishing of its counts: `publish(counts)` writes them when they changed."""

    def __init__(self, stats_path: Path, pid: int | None = None):
        self.path = path_for(stats_path, os.getpid() if pid is None else pid)
        self._last: QueryCounts | None = None

    def publish(self, counts: Mapping[str, Mapping[str, int]] | None) -> None:
        """Write `counts` if they differ from what was written last (None: nothing is counted)."""
        if counts is None or counts == self._last:
            return
        snapshot = {name: dict(values) for name, values in counts.items()}
        temporary = self.path.with_name(self.path.name + ".tmp")
        temporary.write_text(json.dumps(snapshot), encoding="utf-8")
        os.replace(temporary, self.path)
        self._last = snapshot


def read(stats_path: Path) -> QueryCounts | None:
    """Every process's counts summed per operation and counter; None when no process counts."""
    files = sorted(stats_path.parent.glob(f"{stats_path.name}.queries.*.json"))
    if not files:
        return None
    total: QueryCounts = {}
    for file in files:
        try:
            counts = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a file removed meanwhile; renames are atomic, so never half written
        for name, values in counts.items():
            into = total.setdefault(name, {})
            for counter, value in values.items():
                into[counter] = into.get(counter, 0) + int(value)
    return total
