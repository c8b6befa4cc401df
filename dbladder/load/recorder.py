"""The recorder: what one executor process saw, per level, as mergeable plain data.

Each request is filed under the level in which it was due: its latency from the due time and from
the send, its schedule lag (send - due), and its outcome (`OUTCOMES`). Successful answers (2xx,
3xx) go in `from_due`; failures, with the time they took, in a histogram of their own (`failed`),
merged with the answers only when a level's figures are computed (`dbladder.result.level_rows`), so a
request pays for one record, not two. Answers are also counted by when they *arrived*: the answers
received within a level's measured window are what the server gave in that window
(`answered_in_window`), whichever level they were due in, so no level can report more answers per
second than the server gave. Requests due in a level's
warm-up (a closed-model phase's ramp) are kept apart and left out of that level's figures. The
executor also notes the CPU time it used per level, so a reporter can flag a level where the
executor rather than the service fell behind (`fell_behind`).

Every request is also filed under its operation (the workload's operation names, in order):
latency from the due time and outcomes per operation, so a report can show that the write, say,
is what failed a level.

A `Recorder` snapshot is plain data (dicts, lists, histogram to_dict()), so several processes'
snapshots merge in the parent (`merge_levels`, `merge_snapshots`; `fleet.py` runs the processes).
`UsersRecorder` (the closed model) adds the plan's users per level and, per second of the run (by
due time), a histogram of latency from the due time and the failures, from which
`dbladder.result.spike` tells how long p95 took to come back after a spike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..histogram import Histogram
from ..outcomes import DROPPED, FAILURES, OUTCOMES, PROTOCOL
from ..plans import PlannedLevel, UserPlan

STATUS_CLASS = {2: "2xx", 3: "3xx", 4: "4xx", 5: "5xx"}
"""The outcome of an HTTP status, by its hundreds (any other status is a protocol error)."""


class OperationRecord:
    """One operation's share of a level: latency from the due time of its successful answers, and its
    outcomes."""

    __slots__ = ("from_due", "outcomes")

    def __init__(self) -> None:
        self.from_due = Histogram()
        self.outcomes = dict.fromkeys(OUTCOMES, 0)

    def to_dict(self) -> dict[str, Any]:
        return {"latency_from_due": self.from_due.to_dict(), "outcomes": dict(self.outcomes)}


class LevelSecond:
    """One second of a level's measured window: requests due in it that were sent, and those
    dropped (sent + dropped: every request due in it), answers that arrived in it (any status),
    requests due in it that failed (dropped ones too), the latency from the due time of its
    successful answers, and the largest schedule lag (send - due, us) of the requests due in it
    that were sent: a stall's seconds say whether the generator fell behind. `length` is 1 but
    for a window's last part-second, whose counts are that part's (`measured_seconds`)."""

    __slots__ = ("answered", "dropped", "failed", "lag_max", "latency", "length", "sent")

    def __init__(self, length: float = 1.0) -> None:
        self.length = length
        self.sent = 0
        self.dropped = 0
        self.answered = 0
        self.failed = 0
        self.lag_max = 0
        self.latency = Histogram()

    def sent_late(self, lag_us: int) -> None:
        """A request due in this second was sent `lag_us` after its due time."""
        self.sent += 1
        if lag_us > self.lag_max:
            self.lag_max = lag_us

    def to_dict(self) -> dict[str, Any]:
        # to_dict keeps only the non-empty buckets: a second's snapshot is a few hundred bytes.
        return {
            "length_s": self.length,
            "sent": self.sent,
            "dropped": self.dropped,
            "answered": self.answered,
            "failed": self.failed,
            "lag_max_us": self.lag_max,
            "latency_from_due": self.latency.to_dict(),
        }


def measured_seconds(level: PlannedLevel) -> int:
    """How many seconds a level's measured window is split into: its whole seconds and, when it
    does not end on one, the part-second after them (`second_lengths`), so that every request due
    in the window is in exactly one second. The last 1e-9 s of a span is taken as rounding: a
    10 s window built as 9.99 + 0.01 is ten seconds, not ten and a sliver."""
    span = level.end - level.measured_from
    return max(math.ceil(span - 1e-9), 1) if span > 0 else 0


def second_lengths(level: PlannedLevel) -> list[float]:
    """Each second's length in seconds: 1, but for a last part-second (its length, rounded to the
    microsecond: a due time is a float of the run's clock)."""
    count = measured_seconds(level)
    if count == 0:
        return []
    last = round(level.end - level.measured_from - (count - 1), 6)
    return [1.0] * (count - 1) + [min(max(last, 1e-6), 1.0)]


