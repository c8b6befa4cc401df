"""How far an agent's clock is from the coordinator's (`ClockOffset`), by the fastest of a few pings.

No latency ever compares two machines' clocks: a request's due time and its answer are both
taken on the load machine. The offsets only put one run start on every machine (the
coordinator's origin, translated into each agent's clock) and the hosts' samples in the levels'
windows. A ping reads the coordinator's clock t0, the agent's a, then the coordinator's t1: the
agent read its clock somewhere in [t0, t1], so a - (t0 + t1) / 2 is the offset within half the
round trip; the fastest of a few dozen pings has the smallest bound (Cristian's algorithm).

The clock is time.perf_counter() (CLOCK_MONOTONIC on Linux, what the generator processes schedule
by). DBLADDER_TEST_CLOCK_SHIFT (seconds, tests only) shifts an agent's clock, so a test on one
machine can check that a known offset is found.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

PINGS = 40
SHIFT_ENV = "DBLADDER_TEST_CLOCK_SHIFT"


def shift() -> float:
    """The test's shift of this agent's clock, seconds (0 outside tests)."""
    return float(os.environ.get(SHIFT_ENV, "0") or 0)


def agent_clock() -> float:
    """The clock an agent reports to the coordinator's pings."""
    return time.perf_counter() + shift()


@dataclass(frozen=True)
class ClockOffset:
    """The agent's clock minus the coordinator's, seconds, within +- `bound`; `round_trip` the
    fastest ping's, over `pings` pings."""

    offset: float
    bound: float
    round_trip: float
    pings: int

    def to_dict(self) -> dict[str, float | int]:
        return {
            "offset_s": self.offset,
            "bound_s": self.bound,
            "round_trip_s": self.round_trip,
            "pings": self.pings,
        }


def measure(
    ping: Callable[[], float], pings: int = PINGS, clock: Callable[[], float] = time.perf_counter
) -> ClockOffset:
    """The offset of the clock `ping` reads (it returns the agent's clock) from `clock`, by the
    fastest of `pings` round trips."""
    if pings < 1:
        raise ValueError(f"pings must be 1 or more, not {pings}")
    best: tuple[float, float] | None = None
    for _ in range(pings):
        t0 = clock()
        remote = ping()
        t1 = clock()
        if best is None or t1 - t0 < best[0]:
            best = (t1 - t0, remote - (t0 + t1) / 2)
    assert best is not None
    return ClockOffset(offset=best[1], bound=best[0] / 2, round_trip=best[0], pings=pings)
