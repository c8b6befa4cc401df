"""Readers and a writer side by side: the journal-mode test of "SQLite handled 315 million daily
requests on a laptop", and the same shape on PostgreSQL and MariaDB.

Seven readers load timelines (the app's heaviest page) as fast as they can while one writer makes
new posts, first paced at 1,000 writes/s, then flat out; a phase of the readers alone comes first
(the post's "clean" read-only figure). Readers and writer run the workload's own operations
(`timeline`, `create_post`: the page the app serves and the write it makes, found by name), with
arguments drawn by the operation itself. On SQLite every journal mode gets its own fresh copy of the same
file per phase, so WAL and DELETE start from identical bytes; on a server the posts a phase wrote
are deleted after it.

Every reader and the writer is its own process (or thread) with its own engine of one connection,
so the readers really run side by side: a process per worker by default, measured against threads
in docs/chirp.md. Workers open their engine, warm up, meet at a barrier, and run for the phase's
time; each returns its Measurement, and on SQLite the number of times the engine's busy handler
slept (busy-retries). An operation that fails counts under its error's name; SQLITE_BUSY or
SQLITE_LOCKED that outlived busy_timeout (apsw BusyError / LockedError, or the engine's
DatabaseTimeout at BEGIN IMMEDIATE) also counts as a busy error.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import queue
import random
import shutil
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlencode

from ..engine_registry import engine_kind
from ..engines import opened
from ..engines.base import EngineInfo, EngineOptions
from ..errors import DbladderError
from ..urls import DatabaseURL, parse_url
from ..workloads.base import Draw
from ..workloads.registry import load_workload
from . import figures
from .config import JournalConfig
from .measure import Measurement
from .rounds import DELETE_POSTS_AFTER, data_sizes

READERS_ONLY = "readers only"
BUSY_ERRORS = ("BusyError", "LockedError", "DatabaseTimeout")
WARMUP_OPERATIONS = 20
START_TIMEOUT_S = 120.0  # for every worker to open its engine and reach the barrier
WRITER_STREAM = 1_000_000  # the writer's stream of arguments, apart from the readers' 0..readers-1
ARGUMENTS_AHEAD = 1 << 12  # per worker, a power of two


class JournalTestFailed(DbladderError):
    """A reader or writer of the journal test could not run (its message says why)."""


@dataclass(frozen=True)
class WorkerSpec:
    """What one worker does; plain data, so it crosses into a spawned process."""

    role: str  # "reader" or "writer"
    url: str
    seconds: float
    stream: int
    seed: int
    sizes: dict[str, int]  # of the seeded data, for drawing the operation's arguments
    workload: str = "chirp"
    operation: str = "timeline"  # the workload's operation this worker repeats
    write_rate: float | None = None  # writes/s; None is flat out


@dataclass(frozen=True)
class JournalPhase:
    name: str  # "readers only", "writer at 1,000/s", "writer flat out"
    writer: bool
    write_rate: float | None = None  # writes/s; None is flat out


def phases(config: JournalConfig) -> list[JournalPhase]:
    """The readers alone (if asked), then with the writer paced, then with the writer flat out."""
    listed = [JournalPhase(READERS_ONLY, False)] if config.read_only_phase else []
    listed.append(JournalPhase(f"writer at {config.write_rate:,.0f}/s", True, config.write_rate))
    listed.append(JournalPhase("writer flat out", True))
    return listed


# ---------------------------------------------------------------------------------------------
# One worker


async def _work(spec: WorkerSpec, arrive: Callable[[], None]) -> dict[str, Any]:
    workload = load_workload(spec.workload)
    chosen = workload.operation(spec.operation)
    # Arguments drawn ahead, used in a cycle: drawing must not be what is measured.
    draw = Draw(random.Random(spec.seed * WRITER_STREAM + spec.stream).random)
    arguments = [chosen.draw(draw, spec.sizes) for _ in range(ARGUMENTS_AHEAD)]
    mask = ARGUMENTS_AHEAD - 1
    async with opened(spec.url, EngineOptions(pool_size=1)) as engine:
        context = await workload.open(engine)
        try:

            async def operation(i: int) -> int:
                return (await chosen.run(context, arguments[i & mask])).status

            if spec.role == "reader":  # a writer's warm-up would write before the others are ready
                for i in range(WARMUP_OPERATIONS):
                    await operation(i)
            arrive()
            busy_before = engine.counters().get("busy_waits", 0)
            measured = await _run(spec, operation)
            busy_retries = engine.counters().get("busy_waits", 0) - busy_before
        finally:
            await workload.close(context)
    return {"role": spec.role, "measurement": measured.to_wire(), "busy_retries": busy_retries}


async def _run(spec: WorkerSpec, operation: Callable[[int], Awaitable[int]]) -> Measurement:
    """Operations until the phase's time is up: flat out, or paced from a schedule of due times."""
    measured = Measurement()
    record = measured.latency.record
    clock = time.perf_counter
    started = clock()
    deadline = started + spec.seconds
    interval = 1.0 / spec.write_rate if spec.write_rate else 0.0
    i = 0
    while True:
        if interval:
            # Due times from the start: a writer that fell behind catches up without sleeping.
            due = started + i * interval
            if due >= deadline:
                break
            if due > clock():
                await asyncio.sleep(due - clock())
        begun = clock()
        if begun >= deadline:
            break
        try:
            status = await operation(i)
        except Exception as exc:
            name = type(exc).__name__
            measured.errors[name] = measured.errors.get(name, 0) + 1
        else:
            if 200 <= status < 300:
                measured.operations += 1
                measured.rows += 1
            else:  # the answer the service would give: a failed request all the same
                name = f"HTTP {status}"
                measured.errors[name] = measured.errors.get(name, 0) + 1
        record(int((clock() - begun) * 1e6))
        i += 1
    measured.seconds = clock() - started
    return measured


