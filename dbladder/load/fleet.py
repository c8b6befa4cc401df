"""The fleet of generator processes: one executor per process, on uvloop, figures merged in the parent.

Process k of N sends part k of every level (every N-th request) and draws mix stream k; all share
one run start, so together they keep one schedule. While they run, each process reports every
level as soon as all its requests have an outcome, and its live view twice a second; the parent
merges a level once every process has reported it (`Fleet.events`), so the caller can judge it
and stop the run after the first failed level without waiting for the whole ladder.

With `ProcessSpec.users` (the closed model) process k runs a `UsersGenerator` with
every N-th user instead; its phases take the place of levels, in the events as in the result.

The processes ignore Ctrl-C: the parent decides. On Ctrl-C the caller calls `stop()`, the
processes cancel their schedules, and `finish()` still collects what each one measured.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import multiprocessing
import queue
import signal
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import uvloop

from ..engines import create_engine
from ..engines.base import EngineOptions
from ..plans import Ladder, Level, UserPlan
from ..workloads.base import Mix, Workload
from ..workloads.registry import load_workload
from .clock import MonotonicClock
from .executors import Executor
from .executors.closed import UsersGenerator
from .executors.open import Generator
from .mix import requests
from .recorder import LiveView, Recorder, merge_levels, merge_snapshots, merge_users_snapshots
from .targets import Target
from .targets.direct import DirectTarget, warm
from .targets.http import HttpTarget

REPORT_INTERVAL = 0.5
"""Seconds between a process's reports of finished levels and of its live view."""


@dataclass(frozen=True)
class ProcessSpec:
    """What a generator process needs; plain and picklable, so a spawned process can rebuild it.

    `target` is "http" (the service at host:port) or "direct" (the engine at `db_url`, with a pool of
    `pool_size` per process, running the workload's operations itself). `in_flight` is per process.
    `precise_clock` busy-waits the last 2 ms before each due time (MonotonicClock's spin): schedule lag in
    microseconds, at the price of a whole CPU, which on a small machine is taken from the service and the
    database. Give either `ladder` (the open model) or `users` (the closed model), not both; with `users`,
    `in_flight` should be at least the most users a process runs, or users find no connection and count their
    requests as dropped.
    """

    ladder: Ladder | None = None
    workload: str = "shop"
    """The workload to load in the process (a name, a .py file or module:attr)."""
    mix: Mix = field(default_factory=lambda: Mix({}))
    """Operation weights by name; empty means the workload's own weights."""
    sizes: dict[str, int] = field(default_factory=dict)
    """The data's size parameters, which the operations draw their ids from (empty: the defaults)."""
    mix_seed: int = 1
    host: str = "127.0.0.1"
    port: int = 0
    in_flight: int = 1000
    timeout: float = 5.0
    target: str = "http"
    db_url: str = ""
    pool_size: int = 100
    precise_clock: bool = False
    users: UserPlan | None = None
    pool_total: int = 0
    """When above 0, the connections in all, spread over the processes (`pool_size` is then ignored)."""

    def __post_init__(self) -> None:
        if (self.ladder is None) == (self.users is None):
            raise ValueError("a ProcessSpec needs a ladder (open model) or users (closed model), not both")

    @property
    def duration(self) -> float:
        """Seconds from the run start to the end of the ladder or plan."""
        if self.users is not None:
            return self.users.duration
        return self.ladder.duration if self.ladder is not None else 0.0

    def levels(self) -> list[Level]:
        """The levels (or users phases) in order, with their offsets from the run start."""
        if self.users is not None:
            return self.users.phase_levels()
        return self.ladder.levels() if self.ladder is not None else []


@dataclass(frozen=True)
class LevelDone:
    """A level every process has finished: its merged snapshot (`recorder.merge_levels`)."""

    index: int
    level: dict[str, Any]


