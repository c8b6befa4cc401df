"""The closed model of seed 001: users who each send a request, think 50 to 150 ms, and send the next.

A `UserPlan` is a list of phases, k6-stage style: each phase brings the number of users linearly
from the previous phase's count to its own over `ramp` seconds (0: all at once), then holds it for
`hold` seconds. Figures of a phase are measured over its hold only; requests due during the ramp
are kept apart like the open model's warm-up. Seed 001's levels are `UserPlan.levels()`, its spike
(100 -> 3,000 at once -> 100) is `UserPlan.spike()`.

The request rate is not set by the plan but by the service: n users thinking t seconds on average
and waiting l seconds for an answer send n / (t + l) requests/s, so a slower answer means fewer
requests. A phase's "rate" in the snapshot is n / t, what the users would send if every answer
were instant, and the level's upper bound.

`UsersGenerator` runs one process's users (index % parts == part) and has the open-model
`Generator`'s outward shape: `run()`, `recorder`, `progress()`, and snapshots that
`generator.merge_levels` and `result.level_row` read unchanged. A user is not a coroutine but two
callbacks and an event-loop timer: when its think time ends, a timer sends its next request; when
the answer comes, the callback draws the next think time and sets the next timer. A user costs a
few dict entries and one pending timer or request, so one process holds thousands. Measured with
3,200 users against an in-process target (no sockets), this costs about 10 us of CPU per request,
a coroutine and a sleep per user about 14 us (with less bookkeeping); benchmarks/users.py has the
figures over HTTP.

The "due" time of a request is when its user's think time ended, so the schedule lag (send - due)
shows a generator that fell behind, and latency is recorded from the due time and from the send
as in the open model. The loop's timers have millisecond resolution, so the lag reads about half a
millisecond even when the generator is idle. A send refused at the in-flight limit is counted as
dropped; that user thinks and tries again. The recorder also keeps, per second of the run (by due
time), a histogram of latency from the due time and the failures, so `recovery_seconds` can tell
how long p95 took to come back after a spike.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidConfig
from ..histogram import Histogram
from .generator import (
    _STATUS_CLASS,
    DROPPED,
    PROTOCOL,
    LiveView,
    Recorder,
    Target,
    live_view,
    merge_snapshots,
    wait_for_answers,
)
from .mix import Operation
from .schedule import Clock, Level

MAX_USERS = 1_000_000
"""More users than this in a phase is a typo, not a plan."""
BOUNDARY_MARGIN = 0.1
"""Seconds after a phase ends before it counts as fully sent. The event loop runs timers in order of
their due time, so once the wait for end + margin is over, every think timer due before the end
has fired, even when the loop is running late; the margin covers the timers' millisecond rounding."""
SETTLE_SECONDS = 3
"""Consecutive seconds p95 must stay within bounds for `recovery_seconds` to call it recovered."""


@dataclass(frozen=True)
class Phase:
    """Go to `users` users linearly over `ramp` seconds (0: at once), then hold them `hold` seconds."""

    users: int
    ramp: float
    hold: float


