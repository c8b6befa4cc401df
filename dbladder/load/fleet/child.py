"""One generator process: its targets, its one loop over the plan's levels, and its reports.

The process that sends part p of the run's `parts` (numbered across every fleet of the run:
`parts.py`; on one machine, process k of N sends part k of N) sends every `parts`-th request of
every level from request p, or every `parts`-th user, and draws mix stream p. It runs the plan's
scheduled levels back to back from the run start with one executor (the plan's `model`: open or
closed), then every level the parent sends on its command queue (a search's probes, each a
`PlannedLevel` timed by the parent), until it reads None. While it runs it reports every level as soon
as all its requests have an outcome, its live view and the records of the writes answered 2xx
(`acknowledged.py`) every REPORT_INTERVAL.

The process ignores Ctrl-C: the parent decides. A process that fails reports its error as its
last message (`child_main`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, cast

import uvloop

from ...engines import create_engine
from ...engines.base import EngineOptions
from ...plans import PlannedLevel, UserPlan
from ...workloads.base import Workload
from ...workloads.registry import load_workload
from ..acknowledged import AcknowledgedWrites, AcknowledgingTarget
from ..clock import MonotonicClock
from ..executors import Executor
from ..executors.closed import UsersGenerator
from ..executors.open import Generator
from ..mix import Request, requests
from ..queries import QueryWindows
from ..recorder import Recorder
from ..targets import RequestTarget
from ..targets.direct import DirectTarget, warm
from ..targets.http import HttpTarget
from .spec import ProcessSpec
from .start_line import StartLine

REPORT_INTERVAL = 0.5
"""Seconds between a process's reports of finished levels and of its live view."""


@contextlib.asynccontextmanager
async def _targets(
    spec: ProcessSpec, workload: Workload, part: int = 0, parts: int = 1
) -> AsyncIterator[tuple[Callable[[], RequestTarget], Any]]:
    """A maker of targets for the block (an executor closes its target when it ends, so each run
    of levels gets a new one), and in direct mode the workload's context: over one engine, its
    connections opened before the load, closed after. Over HTTP the context is None: the service
    holds it."""
    if spec.target != "direct":
        yield (lambda: HttpTarget(spec.host, spec.port, spec.in_flight, spec.timeout, workload)), None
        return
    pool = spec.connections_of(part, parts)
    engine = create_engine(spec.db_url, EngineOptions(pool_size=pool, pool_timeout=spec.timeout))
    await engine.open()
    try:
        await warm(engine, pool)
        context = await workload.open(engine)
        try:
            yield (lambda: DirectTarget(workload, context, spec.in_flight, spec.timeout, pool)), context
        finally:
            await workload.close(context)
    finally:
        await engine.close()


async def _drive(
    spec: ProcessSpec,
    part: int,
    parts: int,
    origin: float | StartLine | None,
    events: Any,
    stop: Any,
    commands: Any = None,
    acknowledged: AcknowledgedWrites | None = None,
) -> dict[str, Any]:
    workload = load_workload(spec.workload)
    mix = spec.mix if spec.mix.weights else workload.mix()
    stream = requests(workload, mix, spec.sizes or workload.sizes, seed=spec.mix_seed, stream=part)
    names = tuple(operation.name for operation in workload.operations)
    acknowledges = any(
        operation.write and operation.acknowledge and mix.weights.get(operation.name, 0) > 0
        for operation in workload.operations
    )
    async with _targets(spec, workload, part, parts) as (make_target, context):
        if isinstance(origin, StartLine):
            origin = await origin.wait(events, part)

        def target() -> RequestTarget:
            # Only a mix that sends writes which leave a record pays for keeping the bodies of their
            # answers (a read-only mix skips the wrapper's two calls per request).
            made = make_target()
            # The user's app judges its own answers (its success statuses, its acknowledgements).
            if acknowledged is not None and (own := workload.wrap_target(made, acknowledged)) is not None:
                return cast(RequestTarget, own)
            if acknowledged is None or not acknowledges:
                return made
            return AcknowledgingTarget(made, workload, acknowledged)

        watch = _Watch(part, events, stop, acknowledged, workload, context)
        return await _run(spec, stream, names, target, part, parts, origin, commands, watch)


def _executor(
    spec: ProcessSpec,
    levels: list[PlannedLevel],
    clock: MonotonicClock,
    stream: Iterator[Request],
    target: RequestTarget,
    part: int,
    parts: int,
    names: tuple[str, ...],
) -> Executor:
    """The executor of the plan's model for `levels`: the closed one runs the users plan itself
    (its users arrive and leave across phases), the open one the levels' due times."""
    if spec.plan.model == "closed":
        plan = cast(UserPlan, spec.plan)  # the closed model's plan is users
        return UsersGenerator(plan, clock, stream, target, part, parts, operation_names=names)
    return Generator(levels, clock, stream, target, part, parts, operation_names=names)


