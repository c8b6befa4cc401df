"""The fleet of generator processes: one executor per process, on uvloop, figures merged in the parent.

Process k of N sends part k of every level (every N-th request) and draws mix stream k; all share
one run start, so together they keep one schedule. While they run, each process reports every
level as soon as all its requests have an outcome, and its live view twice a second; the parent
merges a level once every process has reported it (`Fleet.events`), so the caller can judge it
and stop the run after the first failed level without waiting for the whole ladder.

With `ProcessSpec.users` (the closed model) process k runs a `UsersGenerator` with
every N-th user instead; its phases take the place of levels, in the events as in the result.

With `ProcessSpec.search` (the ceiling search) the processes stay alive between probes: each waits
for a command on its own queue, runs one level at the rate the parent chose (`Fleet.probe`), reports
it, and waits for the next, so a probe costs no process start. Probes are levels numbered in the
order run, on one timeline from the fleet's origin.

Each process also hands over, every half second, the records of the writes answered 2xx
(`acknowledged.py`); the parent keeps them in `Fleet.acknowledged` for the integrity check after
the run, apart from the levels' figures.

The schedule starts when every process is ready (`StartLine`): each one imports, opens its
connections (direct mode) and says so; the parent then sets the run start a quarter of a second
ahead and lets them all go. A fixed head start would be too long on a quiet machine (every run
waited 1.5 s) and too short on a busy one (a process still importing starts its schedule late).

The processes ignore Ctrl-C: the parent decides. On Ctrl-C the caller calls `stop()`, the
processes cancel their schedules, and `finish()` still collects what each one measured.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
import multiprocessing
import queue
import signal
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import uvloop

from ..engines import create_engine
from ..engines.base import EngineOptions
from ..plans import Ladder, Level, UserPlan
from ..workloads.base import Mix, Workload
from ..workloads.registry import load_workload
from .acknowledged import AcknowledgedWrites, AcknowledgingTarget
from .clock import MonotonicClock
from .executors import Executor
from .executors.closed import UsersGenerator
from .executors.open import Generator
from .mix import Request, requests
from .queries import QueryWindows
from .recorder import LiveView, Recorder, merge_levels, merge_snapshots, merge_users_snapshots
from .search import Search
from .targets import Target
from .targets.direct import DirectTarget, warm
from .targets.http import HttpTarget

REPORT_INTERVAL = 0.5
"""Seconds between a process's reports of finished levels and of its live view."""

READY_TIMEOUT = 60.0
"""Seconds the parent waits for every process to be ready before it starts the schedule anyway
(a process that is later still starts late, and the run is flagged for it)."""


class StartLine:
    """The run start the parent sets once every process is ready, shared with the processes.

    Pickled into each spawned process with its arguments (a shared double and an event).
    """

    def __init__(self, context: Any):
        self._origin = context.Value("d", 0.0, lock=False)
        self._go = context.Event()

    def release(self, origin: float) -> None:
        """Parent: every process may start; `origin` is the run start, a time.perf_counter() value."""
        self._origin.value = origin
        self._go.set()

    async def wait(self, events: Any, part: int) -> float:
        """Process: say this one is ready, wait for the start (bounded), and return it."""
        events.put(("ready", part))
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._go.wait, READY_TIMEOUT + 10)
        return float(self._origin.value) if self._go.is_set() else time.perf_counter()


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
    db_url: str = field(default="", repr=False)  # may hold a password: never in repr()
    pool_size: int = 100
    precise_clock: bool = False
    users: UserPlan | None = None
    search: Search | None = None
    """The ceiling search: probes of `search.hold` seconds at rates the parent sends (`Fleet.probe`)."""
    pool_total: int = 0
    """When above 0, the connections in all, spread over the processes (`pool_size` is then ignored)."""

    def __post_init__(self) -> None:
        if sum(plan is not None for plan in (self.ladder, self.users, self.search)) != 1:
            raise ValueError(
                "a ProcessSpec needs a ladder (open model), a search, or users (closed model): one of them"
            )

    @property
    def duration(self) -> float:
        """Seconds from the run start to the end of the ladder or plan (a search: its budget)."""
        if self.users is not None:
            return self.users.duration
        if self.search is not None:
            return self.search.budget
        return self.ladder.duration if self.ladder is not None else 0.0

    def levels(self) -> list[Level]:
        """The levels (or users phases) in order, with their offsets from the run start; a search
        has none in advance."""
        if self.users is not None:
            return self.users.phase_levels()
        return self.ladder.levels() if self.ladder is not None else []


@dataclass(frozen=True)
class LevelDone:
    """A level every process has finished: its merged snapshot (`recorder.merge_levels`)."""

    index: int
    level: dict[str, Any]