def _worker_process(spec: WorkerSpec, barrier: Any, results: Any) -> None:
    """A spawned process: run one worker and put its result (or its failure) on the queue."""
    try:
        result = asyncio.run(_work(spec, lambda: barrier.wait(START_TIMEOUT_S)))
    except BaseException as exc:  # the parent reports it; a process has no one else to tell
        with contextlib.suppress(Exception):
            barrier.abort()
        result = {"role": spec.role, "failed": f"{type(exc).__name__}: {exc}"}
    results.put(result)


def run_workers(specs: list[WorkerSpec], kind: str) -> list[dict[str, Any]]:
    """Run every worker side by side, as processes or threads; their results in any order."""
    if kind == "threads":
        barrier: Any = threading.Barrier(len(specs))
        results: Any = queue.Queue()
        workers: list[Any] = [
            threading.Thread(target=_worker_process, args=(spec, barrier, results), daemon=True)
            for spec in specs
        ]
    else:
        # spawn, not fork: the parent holds open database connections a forked child must not share.
        context = multiprocessing.get_context("spawn")
        barrier = context.Barrier(len(specs))
        results = context.Queue()
        workers = [context.Process(target=_worker_process, args=(spec, barrier, results)) for spec in specs]
    for worker in workers:
        worker.start()
    deadline = time.monotonic() + max(spec.seconds for spec in specs) + START_TIMEOUT_S
    collected: list[dict[str, Any]] = []
    try:
        while len(collected) < len(specs):
            try:
                collected.append(results.get(timeout=0.5))
            except queue.Empty:
                died = [w for w in workers if kind != "threads" and w.exitcode not in (None, 0)]
                if died:
                    raise JournalTestFailed(
                        f"a worker process of the journal test died (exit code {died[0].exitcode})"
                    ) from None
                if time.monotonic() > deadline:
                    raise JournalTestFailed("the journal test's workers did not finish in time") from None
    finally:
        for worker in workers:
            worker.join(timeout=10)
            if kind != "threads" and worker.is_alive():
                worker.terminate()  # only our own child, by its handle
    failures = [r["failed"] for r in collected if "failed" in r]
    if failures:
        raise JournalTestFailed(f"a worker of the journal test failed: {failures[0]}")
    return collected


# ---------------------------------------------------------------------------------------------
# A phase, and the whole test