class LevelRecord:
    """What one process saw of one level (or of its warm-up): histograms, outcomes, CPU use.

    `from_due` holds successful answers (2xx, 3xx), `from_send` every answer with a status, `failed`
    every failure (FAILURES) with the time it took from its due time. `schedule_lag` has one value
    per request sent, so its count is the number sent. `operations` holds the latency and outcomes
    per operation, by its index. `answered_in_window` and `ok_in_window` count the answers (any
    status; successful) that arrived within this level's measured window, whenever they were due.
    `seconds` (when asked for: the open model's measured levels, the closed model's holds) holds
    one `LevelSecond` per second of the measured window, a last part-second included
    (`second_at` finds a time's).
    """

    __slots__ = (
        "answered_in_window",
        "cpu_seconds",
        "failed",
        "from_due",
        "from_send",
        "in_flight",
        "lag",
        "level",
        "ok_in_window",
        "operations",
        "outcomes",
        "scheduled",
        "seconds",
        "started",
        "wall_seconds",
    )

    def __init__(self, level: PlannedLevel, operations: int = 1, per_second: bool = False):
        self.level = level
        self.from_due = Histogram()
        self.from_send = Histogram()
        self.lag = Histogram()
        self.failed = Histogram()
        self.answered_in_window = 0
        self.ok_in_window = 0
        self.outcomes = dict.fromkeys(OUTCOMES, 0)
        self.operations = [OperationRecord() for _ in range(operations)]
        self.in_flight = 0
        self.started = False  # the driver reached this level
        self.scheduled = False  # every request due in this level has been sent or dropped
        self.cpu_seconds = 0.0
        self.wall_seconds = 0.0
        self.seconds = [LevelSecond(length) for length in second_lengths(level)] if per_second else []

    def second_at(self, into: float) -> LevelSecond | None:
        """The second of the measured window `into` seconds after its start falls in; None before
        it or without seconds. A time past the last second's end by a float's rounding is its."""
        seconds = self.seconds
        if into < 0 or not seconds:
            return None
        number = int(into)
        return seconds[number] if number < len(seconds) else seconds[-1]

    # -- one request's record, as both executors file it (open.py, closed.py) ------------------

    def sent(self, lag_us: int, second: LevelSecond | None) -> None:
        """A request was sent `lag_us` after its due time (`second`: the measured second it is
        due in, None in a warm-up)."""
        self.in_flight += 1
        self.lag.record(lag_us)
        if second is not None:
            second.sent_late(lag_us)

    def dropped(self, index: int, waited_us: int, second: LevelSecond | None) -> None:
        """A request of operation `index` found no room in flight: a failure `waited_us` after its
        due time (when the generator gave up on it)."""
        self.outcomes[DROPPED] += 1
        self.operations[index].outcomes[DROPPED] += 1
        self.failed.record(waited_us)
        if second is not None:
            second.dropped += 1
            second.failed += 1

    def answered(
        self, t: float, due: float, sent: float, index: int, result: int | str, second: LevelSecond | None
    ) -> int | None:
        """A request of operation `index`, due at `due` and sent at `sent`, ended at `t` (clock
        seconds): `result` is the answer's HTTP status, or the outcome of a request that got none
        (TIMEOUT, CONNECT...). The latency from its due time (us) when it succeeded (2xx, 3xx),
        None when it failed."""
        self.in_flight -= 1
        operation = self.operations[index]
        from_due = int((t - due) * 1_000_000)
        if result.__class__ is int:
            self.from_send.record(int((t - sent) * 1_000_000))
            outcome = STATUS_CLASS.get(result // 100, PROTOCOL)  # type: ignore[operator]
            ok = 200 <= result < 400  # type: ignore[operator]
        else:
            outcome, ok = result, False  # type: ignore[assignment]
        self.outcomes[outcome] += 1
        operation.outcomes[outcome] += 1
        if ok:
            self.from_due.record(from_due)
            operation.from_due.record(from_due)
            if second is not None:
                second.latency.record(from_due)
            return from_due
        self.failed.record(from_due)
        if second is not None:
            second.failed += 1
        return None

    @property
    def responses(self) -> int:
        """Requests answered with an HTTP status."""
        return self.from_send.count

    @property
    def failures(self) -> int:
        """Requests that failed, by any cause in FAILURES."""
        return sum(self.outcomes[cause] for cause in FAILURES)


class Recorder:
    """Per-level records of one generator process, and their snapshot as plain data.

    `operations` names the workload's operations in order: a request's operation index picks its
    per-operation record, and the snapshot keys them by name. `per_second` keeps each measured
    level's seconds (`LevelSecond`); the closed model keeps them for each phase's hold, and a
    run-wide series of its own besides.
    """

    per_second = True

    def __init__(
        self,
        levels: Sequence[PlannedLevel],
        part: int = 0,
        parts: int = 1,
        operations: Sequence[str] = ("request",),
    ):
        self.operations = tuple(operations)
        self.levels = [LevelRecord(level, len(self.operations), self.per_second) for level in levels]
        self.warmups = [LevelRecord(level, len(self.operations)) for level in levels]
        self.part = part
        self.parts = parts
        self.interrupted = False
        self.late_start = 0.0
        """Seconds after the run start at which this process began its schedule (0 if it was ready)."""
        self.timeout = 0.0
        """The request timeout in seconds (the executor sets it): where failures rank in the percentiles."""
        self._window = 0  # the level whose measured window the latest answer arrived in, or before it
        self._window_from = [record.level.measured_from for record in self.levels]
        self._window_end = [record.level.end for record in self.levels]

    def arrived(self, t: float, ok: bool) -> None:
        """Count an answer (`ok`: a successful one) that arrived at run time t in the measured window
        it arrived in, if any. Answers arrive in time order, so the search only ever moves forward."""
        k, ends = self._window, self._window_end
        last = len(ends) - 1
        while k < last and t >= ends[k]:
            k += 1
        self._window = k
        if self._window_from[k] <= t < ends[k]:
            record = self.levels[k]
            record.answered_in_window += 1
            if ok:
                record.ok_in_window += 1
            second = record.second_at(t - self._window_from[k])
            if second is not None:
                second.answered += 1

    def level_state(self, index: int) -> str:
        """Level `index`'s "state" as its snapshot gives it, without building the snapshot."""
        record = self.levels[index]
        if not record.started:
            return "pending"
        if record.scheduled and record.in_flight == 0:
            return "finished"
        return "interrupted" if self.interrupted else "running"

    def level_snapshot(self, index: int) -> dict[str, Any]:
        """One level's figures so far as dicts, lists and numbers (JSON-ready; `merge_levels` combines them).

        A level's "state" is "pending" (not reached), "running", "finished" (every request due in
        it has its outcome) or "interrupted" (the run stopped first; "abandoned" counts the
        requests still in flight then, which have no outcome).
        """
        record, warmup = self.levels[index], self.warmups[index]
        level = record.level
        state = self.level_state(index)
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
            "failed_after": record.failed.to_dict(),
            "answered_in_window": record.answered_in_window,
            "ok_in_window": record.ok_in_window,
            "timeout": self.timeout,
            "operations": {
                name: operation.to_dict()
                for name, operation in zip(self.operations, record.operations, strict=True)
            },
            "cpu_seconds": record.cpu_seconds,
            "wall_seconds": record.wall_seconds,
            "cpu_share": record.cpu_seconds / record.wall_seconds if record.wall_seconds else 0.0,
        } | ({"seconds": [second.to_dict() for second in record.seconds]} if record.seconds else {})

    def snapshot(self) -> dict[str, Any]:
        """Every level's figures so far (`level_snapshot`), and the process's own state."""
        return {
            "parts": self.parts,
            "processes": 1,
            "interrupted": self.interrupted,
            "late_start": self.late_start,
            "levels": [self.level_snapshot(index) for index in range(len(self.levels))],
        }


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


