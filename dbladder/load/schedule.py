"""When each request is due: the open-model ladder of seed 000.

The load is open: requests are due at fixed times whatever the service does, like k6's
ramping-arrival-rate executor, but in steps. A ladder holds `start` requests/s for `hold` seconds,
then `start + step`, and so on for `steps` levels. The first `warmup` seconds of each level are
sent but not measured.

Due times are offsets in seconds from the run start. Within a level the i-th request is due at
exactly `level.start + i / level.rate`, computed from i rather than by adding 1/rate to the last
due time: a sum of 25,200 floats of 1/7 (an hour at 7 requests/s) drifts, a division does not.
Several generator processes share one schedule by each taking every `parts`-th request.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import InvalidConfig

# A ladder beyond this many requests is a typo (a hold in milliseconds, a step in requests/min),
# not a plan: at 100,000 requests/s it would take almost three hours.
MAX_REQUESTS = 1_000_000_000


@dataclass(frozen=True)
class Level:
    """One step of a ladder: `rate` requests/s for `hold` seconds from `start` (seconds into the run)."""

    index: int
    rate: float
    start: float
    hold: float
    warmup: float

    @property
    def end(self) -> float:
        """When the level ends: no request of this level is due at or after it."""
        return self.start + self.hold

    @property
    def measured_from(self) -> float:
        """When the warm-up ends and measuring starts."""
        return self.start + self.warmup

    @property
    def requests(self) -> int:
        """How many requests are due in this level, over all parts: about rate * hold."""
        # Count the i with start + i / rate < end, the test due_times() uses. The product
        # hold * rate is the exact answer rounded up, but floats may put it one off either way.
        count = math.ceil(self.hold * self.rate)
        while count > 0 and self.start + (count - 1) / self.rate >= self.end:
            count -= 1
        while self.start + count / self.rate < self.end:
            count += 1
        return count


@dataclass(frozen=True)
class Ladder:
    """A step ladder of arrival rates: rates in requests/s, durations in seconds."""

    start: float
    step: float
    steps: int
    hold: float
    warmup: float = 0.0

    def validate(self) -> list[str]:
        """Every problem with the ladder, each naming its field; empty when it is valid."""
        problems = []
        numbers = {"start": self.start, "step": self.step, "hold": self.hold, "warmup": self.warmup}
        finite = {name: _is_finite_number(value) for name, value in numbers.items()}
        for name, ok in finite.items():
            if not ok:
                problems.append(f"{name} must be a finite number, not {numbers[name]!r}")
        if finite["start"] and not self.start > 0:
            problems.append(f"start must be above 0 requests/s, not {self.start}")
        if finite["step"] and not self.step >= 0:
            problems.append(f"step must be 0 or more requests/s, not {self.step}")
        steps_ok = isinstance(self.steps, int) and not isinstance(self.steps, bool) and self.steps >= 1
        if not steps_ok:
            problems.append(f"steps must be a whole number, 1 or more, not {self.steps!r}")
        hold_ok = finite["hold"] and self.hold > 0
        if finite["hold"] and not hold_ok:
            problems.append(f"hold must be above 0 seconds, not {self.hold}")
        if finite["warmup"] and not self.warmup >= 0:
            problems.append(f"warmup must be 0 seconds or more, not {self.warmup}")
        elif finite["warmup"] and hold_ok and not self.warmup < self.hold:
            problems.append(f"warmup must be less than hold ({self.hold} s), or nothing is measured")
        if not problems:
            total = self.total_requests()
            if total > MAX_REQUESTS:
                problems.append(
                    f"the ladder would send {total:,.0f} requests, more than {MAX_REQUESTS:,}: "
                    "lower start, step, steps or hold"
                )
        return problems

    def checked(self) -> Ladder:
        """This ladder, or InvalidConfig listing every problem."""
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self

    def total_requests(self) -> float:
        """About how many requests the whole ladder sends: the sum of rate * hold over its levels."""
        # Rates rise linearly, so their sum is steps * start + step * (0 + 1 + ... + steps-1).
        return self.hold * (self.steps * self.start + self.step * self.steps * (self.steps - 1) / 2)

    @property
    def duration(self) -> float:
        """Seconds from the run start to the end of the last level."""
        return self.steps * self.hold

    def levels(self) -> list[Level]:
        """The ladder's levels in order; raises InvalidConfig if the ladder is invalid."""
        self.checked()
        # Each start is index * hold, not a running sum, for the same reason due times are.
        hold, warmup = self.hold, self.warmup
        return [
            Level(index=i, rate=self.start + i * self.step, start=i * hold, hold=hold, warmup=warmup)
            for i in range(self.steps)
        ]


