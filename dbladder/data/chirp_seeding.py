"""Load Chirp's data set into an engine through the engine's own bulk path.

The same steps as the shop's `seed_shop` in `seeding.py` (replace the tables, bulk-load each one,
build the indexes), kept apart until seeding takes any workload's `generate`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator

from ..engines.base import Engine, Row
from ..workloads.chirp import SCHEMA, ChirpConfig, generate
from .seeding import ProgressCallback, SeedReport, TableLoad


def _rows(
    table: str, chunks: Iterable[list[Row]], counter: list[int], progress: ProgressCallback | None
) -> Iterator[Row]:
    for chunk in chunks:
        yield from chunk
        counter[0] += len(chunk)
        if progress:
            progress(table, len(chunk))


async def seed_chirp(
    engine: Engine, config: ChirpConfig, progress: ProgressCallback | None = None
) -> SeedReport:
    """Replace Chirp's tables in `engine` with the data set `config` describes."""
    config = config.checked()
    started = time.perf_counter()
    await engine.recreate_schema(SCHEMA)
    loads = []
    for table, chunks in generate(config):
        counter = [0]
        table_started = time.perf_counter()
        await engine.bulk_load(table, _rows(table.name, chunks, counter, progress))
        loads.append(TableLoad(table.name, counter[0], time.perf_counter() - table_started))
    finish_started = time.perf_counter()
    await engine.finish_load(SCHEMA)
    finished = time.perf_counter()
    return SeedReport(tuple(loads), finished - finish_started, finished - started)
