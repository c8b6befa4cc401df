"""The open-loop driver: send each request when it is due, whatever the service does, and record it.

One process runs one `Generator`: for every (level, due time) of its part of the ladder it waits
until the request is due and sends it without waiting for earlier ones. A request that finds every
connection busy (the in-flight limit) is counted as "dropped", as k6 counts dropped iterations;
it is never queued, which would quietly turn the open model into a closed one.

Each request is filed under the level in which it was due: its latency from the due time and from
the send, its schedule lag (send - due), and its outcome. Requests due in a level's warm-up are
kept apart and left out of that level's figures. The generator also notes the CPU time it used
per level, so a reporter can flag a level where the generator rather than the service fell behind
(`fell_behind`). A `Recorder` snapshot is plain data (dicts, lists, histogram to_dict()), so
several processes' snapshots merge in the parent (`merge_levels`; `processes.py` runs them).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..histogram import Histogram
from .http import CONNECT, PROTOCOL, TIMEOUT, ConnectionPool, RequestRenderer, ResultCallback
from .mix import Operation
from .schedule import Clock, Ladder, Level, ladder_due_times

DROPPED = "dropped"
OUTCOMES = ("2xx", "3xx", "4xx", "5xx", TIMEOUT, CONNECT, PROTOCOL, DROPPED)
"""Every outcome a request can have, in report order."""
FAILURES = ("4xx", "5xx", TIMEOUT, CONNECT, PROTOCOL, DROPPED)
"""Outcomes that count as failed requests (as k6's http_req_failed: any status outside 200-399)."""
_STATUS_CLASS = {2: "2xx", 3: "3xx", 4: "4xx", 5: "5xx"}
LATE_BURST = 32
"""Requests sent back to back while behind schedule before the driver lets the event loop run."""
HISTOGRAMS = ("latency_from_due", "latency_from_send", "schedule_lag")
"""The histograms of a level snapshot, each a Histogram.to_dict() of microseconds."""


class Target(Protocol):
    """Where requests go: over HTTP to the service, or straight to an engine (direct mode).

    `render` turns an operation into whatever `send` takes; `send` starts it and returns False at
    the in-flight limit (the request is then dropped), else calls `callback(token, result, body)`
    exactly once later, `result` being an HTTP status or a failure cause (`TIMEOUT`, `CONNECT`,
    `PROTOCOL`). Every request settles within `timeout` plus `sweep_interval` seconds.
    """

    timeout: float
    sweep_interval: float

    @property
    def in_flight(self) -> int: ...

    def render(self, op: Operation) -> Any: ...

    def send(self, payload: Any, callback: ResultCallback, token: Any = None) -> bool: ...

    def close(self) -> None: ...


class HttpTarget:
    """The shop service over HTTP/1.1 keep-alive connections, one request in flight on each."""

    def __init__(self, host: str, port: int, in_flight: int, timeout: float):
        self._pool = ConnectionPool(host, port, in_flight, timeout)
        self.render = RequestRenderer(f"{host}:{port}")
        self.send = self._pool.send
        self.close = self._pool.close
        self.timeout = self._pool.timeout
        self.sweep_interval = self._pool.sweep_interval

    @property
    def in_flight(self) -> int:
        return self._pool.in_flight


class LevelRecord:
    """What one process saw of one level (or of its warm-up): histograms, outcomes, CPU use.

    Latency histograms hold responses only (any status); failures without a response are counted
    in `outcomes` alone. `schedule_lag` has one value per request sent, so its count is the
    number sent.
    """

    __slots__ = (
        "cpu_seconds",
        "from_due",
        "from_send",
        "in_flight",
        "lag",
        "level",
        "outcomes",
        "scheduled",
        "started",
        "wall_seconds",
    )

    def __init__(self, level: Level):
        self.level = level
        self.from_due = Histogram()
        self.from_send = Histogram()
        self.lag = Histogram()
        self.outcomes = dict.fromkeys(OUTCOMES, 0)
        self.in_flight = 0
        self.started = False  # the driver reached this level
        self.scheduled = False  # every request due in this level has been sent or dropped
        self.cpu_seconds = 0.0
        self.wall_seconds = 0.0

    @property
    def responses(self) -> int:
        """Requests answered with an HTTP status."""
        return self.from_due.count

    @property
    def failures(self) -> int:
        """Requests that failed, by any cause in FAILURES."""
        return sum(self.outcomes[cause] for cause in FAILURES)


@dataclass(frozen=True)
class LiveView:
    """The current level so far, for live progress (one process's view)."""

    level: int
    rate: float
    """The level's arrival rate over all processes, requests/s."""
    elapsed: float
    """Seconds into the measured part of the level (into the warm-up while warming up)."""
    warming_up: bool
    offered_rate: float
    """Requests due per second so far (sent or dropped)."""
    achieved_rate: float
    """Responses per second so far."""
    p95_ms: float
    """p95 latency from the due time so far, milliseconds."""
    failures: int


def live_view(recorder: Recorder, index: int, t: float) -> LiveView | None:
    """Level `index` of a recorder so far, at run time t; None outside the levels."""
    if not 0 <= index < len(recorder.levels):
        return None
    record = recorder.levels[index]
    level = record.level
    warming_up = t < level.measured_from
    if warming_up:
        record = recorder.warmups[index]
    elapsed = max(t - (level.start if warming_up else level.measured_from), 1e-9)
    tried = record.lag.count + record.outcomes[DROPPED]  # sent or dropped
    return LiveView(
        level=level.index,
        rate=level.rate,
        elapsed=elapsed,
        warming_up=warming_up,
        offered_rate=tried / elapsed,
        achieved_rate=record.responses / elapsed,
        p95_ms=record.from_due.percentile(95) / 1000,
        failures=record.failures,
    )


class Recorder:
    """Per-level records of one generator process, and their snapshot as plain data."""

    def __init__(self, levels: Sequence[Level], part: int = 0, parts: int = 1):
        self.levels = [LevelRecord(level) for level in levels]
        self.warmups = [LevelRecord(level) for level in levels]
        self.part = part
        self.parts = parts
        self.interrupted = False
        self.late_start = 0.0
        """Seconds after the run start at which this process began its schedule (0 if it was ready)."""

    def level_snapshot(self, index: int) -> dict[str, Any]:
        """One level's figures so far as dicts, lists and numbers (JSON-ready; `merge_levels` combines them).

        A level's "state" is "pending" (not reached), "running", "finished" (every request due in
        it has its outcome) or "interrupted" (the run stopped first; "abandoned" counts the
        requests still in flight then, which have no outcome).
        """
        record, warmup = self.levels[index], self.warmups[index]
        level = record.level
        if not record.started:
            state = "pending"
        elif record.scheduled and record.in_flight == 0:
            state = "finished"
        else:
            state = "interrupted" if self.interrupted else "running"
        return {
            "index": level.index,
            "rate": level.rate,
            "start": level.start,
            "hold": level.hold,
            "warmup": level.warmup,
            "state": state,
            "outcomes": dict(record.outcomes),
            "abandoned": record.in_flight,
            "warmup_requests": warmup.lag.count + warmup.outcomes[DROPPED],
            "latency_from_due": record.from_due.to_dict(),
            "latency_from_send": record.from_send.to_dict(),
            "schedule_lag": record.lag.to_dict(),
            "cpu_seconds": record.cpu_seconds,
            "wall_seconds": record.wall_seconds,
            "cpu_share": record.cpu_seconds / record.wall_seconds if record.wall_seconds else 0.0,
        }

    def snapshot(self) -> dict[str, Any]:
        """Every level's figures so far (`level_snapshot`), and the process's own state."""
        return {
            "parts": self.parts,
            "processes": 1,
            "interrupted": self.interrupted,
            "late_start": self.late_start,
            "levels": [self.level_snapshot(index) for index in range(len(self.levels))],
        }


class Generator:
    """Drives one process's part of a ladder against one HTTP target; see the module docstring.

    `operations` must not run out before the ladder does (`mix.operations` never does).
    `in_flight` caps the requests awaiting a response (and the connections); `timeout` bounds
    each request in seconds. Use `run()` once; `recorder` holds the figures, also after a cancel.
    """

    def __init__(
        self,
        ladder: Ladder,
        clock: Clock,
        operations: Iterator[Operation],
        target: Target,
        part: int = 0,
        parts: int = 1,
    ):
        self._ladder = ladder
        self._clock = clock
        self._now = clock.now
        self._operations = operations
        self._target = target
        self._part = part
        self._parts = parts
        self.recorder = Recorder(ladder.levels(), part, parts)
        self._index = -1  # the level the driver is in
        self._cpu_mark = 0.0
        self._wall_mark = 0.0
        self._ran = False

    async def run(self) -> Recorder:
        """Send every request of this part of the ladder on time, wait for the last responses, return.

        Stops by itself after the last level, waiting at most the request timeout for responses
        still in flight. When cancelled (Ctrl-C), it closes its connections and re-raises; the
        levels finished by then keep their figures in `recorder`.
        """
        if self._ran:
            raise RuntimeError("a Generator runs once; make a new one")
        self._ran = True
        # Locals, not attributes, inside the loop: this runs once per request.
        now = self._clock.now
        sleep_until = self._clock.sleep_until
        send = self._target.send
        render = self._target.render
        on_result = self._on_result
        next_operation = self._operations.__next__
        records, warmups = self.recorder.levels, self.recorder.warmups
        measured = warmup = records[0]
        measured_from = 0.0
        index = -1
        late = 0
        try:
            for level, due in ladder_due_times(self._ladder, self._part, self._parts):
                if level.index != index:
                    index = level.index
                    self._enter(index)
                    measured, warmup, measured_from = records[index], warmups[index], level.measured_from
                t = now()
                if due > t:
                    await sleep_until(due)
                    t = now()
                    late = 0
                else:
                    late += 1
                    if late == LATE_BURST:
                        # Behind schedule: let responses in now and then, or a generator that has
                        # fallen behind would send a long burst without reading any answer.
                        late = 0
                        await asyncio.sleep(0)
                        t = now()
                record = measured if due >= measured_from else warmup
                if send(render(next_operation()), on_result, (record, due, t)):
                    record.in_flight += 1
                    record.lag.record(int((t - due) * 1_000_000))
                else:
                    record.outcomes[DROPPED] += 1
            self._enter(len(records))
            await self._drain()
        except asyncio.CancelledError:
            self._stop()
            raise
        finally:
            self._target.close()
        return self.recorder

    def progress(self) -> LiveView | None:
        """The level being sent so far; None before the first request. Call it on the run's loop."""
        return live_view(self.recorder, self._index, self._clock.now())

    def _on_result(
        self, token: tuple[LevelRecord, float, float], result: int | str, body: bytes | None
    ) -> None:
        record, due, sent = token
        t = self._now()
        record.in_flight -= 1
        if result.__class__ is int:
            record.from_due.record(int((t - due) * 1_000_000))
            record.from_send.record(int((t - sent) * 1_000_000))
            record.outcomes[_STATUS_CLASS.get(result // 100, PROTOCOL)] += 1  # type: ignore[operator]
        else:
            record.outcomes[result] += 1  # type: ignore[index]

    def _enter(self, index: int) -> None:
        """Move the driver to level `index` (len(levels) at the end): close the earlier levels."""
        cpu, wall = time.process_time(), self._clock.now()
        records = self.recorder.levels
        if self._index >= 0:
            current = records[self._index]
            current.cpu_seconds += cpu - self._cpu_mark
            current.wall_seconds += wall - self._wall_mark
        else:
            self.recorder.late_start = max(wall, 0.0)
        # Levels skipped over had no request due for this part: they are done as well.
        for skipped in range(max(self._index, 0), min(index, len(records))):
            records[skipped].started = records[skipped].scheduled = True
        if index < len(records):
            records[index].started = True
        self._index, self._cpu_mark, self._wall_mark = index, cpu, wall

    def _stop(self) -> None:
        if 0 <= self._index < len(self.recorder.levels):
            record = self.recorder.levels[self._index]
            record.cpu_seconds += time.process_time() - self._cpu_mark
            record.wall_seconds += self._clock.now() - self._wall_mark
        self.recorder.interrupted = True

    async def _drain(self) -> None:
        await wait_for_answers(self._target)
        last = self.recorder.levels[-1]
        last.cpu_seconds += time.process_time() - self._cpu_mark
        last.wall_seconds += self._clock.now() - self._wall_mark


async def wait_for_answers(target: Target) -> None:
    """Wait until no request is in flight on `target`, or until every one must have settled."""
    # Every request settles within the timeout plus one sweep of the pool; the margin covers
    # the sweep and the callback, so this wait is bounded even if the server never answers.
    deadline = time.monotonic() + target.timeout + 2 * target.sweep_interval + 0.05
    while target.in_flight and time.monotonic() < deadline:
        await asyncio.sleep(0.002)


def fell_behind(
    level: dict[str, Any], max_lag_p99_us: int = 2000, max_cpu_share: float | None = None
) -> list[str]:
    """Why the generator itself may have limited this level snapshot, in words; empty if it kept up.

    A schedule lag p99 above `max_lag_p99_us` means requests left late, so the service saw less
    than the offered rate. A CPU share at or above `max_cpu_share` (e.g. 0.95) means a generator
    process had no time to spare. That check is off by default: MonotonicClock busy-waits the
    last 2 ms before each due time, so with it the share reads near 1 at any rate above 500/s and
    only the lag tells; pass a bound when the clock sleeps instead.
    """
    reasons = []
    lag_p99 = Histogram.from_dict(level["schedule_lag"]).percentile(99)
    if lag_p99 > max_lag_p99_us:
        reasons.append(f"schedule lag p99 {lag_p99 / 1000:.1f} ms is above {max_lag_p99_us / 1000:g} ms")
    if max_cpu_share is not None and level["cpu_share"] >= max_cpu_share:
        reasons.append(f"a generator process used {level['cpu_share']:.0%} of a CPU")
    return reasons


_STATE_ORDER = ("finished", "running", "pending", "interrupted")
_PLAN_KEYS = ("users", "ramp")
"""Keys of a closed-model (users.py) level snapshot that describe the plan, the same in every part."""


def merge_levels(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Combine one level's snapshots from several processes into one of the same shape.

    Histograms merge, counts and CPU seconds add up; the level is only as finished as its least
    finished part; "cpu_share" becomes the largest of any one process, since each process is one
    CPU's worth of generator. A closed-model phase's "users" and "ramp" (users.py) are kept.
    """
    if not parts:
        raise ValueError("merge_levels needs at least one level snapshot")
    level = {key: parts[0][key] for key in ("index", "rate", "start", "hold", "warmup")}
    level |= {key: parts[0][key] for key in _PLAN_KEYS if key in parts[0]}
    level["state"] = max((part["state"] for part in parts), key=_STATE_ORDER.index)
    level["outcomes"] = {cause: sum(part["outcomes"][cause] for part in parts) for cause in OUTCOMES}
    for key in ("abandoned", "warmup_requests", "cpu_seconds"):
        level[key] = sum(part[key] for part in parts)
    for name in HISTOGRAMS:
        histogram = Histogram()
        for part in parts:
            histogram.merge(Histogram.from_dict(part[name]))
        level[name] = histogram.to_dict()
    level["wall_seconds"] = max(part["wall_seconds"] for part in parts)
    level["cpu_share"] = max(part["cpu_share"] for part in parts)
    return level


def merge_snapshots(snapshots: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Combine the snapshots of several processes (parts of one ladder) into one of the same shape;
    "late_start" becomes the largest of any one process."""
    snapshots = list(snapshots)
    if not snapshots:
        raise ValueError("merge_snapshots needs at least one snapshot")
    if len({snapshot["parts"] for snapshot in snapshots}) > 1:
        raise ValueError("merge_snapshots needs snapshots of parts of one ladder (the same `parts`)")
    return {
        "parts": snapshots[0]["parts"],
        "processes": sum(snapshot["processes"] for snapshot in snapshots),
        "interrupted": any(snapshot["interrupted"] for snapshot in snapshots),
        "late_start": max(snapshot["late_start"] for snapshot in snapshots),
        "levels": [
            merge_levels(parts) for parts in zip(*(snapshot["levels"] for snapshot in snapshots), strict=True)
        ],
    }