def due_times(level: Level, part: int = 0, parts: int = 1) -> Iterator[float]:
    """The offsets from the run start at which this part's requests of `level` are due, in order.

    Request i is due at level.start + i / level.rate, for every i from 0 with a due time before
    level.end. Part `part` of `parts` takes i = part, part + parts, part + 2 * parts, ...; the
    parts together cover every request exactly once.
    """
    _check_part(part, parts)
    start, rate = level.start, level.rate
    for i in range(part, level.requests, parts):
        yield start + i / rate


def ladder_due_times(ladder: Ladder, part: int = 0, parts: int = 1) -> Iterator[tuple[Level, float]]:
    """(level, due time) for this part's requests over the whole ladder, in order."""
    _check_part(part, parts)
    for level in ladder.levels():
        for due in due_times(level, part, parts):
            yield level, due


def _check_part(part: int, parts: int) -> None:
    if not (isinstance(parts, int) and parts >= 1):
        raise ValueError(f"parts must be a whole number, 1 or more, not {parts!r}")
    if not (isinstance(part, int) and 0 <= part < parts):
        raise ValueError(f"part must be a whole number from 0 to {parts - 1}, not {part!r}")


def _is_finite_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


# ---------------------------------------------------------------------------------------------
# Clocks: the generator asks a clock for the time and to wait for a due time, so tests can run a
# schedule in no time with FakeClock.


class Clock(Protocol):
    """Seconds since the run start, and a way to wait until a given one."""

    def now(self) -> float:
        """Seconds since the run start."""
        ...

    async def sleep_until(self, t: float) -> None:
        """Return at run time t or just after; always lets other tasks run at least once."""
        ...


MIN_SLEEP = 0.001
"""The shortest sleep of a sleeping MonotonicClock (spin=0), seconds: one tick of the loop's timers."""


class MonotonicClock:
    """The real clock: time.perf_counter, with the run start at construction (`origin`)."""

    # asyncio.sleep is coarse on Linux: the selector rounds its timeout up to whole milliseconds
    # (selectors.EpollSelector), and the wake-up then takes a scheduler round trip. So the clock
    # sleeps until `spin` seconds (default 2 ms, more than the rounding) before the due time and
    # then yields to the event loop (asyncio.sleep(0), about 3 us a round when idle) until the
    # time has come, while in-flight requests keep running. Measured on a busy 2-CPU VM, 500 due
    # times 3 ms apart: plain asyncio.sleep (spin=0) woke a median 0.7 ms late, this a median 2 us
    # late; only preemption by the OS (the p99, 3-4 ms there either way) is beyond its reach. The
    # price is a busy generator process: at rates above 1/spin it never sleeps.

    def __init__(self, spin: float = 0.002) -> None:
        if not (_is_finite_number(spin) and spin >= 0):
            raise ValueError(f"spin must be 0 or more seconds, not {spin!r}")
        self.spin = spin
        self.origin = time.perf_counter()

    def now(self) -> float:
        """Seconds since this clock was made."""
        return time.perf_counter() - self.origin

    async def sleep_until(self, t: float) -> None:
        """Wait until run time t: sleep to within `spin` of it, then yield until it has come.

        With spin=0 it only sleeps: uvloop's timers count whole milliseconds and a shorter sleep
        returns at once, so waiting out a sub-millisecond remainder by yielding would busy-wait
        after all (seen as a generator at 99 % of a CPU at 2,000 req/s). It sleeps at least
        MIN_SLEEP instead: a request may leave up to about a millisecond late, which its latency
        from the due time counts, and the requests due meanwhile leave together when it wakes.
        """
        if self.spin == 0:
            while (remaining := t - self.now()) > 0:
                await asyncio.sleep(max(remaining, MIN_SLEEP))
            return
        remaining = t - self.now()
        if remaining > self.spin:
            await asyncio.sleep(remaining - self.spin)
        # Yield at least once even when already late, so a generator that has fallen behind still
        # lets the requests it started make progress.
        await asyncio.sleep(0)
        while self.now() < t:
            await asyncio.sleep(0)


class FakeClock:
    """A clock for tests: time moves only by advance() or by awaiting sleep_until().

    Meant for one sleeper at a time (the generator's dispatch loop): sleep_until(t) jumps to t at
    once, so two tasks sleeping concurrently would not wake in time order.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self.sleeps: list[float] = []  # every time sleep_until was asked for, in order

    def now(self) -> float:
        """The fake time."""
        return self._now

    def advance(self, seconds: float) -> None:
        """Move time forward by `seconds` (never back)."""
        if not seconds >= 0:
            raise ValueError(f"a clock only moves forward, not by {seconds!r} s")
        self._now += seconds

    async def sleep_until(self, t: float) -> None:
        """Jump to t unless time is already past it, and yield to the event loop once."""
        self.sleeps.append(t)
        self._now = max(self._now, t)
        await asyncio.sleep(0)