def summarise(engine: str, mode: str, phase: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    """One row of the journal table from the workers' results."""
    reads, writes = Measurement(), Measurement()
    retries = {"readers": 0, "writer": 0}
    for result in results:
        measured = Measurement.from_wire(result["measurement"])
        if result["role"] == "reader":
            reads.merge(measured)
            retries["readers"] += result["busy_retries"]
        else:
            writes.merge(measured)
            retries["writer"] += result["busy_retries"]
    errors: dict[str, int] = {}
    for measured in (reads, writes):
        for name, count in measured.errors.items():
            errors[name] = errors.get(name, 0) + count
    read_p50, read_p99 = reads.latency.percentiles((50.0, 99.0))
    write_p50, write_p99 = writes.latency.percentiles((50.0, 99.0))
    # The post measured SQLite, the one in-process engine, only; its figures stand beside SQLite's rows.
    post = (
        (figures.JOURNAL.get((mode, phase)) or figures.JOURNAL.get(("*", phase)) or {})
        if engine_kind(engine).in_process
        else {}
    )
    return {
        "engine": engine,
        "mode": mode,
        "phase": phase,
        "readers": sum(1 for r in results if r["role"] == "reader"),
        "reads": reads.operations,
        "reads_per_s": round(reads.per_second, 1),
        "read_p50_ms": read_p50 / 1000,
        "read_p99_ms": read_p99 / 1000,
        "read_max_ms": reads.latency.max / 1000,
        "writes": writes.operations,
        "writes_per_s": round(writes.per_second, 1),
        "write_p50_ms": write_p50 / 1000,
        "write_p99_ms": write_p99 / 1000,
        "write_max_ms": writes.latency.max / 1000,
        "busy_errors": sum(errors.get(name, 0) for name in BUSY_ERRORS),
        "busy_retries": retries,
        "errors": errors,
        "post": dict(post),
    }


def _specs(url: str, config: JournalConfig, sizes: dict[str, int], phase: JournalPhase) -> list[WorkerSpec]:
    def spec(role: str, stream: int, operation: str, rate: float | None = None) -> WorkerSpec:
        return WorkerSpec(
            role, url, config.seconds, stream, config.seed, sizes, config.workload, operation, rate
        )

    specs = [spec("reader", stream, config.read_operation) for stream in range(config.readers)]
    if phase.writer:
        specs.append(spec("writer", WRITER_STREAM, config.write_operation, phase.write_rate))
    return specs


async def _described(url: str, workload: str) -> tuple[EngineInfo, dict[str, int]]:
    """The engine's versions and settings, and the sizes of the seeded data (NotSeeded without it)."""
    async with opened(url, EngineOptions(pool_size=1)) as engine:
        return await engine.describe(), await data_sizes(engine, workload)


async def _delete_posts_after(url: str, highest: int) -> None:
    async with opened(url, EngineOptions(pool_size=1)) as engine, engine.read() as session:
        await session.execute(DELETE_POSTS_AFTER, (highest,))


def run_journal_test(config: JournalConfig, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Every phase on one database (each journal mode on SQLite); a plain dict for printing or JSON."""
    config = config.checked()
    url = parse_url(config.db_url)
    info, sizes = asyncio.run(_described(config.db_url, config.workload))
    rows = []
    if url.path is not None:  # a database in a file: each journal mode, on a copy of the file
        rows = _sqlite_modes(url, config, sizes, progress)
    else:
        isolation = info.isolation
        for phase in phases(config):
            if progress:
                progress(f"{url.engine} {isolation}: {phase.name}")
            results = run_workers(_specs(config.db_url, config, sizes, phase), config.workers)
            asyncio.run(_delete_posts_after(config.db_url, sizes["posts"]))
            rows.append(summarise(url.engine, isolation, phase.name, results))
    return {"config": asdict(config), "engine": info.to_dict(), "data": sizes, "rows": rows}


def _sqlite_modes(
    url: DatabaseURL, config: JournalConfig, sizes: dict[str, int], progress: Callable[[str], None] | None
) -> list[dict[str, Any]]:
    source = os.path.abspath(url.path or "")
    # The copies live beside the database, on the same disk, and go when the test ends.
    folder = tempfile.mkdtemp(prefix=".dbladder-journal-", dir=os.path.dirname(source))
    rows = []
    try:
        base = os.path.join(folder, "base.db")
        _consistent_copy(source, base)
        for mode in config.journal_modes:
            for phase in phases(config):
                if progress:
                    progress(f"sqlite {mode}: {phase.name}")
                copy = os.path.join(folder, f"{mode.lower()}.db")
                _fresh_copy(base, copy, mode)
                params = {**url.params, "journal_mode": mode}
                copy_url = f"sqlite:///{copy}?{urlencode(params)}"
                results = run_workers(_specs(copy_url, config, sizes, phase), config.workers)
                rows.append(summarise("sqlite", mode, phase.name, results))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return rows


def _consistent_copy(path: str, target: str) -> None:
    """Copy a SQLite database with the backup API (consistent whatever else has it open)."""
    import apsw

    source = apsw.Connection(path)
    destination = apsw.Connection(target)
    try:
        with destination.backup("main", source, "main") as backup:
            backup.step(-1)
        # One file, no WAL beside it, whatever mode the source was in; each phase sets its own mode.
        destination.execute("PRAGMA journal_mode=DELETE").fetchall()
    finally:
        destination.close()
        source.close()


def _fresh_copy(base: str, copy: str, mode: str) -> None:
    """A copy of `base` already in journal `mode`. Eight workers that each switched a DELETE-mode
    file to WAL as they opened it raced for the lock that change needs, and one could fail with
    "database is locked" before the test began; opened in the mode it has, their PRAGMA changes
    nothing."""
    import apsw

    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(copy + suffix)
    shutil.copyfile(base, copy)
    connection = apsw.Connection(copy)
    try:
        connection.execute(f"PRAGMA journal_mode={mode}").fetchall()
    finally:
        connection.close()
