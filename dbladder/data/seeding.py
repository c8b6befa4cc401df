"""Load a workload's data set into an engine: replace the tables, bulk-load, build indexes.

Progress flows out through a callback (table name, rows just loaded) so that the library never
prints; the CLI draws the bar.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..engines import opened
from ..engines.base import Engine, EngineInfo, EngineOptions, Row, Schema, Table
from ..errors import DuplicateKey, InvalidConfig
from ..urls import DatabaseURL
from ..workloads.base import DataSpec, Workload, WorkloadError

ProgressCallback = Callable[[str, int], None]

SEED_POOL_SIZE = 4  # connections while seeding: the bulk paths load one table at a time


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
    table: str, chunks: Iterator[list[Row]], counter: list[int], progress: ProgressCallback | None
) -> Iterator[Row]:
    # `chunks` may be shared with other streams of the same table: each takes the next chunk
    # when it has sent its last, so the streams split the table between them as they go.
    for chunk in chunks:
        for row in chunk:
            counter[0] += 1  # before the yield: the engine has been given this many rows
            yield row
        if progress:
            progress(table, len(chunk))


async def seed(
    engine: Engine, workload: Workload, data: DataSpec, progress: ProgressCallback | None = None
) -> SeedReport:
    """Replace the workload's tables in `engine` with the data set `data` describes.

    Raises InvalidConfig for sizes the workload does not have or cannot use, and WorkloadError
    (naming the table) for rows that repeat a primary key or a unique index.
    """
    problems = workload.validate_sizes(data.sizes)
    if problems:
        raise InvalidConfig(problems)
    started = time.perf_counter()
    await engine.recreate_schema(workload.schema)
    loads = []
    source = workload.source or workload.name
    for table, chunks in workload.generate(data):
        counter = [0]
        table_started = time.perf_counter()
        shared = iter(chunks)
        try:
            await _load_streams(
                engine,
                table,
                [_flatten(table.name, shared, counter, progress) for _ in range(engine.load_streams)],
            )
        except DuplicateKey as exc:
            raise WorkloadError(
                f"{source}: the rows of table {table.name!r} repeat a key, which the engine refused "
                f"once it had {counter[0]:,} of them: {exc}"
            ) from None
        loads.append(TableLoad(table.name, counter[0], time.perf_counter() - table_started))
    finish_started = time.perf_counter()
    try:
        await engine.finish_load(workload.schema)
    except DuplicateKey as exc:  # keys and unique indexes built after the load
        raise WorkloadError(
            f"{source}: the rows repeat a key, refused as the keys were built: {exc}"
        ) from None
    finished = time.perf_counter()
    return SeedReport(tuple(loads), finished - finish_started, finished - started)


async def _load_streams(engine: Engine, table: Table, streams: list[Iterator[Row]]) -> None:
    """One bulk load per stream, side by side on connections of their own."""
    if len(streams) == 1:
        await engine.bulk_load(table, streams[0])
        return
    try:
        async with asyncio.TaskGroup() as group:
            for stream in streams:
                group.create_task(engine.bulk_load(table, stream))
    except BaseExceptionGroup as failed:
        # The first stream's error is the one to report (a repeated key, a lost server); the
        # others were cancelled or failed the same way.
        raise failed.exceptions[0] from None


async def seed_database(
    url: str | DatabaseURL,
    workload: Workload,
    data: DataSpec,
    started: Callable[[EngineInfo], ProgressCallback | None] | None = None,
    options: EngineOptions | None = None,
) -> SeedReport:
    """Open the database at `url`, replace the workload's tables with `data`, and check the
    workload's SQL on it (`dbladder seed`, `dbladder bench --scale`).

    `started` hears the engine's settings before the first row is loaded and may give back the
    progress callback for the rows."""
    async with opened(url, options or EngineOptions(pool_size=SEED_POOL_SIZE).checked()) as engine:
        progress = started(await engine.describe()) if started is not None else None
        report = await seed(engine, workload, data, progress)
        await workload.check_sql(engine)
        return report


async def checksum(engine: Engine, schema: Schema) -> dict[str, str]:
    """sha256 of every table's rows in primary-key order, rendered as text the same on every engine."""
    digests = {}
    async with engine.read() as session:
        for table in schema.tables:
            columns = ", ".join(table.column_names)
            order = ", ".join(table.primary_key)
            digest = hashlib.sha256()
            for row in await session.fetch_all(f"SELECT {columns} FROM {table.name} ORDER BY {order}"):
                digest.update(("\x1f".join(_text(v) for v in row) + "\n").encode())
            digests[table.name] = digest.hexdigest()
    return digests


def _text(value: object) -> str:
    # A double may come back as a float from one driver and a Decimal-free float from another;
    # repr of a float is exact and the same everywhere.
    return repr(value) if isinstance(value, float) else str(value)


async def row_counts(engine: Engine, schema: Schema) -> dict[str, int]:
    """The number of rows in each of the schema's tables."""
    counts = {}
    async with engine.read() as session:
        for table in schema.tables:
            row = await session.fetch_one(f"SELECT count(*) FROM {table.name}")
            counts[table.name] = int(row[0]) if row else 0
    return counts
