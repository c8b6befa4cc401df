"""The raw rounds of "SQLite handled 315 million daily requests on a laptop", through dbladder's engines.

    point_reads         one post by primary key, in autocommit            (the post: 232,011 ops/s)
    write_transactions  BEGIN, INSERT one post, COMMIT                    (the post: 23,459 tx/s)
    batched_inserts     BEGIN, INSERT `batch_rows` posts one by one, COMMIT (the post: 32,217 rows/s)

Each round runs for a fixed time on `connections` tasks, each task one operation at a time, and
times every operation; then its bare reference (`references.py`) runs the same statements on the
same database for as long, so our figure is printed as a ratio of what the machine does without
dbladder in the way. Posts written by a round are deleted after it, so every round starts from the
seeded data.

The rounds are the post's, on the Chirp workload's posts table: the SQL below is the post's raw
queries, not one of the app's pages, so it is written here and checked against the database
(`engine.check_statements`) before anything runs. The workload itself is found by name
(`dbladder.workloads.registry`), as every package but its own finds it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..engines import opened
from ..engines.base import Engine, EngineOptions
from ..errors import NotSeeded
from ..workloads.registry import load_workload
from . import figures, references
from .config import BenchConfig
from .measure import Measurement
from .statements import (
    BENCH_BODY,
    DELETE_POSTS_AFTER,
    IDS_PER_TASK,
    INSERT_POST,
    LAST_IDS,
    POINT_READ,
    STATEMENTS,
    draw_ids,
    now,
)

ROUNDS = ("point_reads", "write_transactions", "batched_inserts")
UNITS = {"point_reads": "ops/s", "write_transactions": "tx/s", "batched_inserts": "rows/s"}

Step = Callable[[int], Awaitable[int]]  # the i-th operation of a task; the rows it touched


async def data_sizes(engine: Engine, workload_name: str = "chirp") -> dict[str, int]:
    """The highest user and post ids of a seeded Chirp, or NotSeeded saying how to seed it."""
    workload = load_workload(workload_name)
    how = f"dbladder seed --workload {workload.name} --db URL (or dbladder bench --scale 1)"
    for table in workload.schema.tables:
        if not await engine.table_exists(table.name):
            raise NotSeeded(f"{engine.url.redacted} has no {workload.name} data; seed it first: {how}")
    async with engine.read() as session:
        users, posts = await session.fetch_one(LAST_IDS) or (None, None)
    if not users or not posts:
        raise NotSeeded(f"{engine.url.redacted} has empty {workload.name} tables; seed them first: {how}")
    return {"users": int(users), "posts": int(posts)}


async def run_for(seconds: float, tasks: int, make_step: Callable[[int], Step]) -> Measurement:
    """Run `tasks` loops side by side for `seconds`, each calling its step one at a time."""
    deadline = time.perf_counter() + seconds
    started = time.perf_counter()

    async def loop(task: int) -> Measurement:
        step = make_step(task)
        measured = Measurement()
        record = measured.latency.record
        clock = time.perf_counter_ns
        deadline_ns = int(deadline * 1e9)
        i = 0
        while True:
            begun = clock()
            if begun >= deadline_ns:
                break
            measured.rows += await step(i)
            record((clock() - begun) // 1000)
            i += 1
        measured.operations = i
        return measured

    total = Measurement()
    for measured in await asyncio.gather(*(loop(task) for task in range(tasks))):
        total.merge(measured)
    total.seconds = time.perf_counter() - started
    return total


def _steps(
    engine: Engine, round_name: str, sizes: dict[str, int], config: BenchConfig
) -> Callable[[int], Step]:
    mask = IDS_PER_TASK - 1

    def point_reads(task: int) -> Step:
        ids = draw_ids(config.seed, task, sizes["posts"])

        async def step(i: int) -> int:
            async with engine.read() as session:
                await session.fetch_one(POINT_READ, (ids[i & mask],))
            return 1

        return step

    def write_transactions(task: int) -> Step:
        users = draw_ids(config.seed, task, sizes["users"])
        stamp = now()

        async def step(i: int) -> int:
            async with engine.transaction() as session:
                await session.execute(INSERT_POST, (users[i & mask], BENCH_BODY, stamp))
            return 1

        return step

    def batched_inserts(task: int) -> Step:
        users = draw_ids(config.seed, task, sizes["users"])
        batch = config.batch_rows
        stamp = now()

        async def step(i: int) -> int:
            async with engine.transaction() as session:
                for j in range(i * batch, (i + 1) * batch):
                    await session.execute(INSERT_POST, (users[j & mask], BENCH_BODY, stamp))
            return batch

        return step

    makers = {
        "point_reads": point_reads,
        "write_transactions": write_transactions,
        "batched_inserts": batched_inserts,
    }
    return makers[round_name]


async def _delete_posts_after(engine: Engine, highest: int) -> None:
    async with engine.read() as session:
        await session.execute(DELETE_POSTS_AFTER, (highest,))


async def run_rounds(config: BenchConfig, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Every raw round and its reference on one database; a plain dict for printing or JSON."""
    config = config.checked()
    options = EngineOptions(pool_size=config.connections)
    async with opened(config.db_url, options) as engine:
        info = await engine.describe()
        sizes = await data_sizes(engine, config.workload)
        await check_statements(engine, STATEMENTS)
        results: dict[str, Any] = {}
        for round_name in ROUNDS:
            steps = _steps(engine, round_name, sizes, config)
            if config.warmup_seconds:
                await run_for(config.warmup_seconds, config.connections, steps)
                await _delete_posts_after(engine, sizes["posts"])
            # Ours and the reference take turns, `repeats` times: a machine whose load drifts
            # (other work on it) then shifts both sides alike.
            measured = Measurement()
            reference: references.Reference | None = None
            for turn in range(config.repeats):
                if progress:
                    progress(f"{round_name}: dbladder ({turn + 1}/{config.repeats})")
                measured.extend(await run_for(config.seconds, config.connections, steps))
                await _delete_posts_after(engine, sizes["posts"])
                if not config.references:
                    continue
                if progress:
                    progress(f"{round_name}: bare reference ({turn + 1}/{config.repeats})")
                # The engine's connections stay open but idle: the reference has the database alone.
                turn_reference = await asyncio.to_thread(
                    references.measure, engine.url, info, round_name, config, sizes
                )
                await _delete_posts_after(engine, sizes["posts"])
                if turn_reference is not None:
                    if reference is None:
                        reference = turn_reference
                    else:
                        reference.measurement.extend(turn_reference.measurement)
            results[round_name] = round_result(round_name, measured, reference)
    return {
        "engine": info.to_dict(),
        "data": sizes,
        "seconds": config.seconds,
        "connections": config.connections,
        "batch_rows": config.batch_rows,
        "repeats": config.repeats,
        "rounds": results,
    }