@contextlib.asynccontextmanager
async def _targets(
    spec: ProcessSpec, workload: Workload, part: int = 0, parts: int = 1
) -> AsyncIterator[tuple[Callable[[], Target], Any]]:
    """A maker of targets for the block (an executor closes its target when it ends, so each probe
    of a search gets a new one), and in direct mode the workload's context: over one engine, its
    connections opened before the load, closed after. Over HTTP the context is None: the service
    holds it."""
    if spec.target != "direct":
        yield (lambda: HttpTarget(spec.host, spec.port, spec.in_flight, spec.timeout, workload)), None
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
) -> Recorder | dict[str, Any]:
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

        def target() -> Target:
            # Only a mix that sends writes which leave a record pays for keeping the bodies of their
            # answers (a read-only mix skips the wrapper's two calls per request).
            made = make_target()
            if acknowledged is None or not acknowledges:
                return made
            return AcknowledgingTarget(made, workload, acknowledged)

        watch = _Watch(part, events, stop, acknowledged, workload, context)
        if spec.search is not None:
            return await _run_probes(spec, stream, names, target, part, parts, origin, commands, watch)
        return await _run_executor(spec, stream, names, target(), part, parts, origin, watch)


async def _run_probes(
    spec: ProcessSpec,
    stream: Iterator[Request],
    names: tuple[str, ...],
    make_target: Callable[[], Target],
    part: int,
    parts: int,
    origin: float | None,
    commands: Any,
    watch: _Watch,
) -> dict[str, Any]:
    """Run one probe per command from `commands` ((index, rate, start) tuples; None ends), each one
    level on this process's part; the snapshot of every probe, as one run's."""
    search = spec.search
    if search is None:
        raise ValueError("_run_probes needs a ProcessSpec with a search")
    loop = asyncio.get_running_loop()
    clock_origin = origin if origin is not None else time.perf_counter()
    levels: list[dict[str, Any]] = []
    late_start, interrupted = 0.0, False
    while True:
        command = await loop.run_in_executor(None, commands.get)
        if command is None or (watch.stop is not None and watch.stop.is_set()):
            break
        index, rate, start = command
        level = Level(index=index, rate=rate, start=start, hold=search.hold, warmup=search.warmup)
        clock = MonotonicClock(spin=0.002 if spec.precise_clock else 0.0)
        clock.origin = clock_origin
        generator = Generator([level], clock, stream, make_target(), part, parts, operation_names=names)
        recorder = await watch.run(generator, [level], clock_origin)
        levels.append(recorder.level_snapshot(0))
        late_start = max(late_start, recorder.late_start - start)
        if recorder.interrupted:
            interrupted = True
            break
    return {
        "parts": parts,
        "processes": 1,
        "interrupted": interrupted,
        "late_start": late_start,
        "levels": levels,
    }


