"""What the database was doing during a window of the run, sampled cheaply in a background thread.

    sampler = ActivitySampler(create_probe(url))
    sampler.start()                      # opens the probe's own connection; raises if it cannot
    ...                                  # the level
    window = sampler.window(start, end)  # figures for [start, end], on time.perf_counter()
    sampler.stop()

Each engine's probe (its registration's `activity_probe`: `postgres/activity.py`,
`mariadb/activity.py`, `sqlite/activity.py`, the `ActivityProbe` of `base.py`) says what one
reading is and how a window's readings become figures; this module only schedules the readings and
picks a window's. Readings run on a connection of the sampler's own, in an event loop of its own
thread, so they never queue behind the run's requests and the run's loop never waits for them.
Ticks are scheduled from the start (start + k * interval), so one slow reading delays one tick,
not every later one. The thread never raises: a reading that fails is left out and its error kept
(once per kind) in `warnings`.

Figures with the same name mean the same on every engine where they exist: `active_sessions`
(the mean number of the run's sessions running a statement), `lock_wait_share` (the share of
those that were waiting for a lock another session held). The rest are each engine's own and
named for what they count (each probe's module lists them).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from ..engine_registry import load
from ..urls import DatabaseURL, parse_url
from .base import ActivityProbe, ActivityReading

START_TIMEOUT = 10.0  # seconds for the probe to connect

Counters = Callable[[], Mapping[str, int]]
"""Counts kept outside the database (the service's /stats: busy waits), read at every reading."""


def create_probe(url: str | DatabaseURL, counters: Counters | None = None) -> ActivityProbe:
    """The activity probe of the URL's engine, unopened. `counters`, when given, is read at every
    reading and its counts reported as differences over the window (SQLite: the service's
    busy waits on the file lock)."""
    parsed = parse_url(url) if isinstance(url, str) else url
    probe_class = load(parsed.kind.activity_probe)
    probe: ActivityProbe = probe_class(parsed, counters)
    return probe


@dataclass(frozen=True)
class ActivityWindow:
    """An engine's figures over [start, end] (time.perf_counter()), from `readings` readings."""

    engine: str
    start: float
    end: float
    readings: int
    figures: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class ActivitySampler:
    """Reads a probe every `interval` seconds (its engine's default) until stopped; see the module doc."""

    def __init__(
        self,
        probe: ActivityProbe,
        interval: float | None = None,
        *,
        clock: Callable[[], float] = time.perf_counter,
    ):
        self.probe = probe
        self.interval = probe.default_interval if interval is None else interval
        if not self.interval > 0:
            raise ValueError(f"interval must be above 0 seconds, not {self.interval!r}")
        self.warnings: list[str] = []
        self.cpu_seconds = 0.0  # the sampling thread's own CPU, readings included
        self._clock = clock
        self._readings: list[ActivityReading] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._opened = threading.Event()
        self._open_error: BaseException | None = None
        self._warned: set[str] = set()

    def start(self) -> None:
        """Open the probe and take the first reading; raise the probe's error if it cannot connect."""
        if self._thread is not None:
            raise RuntimeError("the activity sampler is already started")
        self._thread = threading.Thread(target=self._run, name=f"activity-{self.probe.engine}", daemon=True)
        self._thread.start()
        if not self._opened.wait(START_TIMEOUT):
            self.stop()
            raise TimeoutError(
                f"the {self.probe.engine} activity probe did not connect in {START_TIMEOUT:g} s"
            )
        if self._open_error is not None:
            self._thread.join()
            raise self._open_error

    def stop(self) -> None:
        """Stop reading and close the probe's connection; the readings stay."""
        thread, loop, stopping = self._thread, self._loop, self._stopping
        if thread is None:
            return
        if loop is not None and stopping is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already closed
                loop.call_soon_threadsafe(stopping.set)
        thread.join()

    def readings(self) -> list[ActivityReading]:
        with self._lock:
            return list(self._readings)

    def window(self, start: float, end: float) -> ActivityWindow:
        """The figures over [start, end]: the readings inside it, after the last one at or before
        `start` as the baseline (the first inside it when the sampler started later)."""
        readings = self.readings()
        before = [r for r in readings if r.t <= start]
        inside = [r for r in readings if start < r.t <= end]
        chosen = before[-1:] + inside
        figures = self.probe.figures(chosen) if len(chosen) >= 2 else {}
        return ActivityWindow(self.probe.engine, start, end, len(inside), figures)

    def windows(self, start: float, end: float, step: float = 1.0) -> list[ActivityWindow]:
        """[start, end] cut into windows of `step` seconds (the last one shorter), each with its
        figures: a level second by second, beside its per-second latency."""
        if not step > 0:
            raise ValueError(f"step must be above 0 seconds, not {step!r}")
        # Edges within a nanosecond of the end are the end: 0.1 three times is not quite 0.3.
        edges = [start + k * step for k in range(int((end - start) / step) + 2)]
        edges = [edge for edge in edges if edge < end - 1e-9] + [end]
        return [self.window(a, b) for a, b in itertools.pairwise(edges)]

    # -- the thread --------------------------------------------------------------------------

    def _run(self) -> None:
        began_cpu = time.thread_time()
        try:
            asyncio.run(self._main())
        finally:
            self.cpu_seconds = time.thread_time() - began_cpu

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        try:
            await self.probe.open()
        except BaseException as exc:
            self._open_error = exc
            self._opened.set()
            return
        try:
            began = self._clock()
            await self._take()
            self._opened.set()
            tick = 1
            while True:
                due = began + tick * self.interval
                try:
                    await asyncio.wait_for(self._stopping.wait(), max(due - self._clock(), 0.0))
                    return
                except TimeoutError:
                    pass
                await self._take()
                # A reading that took longer than an interval skips the ticks it missed.
                tick = max(tick + 1, int((self._clock() - began) / self.interval) + 1)
        finally:
            self._opened.set()
            await self.probe.close()

    async def _take(self) -> None:
        try:
            t = self._clock()
            reading = replace(await self.probe.read(), t=t)
        except Exception as exc:  # a sampler must never take the run down with it
            key = type(exc).__name__
            if key not in self._warned:
                self._warned.add(key)
                self.warnings.append(f"an activity reading failed: {key}: {exc}")
            return
        with self._lock:
            self._readings.append(reading)


# -- what probes share -----------------------------------------------------------------------


ConnectionT = TypeVar("ConnectionT")


class Core(Protocol[ConnectionT]):
    """The part of an engine's core a probe uses: one connection, opened and closed its way."""

    async def _connect(self) -> ConnectionT: ...

    async def _disconnect(self, connection: ConnectionT, /) -> None: ...


class ServerProbe(Generic[ConnectionT]):
    """What the probes of a database server share: a connection of their own, opened through the
    engine's core (so a failure is the engine's own error, naming what to fix) and closed without
    raising, and the outside counters."""

    engine: ClassVar[str]

    def __init__(self, core: Core[ConnectionT], counters: Counters | None):
        self._core = core
        self._counters = counters
        self._connection: ConnectionT | None = None

    async def open(self) -> None:
        self._connection = await self._core._connect()

    async def close(self) -> None:
        if self._connection is not None:
            await self._core._disconnect(self._connection)
            self._connection = None

    @property
    def connection(self) -> ConnectionT:
        if self._connection is None:
            raise RuntimeError(f"the {self.engine} activity probe is not open")
        return self._connection


def session_shares(readings: Sequence[ActivityReading], of: str = "active") -> dict[str, float]:
    """Each session state's count summed over the readings, as a share of `of`'s sum (e.g. the
    share of active-session readings that were waiting on a lock), with `active_sessions`, the
    mean of `of` per reading, and `lock_wait_share`, the share of the state "Lock" (0 when active
    sessions never waited on one). Nothing but `active_sessions` when no session was ever `of`:
    a share of nothing is not 0."""
    total = sum(r.sessions.get(of, 0) for r in readings)
    figures = {"active_sessions": total / len(readings) if readings else 0.0}
    if total:
        names = sorted({name for r in readings for name in r.sessions if name != of})
        for name in names:
            figures[f"share.{name}"] = sum(r.sessions.get(name, 0) for r in readings) / total
        figures["lock_wait_share"] = figures.get("share.Lock", 0.0)
    return figures


def differences(first: ActivityReading, last: ActivityReading, names: Mapping[str, str]) -> dict[str, float]:
    """For each counter in `names` (total's name -> figure's name), how much it grew from `first`
    to `last`; a counter that went down (a server restart, a reset) counts from zero."""
    figures = {}
    for total, figure in names.items():
        if total in first.totals and total in last.totals:
            grown = last.totals[total] - first.totals[total]
            figures[figure] = grown if grown >= 0 else last.totals[total]
    return figures


def counter_differences(readings: Sequence[ActivityReading], prefix: str = "counter.") -> dict[str, float]:
    """The outside counters (`Counters`, stored in totals under `prefix`) as differences over
    the window, named without the prefix."""
    names = {name: name[len(prefix) :] for name in readings[-1].totals if name.startswith(prefix)}
    return differences(readings[0], readings[-1], names)


def read_counters(counters: Counters | None, prefix: str = "counter.") -> dict[str, float]:
    """The outside counters now, each stored under `prefix`; nothing when none were given."""
    if counters is None:
        return {}
    return {f"{prefix}{name}": float(value) for name, value in counters().items()}