@contextlib.asynccontextmanager
async def _opened_target(
    spec: ProcessSpec, workload: Workload, part: int = 0, parts: int = 1
) -> AsyncIterator[Target]:
    """The target for the block; in direct mode with an engine and the workload's context, closed after."""
    if spec.target != "direct":
        yield HttpTarget(spec.host, spec.port, spec.in_flight, spec.timeout, workload)
        return
    pool = spec.pool_size
    if spec.pool_total:
        pool = max(1, spec.pool_total // parts + (part < spec.pool_total % parts))
    engine = create_engine(spec.db_url, EngineOptions(pool_size=pool, pool_timeout=spec.timeout))
    await engine.open()
    try:
        await warm(engine, pool)
        context = await workload.open(engine)
        try:
            yield DirectTarget(workload, context, spec.in_flight, spec.timeout, pool)
        finally:
            await workload.close(context)
    finally:
        await engine.close()


async def _drive(
    spec: ProcessSpec, part: int, parts: int, origin: float | None, events: Any, stop: Any
) -> Recorder:
    workload = load_workload(spec.workload)
    async with _opened_target(spec, workload, part, parts) as target:
        return await _run_executor(spec, workload, target, part, parts, origin, events, stop)


async def _run_executor(
    spec: ProcessSpec,
    workload: Workload,
    target: Target,
    part: int,
    parts: int,
    origin: float | None,
    events: Any,
    stop: Any,
) -> Recorder:
    clock = MonotonicClock(spin=0.002 if spec.precise_clock else 0.0)
    if origin is not None:
        clock.origin = origin
    mix = spec.mix if spec.mix.weights else workload.mix()
    stream = requests(workload, mix, spec.sizes or workload.sizes, seed=spec.mix_seed, stream=part)
    names = tuple(operation.name for operation in workload.operations)
    generator: Executor
    if spec.users is not None:
        generator = UsersGenerator(spec.users, clock, stream, target, part, parts, operation_names=names)
    elif spec.ladder is not None:
        generator = Generator(spec.ladder, clock, stream, target, part, parts, operation_names=names)
    else:
        raise ValueError("the ProcessSpec has neither a ladder nor users")
    task = asyncio.get_running_loop().create_task(generator.run())
    reported = 0
    while True:
        done, _ = await asyncio.wait({task}, timeout=REPORT_INTERVAL)
        if events is not None:
            reported = _report_levels(generator.recorder, reported, part, events)
            live = generator.progress()
            if live is not None and not done:
                events.put(("live", part, asdict(live)))
        if done:
            task.result()
            break
        if stop is not None and stop.is_set():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            break
    return generator.recorder


def _report_levels(recorder: Recorder, reported: int, part: int, events: Any) -> int:
    """Send every level finished since the last report, in order; the new count reported."""
    while reported < len(recorder.levels):
        snapshot = recorder.level_snapshot(reported)
        if snapshot["state"] != "finished":
            break
        events.put(("level", part, reported, snapshot))
        reported += 1
    return reported


def run_process(
    spec: ProcessSpec,
    part: int = 0,
    parts: int = 1,
    origin: float | None = None,
    events: Any = None,
    stop: Any = None,
) -> dict[str, Any]:
    """Run one generator on a fresh uvloop event loop until its ladder ends (or `stop` is set).

    `origin` is the run start as a time.perf_counter() value (the system-wide monotonic clock on
    Linux), so processes started one by one still share one schedule; None starts now. Returns the
    recorder's snapshot. It calls gc.freeze() before the run: a full collection walking every
    object loaded so far stalled the loop for 30 ms on a 2-CPU VM, a schedule lag spike; frozen,
    a collection only walks what the run itself allocates.
    """
    gc.collect()
    gc.freeze()
    recorder: Recorder | None = None
    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            recorder = runner.run(_drive(spec, part, parts, origin, events, stop))
    finally:
        gc.unfreeze()
    return recorder.snapshot()


def _child(spec: ProcessSpec, part: int, parts: int, origin: float, events: Any, stop: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    try:
        events.put(("done", part, run_process(spec, part, parts, origin, events, stop)))
    except BaseException as exc:
        events.put(("error", part, f"{type(exc).__name__}: {exc}"))


class GeneratorFailed(RuntimeError):
    """Every generator process failed or none reported; the message carries their errors."""


class Fleet:
    """N generator processes sharing one ladder. Use as a context manager; iterate `events()`."""

    def __init__(self, spec: ProcessSpec, processes: int, start_delay: float = 1.5):
        if processes < 1:
            raise ValueError(f"processes must be 1 or more, not {processes}")
        self.spec = spec
        self.processes = processes
        self.start_delay = start_delay
        context = multiprocessing.get_context("spawn")  # no fork of a process that may hold a loop
        self._events = context.Queue()
        self._stop = context.Event()
        self.origin = time.perf_counter() + start_delay
        self._children = [
            context.Process(
                target=_child,
                args=(spec, part, processes, self.origin, self._events, self._stop),
                daemon=True,
            )
            for part in range(processes)
        ]
        self._levels: dict[int, dict[int, dict[str, Any]]] = {}
        self._live: dict[int, dict[str, Any]] = {}
        self._done: dict[int, dict[str, Any]] = {}
        self.errors: dict[int, str] = {}
        self._next_level = 0
        self._deadline = time.monotonic() + start_delay + spec.duration + spec.timeout + 30

    def __enter__(self) -> Fleet:
        for child in self._children:
            child.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
        for child in self._children:
            child.join(timeout=2)
            if child.is_alive():
                child.terminate()
                child.join(timeout=2)

    def stop(self) -> None:
        """Ask every process to stop sending; they report what they measured."""
        self._stop.set()
        self._deadline = min(self._deadline, time.monotonic() + self.spec.timeout + 10)

    @property
    def pids(self) -> list[int]:
        """The generator processes' PIDs (those started so far)."""
        return [child.pid for child in self._children if child.pid is not None]

    @property
    def finished(self) -> bool:
        return len(self._done) + len(self.errors) >= self.processes

    def events(self) -> Iterator[LevelDone | LiveView]:
        """Levels as every process finishes them, and the live view about once a second, until the end."""
        last_live = 0.0
        while not self.finished:
            message = self._receive()
            if message is None:
                continue
            kind, part, *payload = message
            if kind == "level":
                index, snapshot = payload
                self._levels.setdefault(index, {})[part] = snapshot
                while len(self._levels.get(self._next_level, {})) == self.processes:
                    parts = self._levels.pop(self._next_level)
                    yield LevelDone(self._next_level, merge_levels(list(parts.values())))
                    self._next_level += 1
            elif kind == "live":
                self._live[part] = payload[0]
                if time.monotonic() - last_live >= 1.0:
                    last_live = time.monotonic()
                    yield self._merged_live()

    def finish(self) -> dict[str, Any]:
        """Wait (bounded) for every process's final snapshot; the merged snapshot of the run."""
        for _ in self.events():
            pass
        if not self._done:
            detail = "; ".join(f"process {part}: {error}" for part, error in sorted(self.errors.items()))
            raise GeneratorFailed(f"no generator process reported a result ({detail or 'none answered'})")
        merge = merge_users_snapshots if self.spec.users is not None else merge_snapshots
        merged = merge(self._done.values())
        merged["missing_parts"] = self.processes - len(self._done)
        merged["interrupted"] = merged["interrupted"] or self._stop.is_set() or merged["missing_parts"] > 0
        merged["errors"] = [self.errors[part] for part in sorted(self.errors)]
        return merged

    def _receive(self) -> tuple[Any, ...] | None:
        try:
            message: tuple[Any, ...] = self._events.get(timeout=0.25)
        except queue.Empty:
            if time.monotonic() > self._deadline or not any(child.is_alive() for child in self._children):
                # Bounded: a process that has not reported by now never will.
                for part in range(self.processes):
                    if part not in self._done:
                        self.errors.setdefault(part, "did not report before the deadline")
            return None
        kind, part = message[0], message[1]
        if kind == "done":
            self._done[part] = message[2]
        elif kind == "error":
            self.errors[part] = message[2]
        return message

    def _merged_live(self) -> LiveView:
        views = [
            view
            for view in self._live.values()
            if view["level"] == max(v["level"] for v in self._live.values())
        ]
        # p95 is the largest of any one process: a merged p95 would need the histograms.
        return LiveView(
            level=views[0]["level"],
            rate=views[0]["rate"],
            elapsed=max(view["elapsed"] for view in views),
            warming_up=any(view["warming_up"] for view in views),
            offered_rate=sum(view["offered_rate"] for view in views),
            achieved_rate=sum(view["achieved_rate"] for view in views),
            p95_ms=max(view["p95_ms"] for view in views),
            failures=sum(view["failures"] for view in views),
        )


def run_processes(spec: ProcessSpec, processes: int, start_delay: float = 1.5) -> dict[str, Any]:
    """Run the whole ladder (or user plan) over `processes` generator processes; the merged snapshot."""
    with Fleet(spec, processes, start_delay) as fleet:
        return fleet.finish()
