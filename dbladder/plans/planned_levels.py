"""A plan's levels and when each request of a level is due.

Due times are offsets in seconds from the run start. Within a level the i-th request is due at
exactly `level.start + i / level.rate`, computed from i rather than by adding 1/rate to the last
due time: a sum of 25,200 floats of 1/7 (an hour at 7 requests/s) drifts, a division does not.
Several executor processes share one schedule by each taking every `parts`-th request.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class PlannedLevel:
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


def due_times(level: PlannedLevel, part: int = 0, parts: int = 1) -> Iterator[float]:
    """The offsets from the run start at which this part's requests of `level` are due, in order.

    Request i is due at level.start + i / level.rate, for every i from 0 with a due time before
    level.end. Part `part` of `parts` takes i = part, part + parts, part + 2 * parts, ...; the
    parts together cover every request exactly once.
    """
    check_part(part, parts)
    start, rate = level.start, level.rate
    for i in range(part, level.requests, parts):
        yield start + i / rate


def check_part(part: int, parts: int) -> None:
    if not (isinstance(parts, int) and parts >= 1):
        raise ValueError(f"parts must be a whole number, 1 or more, not {parts!r}")
    if not (isinstance(part, int) and 0 <= part < parts):
        raise ValueError(f"part must be a whole number from 0 to {parts - 1}, not {part!r}")