async def _run(
    spec: ProcessSpec,
    stream: Iterator[Request],
    names: tuple[str, ...],
    make_target: Callable[[], RequestTarget],
    part: int,
    parts: int,
    origin: float | None,
    commands: Any,
    watch: _Watch,
) -> dict[str, Any]:
    """Run the plan's scheduled levels, then one level per command from `commands` (a `PlannedLevel`;
    None, or no queue, ends); the snapshot of every level run, as one run's."""
    loop = asyncio.get_running_loop()
    clock_origin = origin if origin is not None else time.perf_counter()
    snapshot: dict[str, Any] = {
        "parts": parts,
        "processes": 1,
        "interrupted": False,
        "late_start": 0.0,
        "levels": [],
    }
    scheduled = spec.plan.scheduled()
    while True:
        if scheduled:
            levels, scheduled = scheduled, []
        else:
            level = await loop.run_in_executor(None, commands.get) if commands is not None else None
            if level is None or (watch.stop is not None and watch.stop.is_set()):
                break
            levels = [level]
        clock = MonotonicClock(spin=0.002 if spec.precise_clock else 0.0)
        clock.origin = clock_origin
        executor = _executor(spec, levels, clock, stream, make_target(), part, parts, names)
        ran = (await watch.run(executor, levels, clock_origin)).snapshot()
        snapshot = ran | {
            "levels": snapshot["levels"] + ran["levels"],
            # How late this process began its schedule: the worst of every run, from its first level.
            "late_start": max(snapshot["late_start"], ran["late_start"] - levels[0].start),
        }
        if ran["interrupted"]:
            break
    return snapshot


class _Watch:
    """Runs an executor and reports, every REPORT_INTERVAL, its finished levels (with their query
    counts in direct mode), its live view and the acknowledged writes, until it ends or `stop` is set."""

    def __init__(
        self,
        part: int,
        events: Any,
        stop: Any,
        acknowledged: AcknowledgedWrites | None,
        workload: Workload,
        context: Any,
    ):
        self.part = part
        self.events = events
        self.stop = stop
        self.acknowledged = acknowledged
        self.workload = workload
        self.context = context

    async def run(self, generator: Executor, levels: list[PlannedLevel], origin: float) -> Recorder:
        # Direct mode: this process runs the operations, so it counts their queries itself.
        windows = (
            QueryWindows(self.workload, self.context, levels, origin) if self.context is not None else None
        )
        if windows is not None:
            windows.start()
        task = asyncio.get_running_loop().create_task(generator.run())
        reported = 0
        events, stop = self.events, self.stop
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=REPORT_INTERVAL)
                if events is not None:
                    reported = _report_levels(generator.recorder, reported, self.part, events, windows)
                    chunk = self.acknowledged.take() if self.acknowledged is not None else None
                    if chunk is not None:
                        events.put(("acknowledged", self.part, chunk))
                    live = generator.progress()
                    if live is not None and not done:
                        events.put(("live", self.part, live.to_dict()))
                if done:
                    task.result()
                    break
                if stop is not None and stop.is_set():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
                    break
        finally:
            if windows is not None:
                windows.stop()
        return generator.recorder


def _report_levels(
    recorder: Recorder, reported: int, part: int, events: Any, windows: QueryWindows | None = None
) -> int:
    """Send every level finished since the last report, in order; the new count reported."""
    # The state first: a whole snapshot of the running level (its histograms, its seconds) only to
    # find it unfinished took 6.7 ms of the generator every REPORT_INTERVAL, up to 21 ms at once.
    while reported < len(recorder.levels) and recorder.level_state(reported) == "finished":
        snapshot = recorder.level_snapshot(reported)
        if windows is not None and (counted := windows.level(snapshot["index"])) is not None:
            snapshot["queries"] = counted
        events.put(("level", part, snapshot["index"], snapshot))
        reported += 1
    return reported


def run_process(
    spec: ProcessSpec,
    part: int = 0,
    parts: int = 1,
    origin: float | StartLine | None = None,
    events: Any = None,
    stop: Any = None,
    commands: Any = None,
) -> dict[str, Any]:
    """Run one generator on a fresh uvloop event loop until its plan ends (or `stop` is set).

    After the scheduled levels it runs a level per command read from `commands` until it reads
    None (without a queue, it ends with the scheduled levels).

    `origin` is the run start as a time.perf_counter() value (the system-wide monotonic clock on
    Linux), so processes started one by one still share one schedule; None starts now; a
    `StartLine` (with `events`) is waited on once this process is ready to send. Returns the
    process's snapshot; without `events`, with the records of the acknowledged writes under
    "acknowledged" (`AcknowledgedWrites.take()`; with `events` they went there). It calls
    gc.freeze() before the run: a full collection walking every object loaded so far stalled the
    loop for 30 ms on a 2-CPU VM, a schedule lag spike; frozen, a collection only walks what the
    run itself allocates.
    """
    gc.collect()
    gc.freeze()
    acknowledged = AcknowledgedWrites()
    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            snapshot = runner.run(_drive(spec, part, parts, origin, events, stop, commands, acknowledged))
    finally:
        gc.unfreeze()
    if events is None:
        snapshot["acknowledged"] = acknowledged.take()
    return snapshot


def child_main(
    spec: ProcessSpec, part: int, parts: int, origin: StartLine, events: Any, stop: Any, commands: Any
) -> None:
    """A spawned generator process: its snapshot, or its error, as its last message."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    _end_with_parent()
    try:
        events.put(("done", part, run_process(spec, part, parts, origin, events, stop, commands)))
    except BaseException as exc:
        events.put(("error", part, f"{type(exc).__name__}: {exc}"))


def _end_with_parent(interval: float = 0.5) -> None:
    """End this process once its parent is gone: a parent killed outright (kill -9 of a run, or of
    a cluster's load agent) cannot stop its processes, which would wait on its queues for ever, or
    go on sending load nobody measures."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, name="end-with-parent", daemon=True).start()