async def _run_executor(
    spec: ProcessSpec,
    stream: Iterator[Request],
    names: tuple[str, ...],
    target: Target,
    part: int,
    parts: int,
    origin: float | None,
    watch: _Watch,
) -> Recorder:
    clock = MonotonicClock(spin=0.002 if spec.precise_clock else 0.0)
    if origin is not None:
        clock.origin = origin
    generator: Executor
    if spec.users is not None:
        generator = UsersGenerator(spec.users, clock, stream, target, part, parts, operation_names=names)
    elif spec.ladder is not None:
        generator = Generator(spec.ladder, clock, stream, target, part, parts, operation_names=names)
    else:
        raise ValueError("the ProcessSpec has neither a ladder nor users")
    return await watch.run(generator, spec.levels(), clock.origin)


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

    async def run(self, generator: Executor, levels: list[Level], origin: float) -> Recorder:
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
                        events.put(("live", self.part, asdict(live)))
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
    while reported < len(recorder.levels):
        snapshot = recorder.level_snapshot(reported)
        if snapshot["state"] != "finished":
            break
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
    """Run one generator on a fresh uvloop event loop until its ladder ends (or `stop` is set).

    A search's process runs a probe per command read from `commands` until it reads None.

    `origin` is the run start as a time.perf_counter() value (the system-wide monotonic clock on
    Linux), so processes started one by one still share one schedule; None starts now; a
    `StartLine` (with `events`) is waited on once this process is ready to send. Returns the
    recorder's snapshot; without `events`, with the records of the acknowledged writes under
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
            recorded = runner.run(_drive(spec, part, parts, origin, events, stop, commands, acknowledged))
    finally:
        gc.unfreeze()
    snapshot = recorded if isinstance(recorded, dict) else recorded.snapshot()
    if events is None:
        snapshot["acknowledged"] = acknowledged.take()
    return snapshot


def _child(
    spec: ProcessSpec, part: int, parts: int, origin: StartLine, events: Any, stop: Any, commands: Any = None
) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    try:
        events.put(("done", part, run_process(spec, part, parts, origin, events, stop, commands)))
    except BaseException as exc:
        events.put(("error", part, f"{type(exc).__name__}: {exc}"))


class GeneratorFailed(RuntimeError):
    """Every generator process failed or none reported; the message carries their errors."""


class Fleet:
    """N generator processes sharing one ladder. Use as a context manager; iterate `events()`.

    Entering starts the processes and returns once every one is ready (or READY_TIMEOUT passed);
    the schedule starts `start_delay` seconds later, at `origin`.
    """

    def __init__(self, spec: ProcessSpec, processes: int, start_delay: float = 0.25):
        if processes < 1:
            raise ValueError(f"processes must be 1 or more, not {processes}")
        self.spec = spec
        self.processes = processes
        self.start_delay = start_delay
        context = multiprocessing.get_context("spawn")  # no fork of a process that may hold a loop
        self._events = context.Queue()
        self._stop = context.Event()
        self._start_line = StartLine(context)
        self.origin = time.perf_counter() + start_delay
        """The run start (a time.perf_counter() value); final once the fleet is entered."""
        searching = spec.search is not None
        self._commands = [context.Queue() if searching else None for _ in range(processes)]
        start_line, events, stop = self._start_line, self._events, self._stop
        self._children = [
            context.Process(
                target=_child,
                args=(spec, part, processes, start_line, events, stop, self._commands[part]),
                daemon=True,
            )
            for part in range(processes)
        ]
        self._probes = 0
        self._levels: dict[int, dict[int, dict[str, Any]]] = {}
        self._live: dict[int, dict[str, Any]] = {}
        self._done: dict[int, dict[str, Any]] = {}
        self.errors: dict[int, str] = {}
        self.acknowledged = AcknowledgedWrites()
        """The records of every write answered 2xx so far, from every process (for the integrity check)."""
        self._next_level = 0
        self._ready: set[int] = set()
        self._deadline = math.inf  # set once the schedule starts; until then READY_TIMEOUT bounds the wait

    def __enter__(self) -> Fleet:
        for child in self._children:
            child.start()
        try:
            self._wait_until_ready()
        except BaseException:
            # Ctrl-C while waiting: `with` calls no __exit__ when __enter__ fails, so stop them here.
            self._release()
            self.__exit__()
            raise
        self._release()
        return self

    def _release(self) -> None:
        """Let every process go: the schedule starts `start_delay` seconds from now."""
        self.origin = time.perf_counter() + self.start_delay
        self._start_line.release(self.origin)
        self._deadline = time.monotonic() + self.start_delay + self.spec.duration + self.spec.timeout + 30

    def _wait_until_ready(self) -> None:
        """Until every process said it is ready or failed (a dead one counts as failed), or
        READY_TIMEOUT passed."""
        give_up = time.monotonic() + READY_TIMEOUT
        while len(self._ready) + len(self.errors) < self.processes and time.monotonic() < give_up:
            self._receive()

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
        self._end_probes()
        self._deadline = min(self._deadline, time.monotonic() + self.spec.timeout + 10)

    def start_probe(self, rate: float, start_delay: float = 0.3) -> Level:
        """A search's next probe: one level at `rate` on every process, starting `start_delay`
        seconds from now; the level (numbered in the order probes ran). `probe_events` follows it.

        The level's start is counted from the fleet's origin, as a ladder's levels are, so probes
        sit on one timeline with the machine's samples.
        """
        search = self.spec.search
        if search is None:
            raise ValueError("start_probe() needs a ProcessSpec with a search")
        index = self._probes
        self._probes += 1
        start = max(time.perf_counter() - self.origin, 0.0) + start_delay
        for commands in self._commands:
            if commands is not None:
                commands.put((index, rate, start))
        self._deadline = time.monotonic() + start_delay + search.hold + self.spec.timeout + 30
        return Level(index=index, rate=rate, start=start, hold=search.hold, warmup=search.warmup)

    def probe_events(self, index: int) -> Iterator[LevelDone | LiveView]:
        """The live views of probe `index`, then its LevelDone; fewer if the processes stop first."""
        for event in self.events():
            yield event
            if isinstance(event, LevelDone) and event.index == index:
                return

    def _end_probes(self) -> None:
        for commands in self._commands:
            if commands is not None:
                commands.put(None)
        self._commands = [None] * self.processes

    @property
    def pids(self) -> list[int]:
        """The generator processes' PIDs (those started so far)."""
        return [child.pid for child in self._children if child.pid is not None]

    @property
    def probes(self) -> int:
        """Probes sent so far (a search)."""
        return self._probes

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
                    done = LevelDone(self._next_level, merge_levels(list(parts.values())))
                    # Counted before the yield: a caller may stop iterating at this level (a probe).
                    self._next_level += 1
                    yield done
            elif kind == "live":
                self._live[part] = payload[0]
                if time.monotonic() - last_live >= 1.0:
                    last_live = time.monotonic()
                    yield self._merged_live()

    def finish(self) -> dict[str, Any]:
        """Wait (bounded) for every process's final snapshot; the merged snapshot of the run."""
        self._end_probes()
        self._deadline = min(self._deadline, time.monotonic() + self.spec.timeout + 30)
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
        if kind == "ready":
            self._ready.add(part)
        elif kind == "acknowledged":
            self.acknowledged.extend(message[2])
        elif kind == "done":
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


def run_processes(spec: ProcessSpec, processes: int, start_delay: float = 0.25) -> dict[str, Any]:
    """Run the whole ladder (or user plan) over `processes` generator processes; the merged snapshot."""
    with Fleet(spec, processes, start_delay) as fleet:
        return fleet.finish()
