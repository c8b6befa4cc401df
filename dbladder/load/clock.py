"""Clocks: an executor asks a clock for the run time and to wait for a due time.

`MonotonicClock` is the real one; `FakeClock` lets tests run a schedule in no time.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any, Protocol


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


def _is_finite_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
