"""Plans: when each request is due (an open-model ladder) and how many users there are (closed-model phases).

The open model's ladder: requests are due at fixed times whatever the service does, like k6's
ramping-arrival-rate executor, but in steps. A ladder holds `start` requests/s for `hold` seconds,
then `start + step`, and so on for `steps` levels. The first `warmup` seconds of each level are
sent but not measured.

Due times are offsets in seconds from the run start. Within a level the i-th request is due at
exactly `level.start + i / level.rate`, computed from i rather than by adding 1/rate to the last
due time: a sum of 25,200 floats of 1/7 (an hour at 7 requests/s) drifts, a division does not.
Several executor processes share one schedule by each taking every `parts`-th request.

The closed model's plan (seed 001): users who each send a request, think 50 to 150 ms, and send
the next. A `UserPlan` is a list of phases, k6-stage style: each phase brings the number of users
linearly from the previous phase's count to its own over `ramp` seconds (0: all at once), then
holds it for `hold` seconds. Figures of a phase are measured over its hold only; requests due
during the ramp are kept apart like the open model's warm-up. Seed 001's levels are
`UserPlan.levels()`, its spike (100 -> 3,000 at once -> 100) is `UserPlan.spike()`. The closed
executor (`executors/closed.py`) runs a plan.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

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
        finite = {name: _is_finite(value) for name, value in numbers.items()}
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


MAX_USERS = 1_000_000
"""More users than this in a phase is a typo, not a plan."""


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


def _is_finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