class SecondRecord:
    """One second of the run: latency from the due time of its successful answers, and the
    requests due in it that failed (named as `LevelSecond` names them; "failures" in the snapshot)."""

    __slots__ = ("failed", "latency")

    def __init__(self) -> None:
        self.latency = Histogram()
        self.failed = 0


class UsersRecorder(Recorder):
    """A `Recorder` whose levels are a plan's phases, plus the per-second series.

    Each phase's hold is kept second by second as the open model's levels are (`LevelSecond`).

    Its level snapshots add "users" (the phase's users over all processes) and "ramp" (seconds);
    its snapshot adds "model" ("closed"), "think_min", "think_max" and "per_second":
    [{"t": second of the run, "latency_from_due": Histogram.to_dict(), "failures": n}, ...] for
    every second in which a request was due, failures counting every outcome in
    FAILURES (dropped included).
    """

    def __init__(
        self, plan: UserPlan, part: int = 0, parts: int = 1, operations: Sequence[str] = ("request",)
    ):
        super().__init__(plan.phase_levels(), part, parts, operations)
        self.plan = plan
        self.seconds: dict[int, SecondRecord] = {}

    def level_snapshot(self, index: int) -> dict[str, Any]:
        """The open model's level snapshot, with the phase's "users" and "ramp"."""
        phase = self.plan.phases[index]
        return super().level_snapshot(index) | {"users": phase.users, "ramp": phase.ramp}

    def snapshot(self) -> dict[str, Any]:
        """The open model's snapshot, with the plan's think times and the per-second series."""
        return super().snapshot() | {
            "model": "closed",
            "think_min": self.plan.think_min,
            "think_max": self.plan.think_max,
            "per_second": [
                {"t": t, "latency_from_due": second.latency.to_dict(), "failures": second.failed}
                for t, second in sorted(self.seconds.items())
            ],
        }