async def check_statements(engine: Engine, statements: tuple[str, ...]) -> None:
    """NotSeeded naming what the engine refuses, before anything is timed: the tables are not Chirp's."""
    problems = await engine.check_statements(statements)
    if problems:
        refused = "; ".join(f"{p.statement[:60]}: {p.message}" for p in problems)
        raise NotSeeded(
            f"{engine.url.redacted}: the raw rounds' SQL does not fit its tables ({refused}); "
            "seed it with dbladder seed --workload chirp"
        )


def round_result(
    round_name: str, measured: Measurement, reference: references.Reference | None
) -> dict[str, Any]:
    """One round's figures: ours, the reference's, our rate as a ratio of it, and the post's."""
    ours = measured.to_dict()
    rate_key = "rows_per_second" if round_name == "batched_inserts" else "per_second"
    result: dict[str, Any] = {
        "unit": UNITS[round_name],
        "rate": ours[rate_key],
        "ours": ours,
        "reference": None,
        "ratio": None,
        "post_m1": figures.RAW_ROUNDS[round_name],
    }
    if reference is not None:
        theirs = reference.measurement.to_dict()
        result["reference"] = {"name": reference.name, "rate": theirs[rate_key], **theirs}
        if theirs[rate_key]:
            result["ratio"] = round(ours[rate_key] / theirs[rate_key], 3)
    return result
