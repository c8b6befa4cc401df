"""The closed model: users who each send a request, think 50 to 150 ms, and send the next.

The request rate is not set by the plan (`..plans.UserPlan`) but by the service: n users thinking
t seconds on average and waiting l seconds for an answer send n / (t + l) requests/s, so a slower
answer means fewer requests. A phase's "rate" in the snapshot is n / t, what the users would send
if every answer were instant, and the level's upper bound.

`UsersGenerator` runs one process's users (index % parts == part) on the open model's skeleton
(`Executor`): `run()`, `recorder`, `progress()`, and snapshots that `merge.merge_levels` and
`dbladder.result.level_rows.level_row` read unchanged. A user is not a coroutine but two callbacks and
an event-loop timer: when its think time ends, a timer sends its next request; when the answer
comes, the callback draws the next think time and sets the next timer. A user costs a few dict
entries and one pending timer or request, so one process holds thousands. Measured with 3,200
users against an in-process target (no sockets), this costs about 10 us of CPU per request, a
coroutine and a sleep per user about 14 us (with less bookkeeping); benchmarks/users.py has the
figures over HTTP.

The "due" time of a request is when its user's think time ended, so the schedule lag (send - due)
shows a generator that fell behind, and latency is recorded from the due time and from the send
as in the open model. The loop's timers have millisecond resolution, so the lag reads about half a
millisecond even when the generator is idle. A send refused at the in-flight limit is counted as
dropped; that user thinks and tries again. Each phase's hold is kept second by second as the
open model's levels are (`LevelSecond`, by due time: sent, answered, failed, latency), for the
per-second plot and the diagnosis; the recorder (`UsersRecorder`) also keeps, per second of the
whole run, a histogram of latency from the due time and the failures, so `dbladder.result.spike`
can tell how long p95 took to come back after a spike.
"""

from __future__ import annotations

import asyncio
import random
import time
from bisect import bisect_right
from collections.abc import Iterator
from typing import Any

from ...plans import UserPlan
from ..clock import Clock
from ..mix import Request
from ..recorder import SecondRecord, UsersRecorder
from ..targets import RequestTarget
from . import Executor

BOUNDARY_MARGIN = 0.1
"""Seconds after a phase ends before it counts as fully sent. The event loop runs timers in order of
their due time, so once the wait for end + margin is over, every think timer due before the end
has fired, even when the loop is running late; the margin covers the timers' millisecond rounding."""


class UsersGenerator(Executor):
    """Runs one process's users of a plan against one target; see the module docstring.

    `operations` must not run out (`mix.requests` never does); `operation_names` names the
    workload's operations in order, for the per-operation figures. The think-time waits are event
    loop timers, so `clock` must run in real time (MonotonicClock), on the same clock as the loop
    (CLOCK_MONOTONIC, as time.monotonic and time.perf_counter are on Linux). Use `run()` once;
    `recorder` holds the figures, also after a cancel. The `rate` of `progress()` is the phase's
    users / mean think time; its offered rate counts sends tried.
    """

    recorder: UsersRecorder

    def __init__(
        self,
        plan: UserPlan,
        clock: Clock,
        operations: Iterator[Request],
        target: RequestTarget,
        part: int = 0,
        parts: int = 1,
        *,
        operation_names: tuple[str, ...],
    ):
        plan.checked()
        if not (_is_whole(parts) and parts >= 1):
            raise ValueError(f"parts must be a whole number, 1 or more, not {parts!r}")
        if not (_is_whole(part) and 0 <= part < parts):
            raise ValueError(f"part must be a whole number from 0 to {parts - 1}, not {part!r}")
        super().__init__(clock, operations, target, UsersRecorder(plan, part, parts, operation_names))
        self.plan = plan
        self.part = part
        self.parts = parts
        self.users = range(part, max(phase.users for phase in plan.phases), parts)
        """The user numbers this process runs (every `parts`-th, from `part`)."""
        self._spans = plan.all_intervals(self.users)  # here, not in run(): 3,200 users take a while

    async def _drive(self) -> None:
        """Run every user of this part through the plan; stop them all at its end or when cancelled."""
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
        next_request = self._operations.__next__
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
        arrived = self.recorder.arrived
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
                second = seconds[int(due)] = SecondRecord()
            record = segments[bisect_right(boundaries, due)]
            # A phase's hold second by second (its ramp's records keep no seconds).
            level_second = record.second_at(due - record.level.measured_from)
            request = next_request()
            if send(render(request), on_result, (user, record, second, due, t, request[0], level_second)):
                record.sent(int((t - due) * 1_000_000), level_second)
            else:
                record.dropped(request[0], int((t - due) * 1_000_000), level_second)
                second.failed += 1
                due = t + think_min + think_span * uniform()
                call_at(due + offset, fire, user, due)

        def on_result(token: tuple[Any, ...], result: int | str, body: bytes | None) -> None:
            """An answer (or failure): record it, then think and go again."""
            user, record, second, due, sent, index, level_second = token
            t = now()
            latency = record.answered(t, due, sent, index, result, level_second)
            if latency is None:
                second.failed += 1
            else:
                second.latency.record(latency)
            if result.__class__ is int:  # an answer arrived (any status): counted by when it did
                arrived(t, latency is not None)
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
        finally:
            # At the end, and when cancelled: no user sends again or sets another timer.
            stopped = True


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