@dataclass(frozen=True)
class UserPlan:
    """Phases of users, and the think time each user waits between an answer and its next request
    (uniform from `think_min` to `think_max` seconds)."""

    phases: tuple[Phase, ...]
    think_min: float = 0.05
    think_max: float = 0.15

    @classmethod
    def levels(
        cls,
        users: Sequence[int] = (100, 200, 400, 800, 1600, 3200),
        ramp: float = 10.0,
        hold: float = 80.0,
        think_min: float = 0.05,
        think_max: float = 0.15,
    ) -> UserPlan:
        """Seed 001's levels: each count of users arrives over `ramp` seconds and is held `hold` seconds."""
        return cls(tuple(Phase(count, ramp, hold) for count in users), think_min, think_max)

    @classmethod
    def spike(
        cls,
        base: int = 100,
        peak: int = 3000,
        hold: float = 60.0,
        ramp: float = 10.0,
        think_min: float = 0.05,
        think_max: float = 0.15,
    ) -> UserPlan:
        """Seed 001's spike: `base` users (arriving over `ramp` seconds), then `peak` at once, then
        `base` again at once, each phase held `hold` seconds."""
        phases = (Phase(base, ramp, hold), Phase(peak, 0.0, hold), Phase(base, 0.0, hold))
        return cls(phases, think_min, think_max)

    @property
    def is_spike(self) -> bool:
        """Whether the busiest phase has a quieter phase before and after it (seed 001's spike)."""
        counts = [phase.users for phase in self.phases]
        peak = counts.index(max(counts))
        return 0 < peak < len(counts) - 1 and counts[peak - 1] < counts[peak] > counts[peak + 1]

    def validate(self) -> list[str]:
        """Every problem with the plan, each naming its field; empty when it is valid."""
        problems = []
        if not (isinstance(self.phases, tuple | list) and self.phases):
            problems.append(f"phases must be a non-empty tuple of Phase, not {self.phases!r}")
        else:
            for i, phase in enumerate(self.phases):
                if not isinstance(phase, Phase):
                    problems.append(f"phases[{i}] must be a Phase, not {phase!r}")
                    continue
                if not (_is_whole(phase.users) and 0 <= phase.users <= MAX_USERS):
                    problems.append(
                        f"phases[{i}].users must be a whole number from 0 to {MAX_USERS:,}, "
                        f"not {phase.users!r}"
                    )
                if not (_is_finite(phase.ramp) and phase.ramp >= 0):
                    problems.append(f"phases[{i}].ramp must be 0 seconds or more, not {phase.ramp!r}")
                if not (_is_finite(phase.hold) and phase.hold > 0):
                    problems.append(f"phases[{i}].hold must be above 0 seconds, not {phase.hold!r}")
            counts = [phase.users for phase in self.phases if isinstance(phase, Phase)]
            if counts and all(_is_whole(count) for count in counts) and not any(counts):
                problems.append("phases must have at least one phase with users above 0")
        low_ok = _is_finite(self.think_min) and self.think_min >= 0
        if not low_ok:
            problems.append(f"think_min must be 0 seconds or more, not {self.think_min!r}")
        if not (_is_finite(self.think_max) and self.think_max > 0):
            # A think time of 0 would make users with a failing target spin without end.
            problems.append(f"think_max must be above 0 seconds, not {self.think_max!r}")
        elif low_ok and self.think_max < self.think_min:
            problems.append(
                f"think_max must be at least think_min ({self.think_min} s), not {self.think_max}"
            )
        return problems

    def checked(self) -> UserPlan:
        """This plan, or InvalidConfig listing every problem."""
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self

    @property
    def duration(self) -> float:
        """Seconds from the run start to the end of the last phase."""
        return sum(phase.ramp + phase.hold for phase in self.phases)

    @property
    def think_mean(self) -> float:
        """The mean think time in seconds."""
        return (self.think_min + self.think_max) / 2

    def phase_levels(self) -> list[Level]:
        """The phases as the recorder's levels: `start` is the ramp's start, `warmup` the ramp, `hold`
        ramp + hold, and `rate` users / mean think time (the most the users can send)."""
        levels, start = [], 0.0
        for i, phase in enumerate(self.checked().phases):
            rate = phase.users / self.think_mean
            levels.append(
                Level(index=i, rate=rate, start=start, hold=phase.ramp + phase.hold, warmup=phase.ramp)
            )
            start += phase.ramp + phase.hold
        return levels

    def users_at(self, t: float) -> float:
        """How many users the plan has at run time t, over all processes (fractional during a ramp)."""
        previous = 0
        for level, phase in zip(self.phase_levels(), self.phases, strict=True):
            if t < level.measured_from:
                if t < level.start:
                    return previous
                return previous + (phase.users - previous) * (t - level.start) / phase.ramp
            if t < level.end:
                return phase.users
            previous = phase.users
        return 0

    def intervals(self, user: int) -> list[tuple[float, float]]:
        """When user number `user` (from 0) is active: [(start, stop), ...] in run time.

        During a ramp from p to n users the count is p + (n - p) * (t - start) / ramp, and user k
        is active while the count is above k: going up, user k (p <= k < n) starts at
        start + ramp * (k - p) / (n - p); going down, user k (n <= k < p) stops at
        start + ramp * (p - k) / (p - n). So the first new user starts with the ramp and the count
        reaches n as the ramp ends. Every user stops at the end of the plan.
        """
        return _spans(user, self.phase_levels(), self.phases, self.duration)

    def all_intervals(self, users: Iterable[int]) -> dict[int, list[tuple[float, float]]]:
        """`intervals(user)` for each of `users`, computed in one go."""
        levels, phases, duration = self.phase_levels(), self.phases, self.duration
        return {user: _spans(user, levels, phases, duration) for user in users}


