"""The closed model's plan ("Postgres vs MariaDB on two dedicated CPUs"): users with think time.

Users each send a request, think 50 to 150 ms, and send the next. A `UserPlan` is a list of
phases, k6-stage style: each phase brings the number of users linearly from the previous phase's
count to its own over `ramp` seconds (0: all at once), then holds it for `hold` seconds. Figures
of a phase are measured over its hold only; requests due during the ramp are kept apart like the
open model's warm-up. The levels of "Postgres vs MariaDB on two dedicated CPUs" are
`UserPlan.levels()`, its spike (100 -> 3,000 at once -> 100) is `UserPlan.spike()`. The closed
executor (`load/executors/closed.py`) runs a plan; it runs every phase, as that post did: users
slow themselves down instead of failing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from ..errors import InvalidConfig
from .base import Outcome, Plan, Stop, held_in_a_row, is_finite, is_whole
from .planned_levels import PlannedLevel
from .record import RunRecord

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

    kind: ClassVar[str] = "users"
    model: ClassVar[str] = "closed"
    settle: ClassVar[float] = 0.0  # the phases follow one another without a pause

    @classmethod
    def shown_in(cls, record: RunRecord) -> bool:
        """Whether a finished run ran users: its model or its config block says so."""
        return record.model == cls.model or record.config.users is not None

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
        """The levels of "Postgres vs MariaDB on two dedicated CPUs": each count of users arrives over `ramp`
        seconds and is held `hold` seconds."""
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
        """The spike of "Postgres vs MariaDB on two dedicated CPUs": `base` users (arriving over `ramp`
        seconds), then `peak` at once, then
        `base` again at once, each phase held `hold` seconds."""
        phases = (Phase(base, ramp, hold), Phase(peak, 0.0, hold), Phase(base, 0.0, hold))
        return cls(phases, think_min, think_max)

    @property
    def is_spike(self) -> bool:
        """Whether the busiest phase has a quieter phase before and after it (the spike of "Postgres vs
        MariaDB on two dedicated CPUs")."""
        counts = [phase.users for phase in self.phases]
        peak = counts.index(max(counts))
        return 0 < peak < len(counts) - 1 and counts[peak - 1] < counts[peak] > counts[peak + 1]

    def start_range(self) -> None:
        """None: users' phases start where the user set them (`Plan.start_range`)."""
        return None

    def started_at(self, rate: float, calibration: dict[str, Any]) -> Plan:
        raise ValueError(f"{self.kind} has no start to calibrate")

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
                if not (is_whole(phase.users) and 0 <= phase.users <= MAX_USERS):
                    problems.append(
                        f"phases[{i}].users must be a whole number from 0 to {MAX_USERS:,}, "
                        f"not {phase.users!r}"
                    )
                if not (is_finite(phase.ramp) and phase.ramp >= 0):
                    problems.append(f"phases[{i}].ramp must be 0 seconds or more, not {phase.ramp!r}")
                if not (is_finite(phase.hold) and phase.hold > 0):
                    problems.append(f"phases[{i}].hold must be above 0 seconds, not {phase.hold!r}")
            counts = [phase.users for phase in self.phases if isinstance(phase, Phase)]
            if counts and all(is_whole(count) for count in counts) and not any(counts):
                problems.append("phases must have at least one phase with users above 0")
        low_ok = is_finite(self.think_min) and self.think_min >= 0
        if not low_ok:
            problems.append(f"think_min must be 0 seconds or more, not {self.think_min!r}")
        if not (is_finite(self.think_max) and self.think_max > 0):
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

    @property
    def peak_users(self) -> int:
        """The most users of any phase."""
        return max(phase.users for phase in self.phases)

    def scheduled(self) -> list[PlannedLevel]:
        """Every phase: users arrive and leave on the plan's own timeline."""
        return self.phase_levels()

    def next_level(self, shown: Sequence[Outcome], elapsed: float) -> PlannedLevel | None:
        """The next phase, whatever the last one showed: users slow themselves down instead of
        failing, so every phase runs ("Postgres vs MariaDB on two dedicated CPUs")."""
        levels = self.phase_levels()
        return levels[len(shown)] if len(shown) < len(levels) else None

    def stop(self, shown: Sequence[Outcome], elapsed: float) -> Stop:
        return Stop("finished", "every phase ran")

    def headline(self, shown: Sequence[Outcome], stop: Stop | None = None) -> dict[str, Any]:
        """The users of the highest phase held in the unbroken run of passes, and the rate they
        achieved: what users offer is not a rate the run chose but what the service lets them send."""
        held = held_in_a_row(shown)
        return {
            "ceiling_users": held.users if held else None,
            "ceiling_rps": held.achieved if held else None,
        }

    def describe(self) -> str:
        users = ", ".join(f"{phase.users:,}" for phase in self.phases)
        return f"users {users} (think {self.think_min * 1000:g}-{self.think_max * 1000:g} ms)"

    def to_json(self) -> dict[str, Any]:
        # The phases as a list, as JSON has them: the in-memory result reads like the file.
        return asdict(self) | {"phases": [asdict(phase) for phase in self.phases]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> UserPlan:
        phases = tuple(Phase(**phase) for phase in data["phases"])
        return cls(phases, **{name: value for name, value in data.items() if name != "phases"})

    def phase_levels(self) -> list[PlannedLevel]:
        """The phases as the recorder's levels: `start` is the ramp's start, `warmup` the ramp, `hold`
        ramp + hold, and `rate` users / mean think time (the most the users can send)."""
        levels, start = [], 0.0
        for i, phase in enumerate(self.checked().phases):
            rate = phase.users / self.think_mean
            levels.append(
                PlannedLevel(index=i, rate=rate, start=start, hold=phase.ramp + phase.hold, warmup=phase.ramp)
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
    user: int, levels: Sequence[PlannedLevel], phases: Sequence[Phase], duration: float
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
