"""Load a workload's data set into an engine: replace the tables, bulk-load, build indexes.

Progress flows out through a callback (table name, rows just loaded) so that the library never
prints; the CLI draws the bar.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from ..engines.base import Engine, Row
from ..workloads import shop

ProgressCallback = Callable[[str, int], None]


@dataclass(frozen=True)
class TableLoad:
    table: str
    rows: int
    seconds: float

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class SeedReport:
    tables: tuple[TableLoad, ...]
    finish_seconds: float  # indexes, id generators, statistics
    total_seconds: float

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tables)

    def to_dict(self) -> dict[str, object]:
        return {
            "tables": {t.table: {"rows": t.rows, "seconds": round(t.seconds, 3)} for t in self.tables},
            "finish_seconds": round(self.finish_seconds, 3),
            "total_seconds": round(self.total_seconds, 3),
        }


def _flatten(
    table: str, chunks: Iterable[list[Row]], counter: list[int], progress: ProgressCallback | None
) -> Iterator[Row]:
    for chunk in chunks:
        yield from chunk
        counter[0] += len(chunk)
        if progress:
            progress(table, len(chunk))


async def seed_shop(
    engine: Engine, config: shop.SeedConfig, progress: ProgressCallback | None = None
) -> SeedReport:
    """Replace the shop's tables in `engine` with the data set `config` describes."""
    config = config.checked()
    started = time.perf_counter()
    await engine.recreate_schema(shop.SCHEMA)
    loads = []
    for table, chunks in shop.generate(config):
        counter = [0]
        table_started = time.perf_counter()
        await engine.bulk_load(table, _flatten(table.name, chunks, counter, progress))
        loads.append(TableLoad(table.name, counter[0], time.perf_counter() - table_started))
    finish_started = time.perf_counter()
    await engine.finish_load(shop.SCHEMA)
    finished = time.perf_counter()
    return SeedReport(tuple(loads), finished - finish_started, finished - started)