def _spans(
    user: int, levels: Sequence[Level], phases: Sequence[Phase], duration: float
) -> list[tuple[float, float]]:
    spans: list[tuple[float, float]] = []
    since: float | None = None
    previous = 0
    for level, phase in zip(levels, phases, strict=True):
        count = phase.users
        if since is None and previous <= user < count:
            since = level.start + phase.ramp * (user - previous) / (count - previous)
        elif since is not None and count <= user < previous:
            spans.append((since, level.start + phase.ramp * (previous - user) / (previous - count)))
            since = None
        previous = count
    if since is not None:
        spans.append((since, duration))
    return spans


class _Second:
    """One second of the run: latency from the due time of its answered requests, and its failures."""

    __slots__ = ("failures", "latency")

    def __init__(self) -> None:
        self.latency = Histogram()
        self.failures = 0


class UsersRecorder(Recorder):
    """A `Recorder` whose levels are a plan's phases, plus the per-second series.

    Its level snapshots add "users" (the phase's users over all processes) and "ramp" (seconds);
    its snapshot adds "model" ("closed"), "think_min", "think_max" and "per_second":
    [{"t": second of the run, "latency_from_due": Histogram.to_dict(), "failures": n}, ...] for
    every second in which a request was due, failures counting every outcome in
    generator.FAILURES (dropped included).
    """

    def __init__(self, plan: UserPlan, part: int = 0, parts: int = 1):
        super().__init__(plan.phase_levels(), part, parts)
        self.plan = plan
        self.seconds: dict[int, _Second] = {}

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
                {"t": t, "latency_from_due": second.latency.to_dict(), "failures": second.failures}
                for t, second in sorted(self.seconds.items())
            ],
        }


class UsersGenerator:
    """Runs one process's users of a plan against one target; see the module docstring.

    `operations` must not run out (`mix.operations` never does). The think-time waits are event
    loop timers, so `clock` must run in real time (MonotonicClock), on the same clock as the loop
    (CLOCK_MONOTONIC, as time.monotonic and time.perf_counter are on Linux). Use `run()` once;
    `recorder` holds the figures, also after a cancel.
    """

    def __init__(
        self,
        plan: UserPlan,
        clock: Clock,
        operations: Iterator[Operation],
        target: Target,
        part: int = 0,
        parts: int = 1,
    ):
        plan.checked()
        if not (_is_whole(parts) and parts >= 1):
            raise ValueError(f"parts must be a whole number, 1 or more, not {parts!r}")
        if not (_is_whole(part) and 0 <= part < parts):
            raise ValueError(f"part must be a whole number from 0 to {parts - 1}, not {part!r}")
        self.plan = plan
        self._clock = clock
        self._operations = operations
        self._target = target
        self.part = part
        self.parts = parts
        self.users = range(part, max(phase.users for phase in plan.phases), parts)
        """The user numbers this process runs (every `parts`-th, from `part`)."""
        self.recorder = UsersRecorder(plan, part, parts)
        self._spans = plan.all_intervals(self.users)  # here, not in run(): 3,200 users take a while
        self._index = -1  # the phase the run is in
        self._cpu_mark = 0.0
        self._wall_mark = 0.0
        self._ran = False

    async def run(self) -> Recorder:
        """Run every user of this part through the plan, wait for the last answers, return.

        Stops by itself after the last phase, waiting at most the request timeout for answers
        still in flight. When cancelled (Ctrl-C), it stops every user, closes its connections and
        re-raises; the phases finished by then keep their figures in `recorder`.
        """
        if self._ran:
            raise RuntimeError("a UsersGenerator runs once; make a new one")
        self._ran = True
        loop = asyncio.get_running_loop()
        # Locals, not attributes, in the callbacks: they run twice per request.
        now = self._clock.now
        # The loop's timers run on CLOCK_MONOTONIC; converting a due time once with a fixed offset
        # (rather than call_later(delay)) matters on uvloop, whose loop.time() is cached at the
        # start of each loop iteration: a delay counted from that stale time would fire early by
        # however long the iteration has run, and shorten think times without it showing as lag.
        offset = time.monotonic() - now()
        call_at = loop.call_at
        send = self._target.send
        render = self._target.render
        next_operation = self._operations.__next__
        think_min, think_span = self.plan.think_min, self.plan.think_max - self.plan.think_min
        uniform = random.Random(f"dbladder.users:{self.part}").random
        records, warmups = self.recorder.levels, self.recorder.warmups
        # Requests are filed by due time: segment 2i is phase i's ramp, 2i + 1 its hold.
        segments = [record for pair in zip(warmups, records, strict=True) for record in pair]
        boundaries = []
        for record in records:
            boundaries += [record.level.measured_from, record.level.end]
        boundaries.pop()
        seconds = self.recorder.seconds
        status_class = _STATUS_CLASS
        spans = self._spans
        span_index = dict.fromkeys(self.users, 0)
        stops = {user: user_spans[0][1] for user, user_spans in spans.items() if user_spans}
        stopped = False

        def fire(user: int, due: float) -> None:
            """The user's think time is over: send its next request (or stop or sleep on)."""
            if stopped:
                return
            if due >= stops[user]:
                next_span(user, due)
                return
            t = now()
            if t < due:
                due = t  # a timer fired early (millisecond resolution): the think was that much short
            second = seconds.get(int(due))
            if second is None:
                second = seconds[int(due)] = _Second()
            record = segments[bisect_right(boundaries, due)]
            if send(render(next_operation()), on_result, (user, record, second, due, t)):
                record.in_flight += 1
                record.lag.record(int((t - due) * 1_000_000))
            else:
                record.outcomes[DROPPED] += 1
                second.failures += 1
                due = t + think_min + think_span * uniform()
                call_at(due + offset, fire, user, due)

        def on_result(token: tuple[Any, ...], result: int | str, body: bytes | None) -> None:
            """An answer (or failure): record it, then think and go again."""
            user, record, second, due, sent = token
            t = now()
            record.in_flight -= 1
            if result.__class__ is int:
                from_due = int((t - due) * 1_000_000)
                record.from_due.record(from_due)
                record.from_send.record(int((t - sent) * 1_000_000))
                second.latency.record(from_due)
                record.outcomes[status_class.get(result // 100, PROTOCOL)] += 1  # type: ignore[operator]
                if not 200 <= result < 400:  # type: ignore[operator]
                    second.failures += 1
            else:
                record.outcomes[result] += 1
                second.failures += 1
            if stopped:
                return
            due = t + think_min + think_span * uniform()
            call_at(due + offset, fire, user, due)

        def next_span(user: int, due: float) -> None:
            """The user's active span has ended: wait for its next one, if it has one."""
            index = span_index[user] + 1
            if index == len(spans[user]):
                return
            span_index[user] = index
            start, stops[user] = spans[user][index]
            due = max(due, start)
            call_at(due + offset, fire, user, due)

        self._enter(0)
        for user, user_spans in spans.items():
            if user_spans:
                start = user_spans[0][0]
                call_at(start + offset, fire, user, start)
        try:
            for index, record in enumerate(records):
                await self._clock.sleep_until(record.level.end)
                self._enter(index + 1)
                # Phase `index` counts as fully sent once timers due before its end had time to run.
                await self._clock.sleep_until(record.level.end + BOUNDARY_MARGIN)
                record.scheduled = True
            stopped = True
            await wait_for_answers(self._target)
        except asyncio.CancelledError:
            stopped = True
            self._enter(len(records))
            self.recorder.interrupted = True
            raise
        finally:
            self._target.close()
        return self.recorder

    def progress(self) -> LiveView | None:
        """The current phase so far; None before the run starts or after the plan ends.

        `rate` is the phase's users / mean think time; the offered rate counts sends tried.
        Call it on the run's loop.
        """
        return live_view(self.recorder, self._index, self._clock.now())

    def _enter(self, index: int) -> None:
        """Move to phase `index` (len(phases) at the end): close the CPU and wall time of the last."""
        cpu, wall = time.process_time(), self._clock.now()
        records = self.recorder.levels
        if 0 <= self._index < len(records):
            current = records[self._index]
            current.cpu_seconds += cpu - self._cpu_mark
            current.wall_seconds += wall - self._wall_mark
        elif self._index < 0:
            self.recorder.late_start = max(wall, 0.0)
        if index < len(records):
            records[index].started = True
        self._index, self._cpu_mark, self._wall_mark = index, cpu, wall


# ---------------------------------------------------------------------------------------------
# The per-second series: merging, and the time p95 takes to come back after a spike.


def merge_per_second(series: Iterable[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Combine several processes' per-second series into one: histograms merge, failures add up."""
    merged: dict[int, tuple[Histogram, list[int]]] = {}
    for one in series:
        for entry in one:
            histogram, failures = merged.setdefault(entry["t"], (Histogram(), [0]))
            histogram.merge(Histogram.from_dict(entry["latency_from_due"]))
            failures[0] += entry["failures"]
    return [
        {"t": t, "latency_from_due": histogram.to_dict(), "failures": failures[0]}
        for t, (histogram, failures) in sorted(merged.items())
    ]


def merge_users_snapshots(snapshots: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """`generator.merge_snapshots` for closed-model snapshots: also the think times and the merged
    per-second series."""
    snapshots = list(snapshots)
    merged = merge_snapshots(snapshots)
    for key in ("model", "think_min", "think_max"):
        merged[key] = snapshots[0][key]
    merged["per_second"] = merge_per_second(snapshot["per_second"] for snapshot in snapshots)
    return merged


def p95_series(series: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per second: {"t", "p95_ms", "responses", "failures"}, for a plot or a table."""
    rows = []
    for entry in series:
        histogram = Histogram.from_dict(entry["latency_from_due"])
        rows.append(
            {
                "t": entry["t"],
                "p95_ms": histogram.percentile(95) / 1000,
                "responses": histogram.count,
                "failures": entry["failures"],
            }
        )
    return rows


def recovery_seconds(
    series: Sequence[dict[str, Any]],
    before_p95: float,
    start: float,
    tolerance: float = 0.2,
    settle: int = SETTLE_SECONDS,
) -> float | None:
    """Seconds after `start` (the spike's end, in run time) until p95 is back within `tolerance` of
    `before_p95`, to whole seconds; None if it never is.

    `series` is a per-second series (`UsersRecorder.snapshot()["per_second"]`, merged or not) and
    `before_p95` the pre-spike p95 in microseconds, like the histograms. Recovered means: the
    first whole second at or after `start` from which p95 stays at or below
    before_p95 * (1 + tolerance) for `settle` consecutive seconds; a second with no answer does not
    count as recovered. The answer is that second's start minus `start`: 0 if the first second
    after the spike was already back.
    """
    if not (_is_finite(before_p95) and before_p95 >= 0):
        raise ValueError(f"before_p95 must be 0 microseconds or more, not {before_p95!r}")
    if not (_is_finite(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance must be 0 or more, not {tolerance!r}")
    if not (_is_whole(settle) and settle >= 1):
        raise ValueError(f"settle must be a whole number of seconds, 1 or more, not {settle!r}")
    bound = before_p95 * (1 + tolerance)
    p95: dict[int, int | None] = {}
    for entry in series:
        histogram = Histogram.from_dict(entry["latency_from_due"])
        p95[entry["t"]] = histogram.percentile(95) if histogram.count else None
    if not p95:
        return None
    run = 0  # seconds in a row within the bound, up to t
    for t in range(math.ceil(start), max(p95) + 1):
        value = p95.get(t)
        run = run + 1 if value is not None and value <= bound else 0
        if run == settle:
            return float(t - settle + 1) - start
    return None


def spike_recovery(snapshot: dict[str, Any], tolerance: float = 0.2) -> float | None:
    """`recovery_seconds` for a spike run's snapshot (e.g. of `UserPlan.spike()`): the pre-spike p95
    is that of the hold before the phase with the most users, and the spike ends where the phase
    after it starts. None if it never recovered; ValueError if the plan has no such phases."""
    levels = snapshot["levels"]
    peak = max(range(len(levels)), key=lambda i: levels[i]["users"])
    if not 0 < peak < len(levels) - 1:
        raise ValueError("a spike needs a phase before and after the one with the most users")
    before = Histogram.from_dict(levels[peak - 1]["latency_from_due"])
    if not before.count:
        raise ValueError(f"phase {peak - 1} (before the spike) has no answered request to compare with")
    return recovery_seconds(
        snapshot["per_second"], before.percentile(95), levels[peak + 1]["start"], tolerance
    )


def _is_finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
