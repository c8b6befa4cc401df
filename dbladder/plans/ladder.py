"""The open model's linear ladder: requests are due at fixed times whatever the service does.

Like k6's ramping-arrival-rate executor, but in steps: a ladder holds `start` requests/s for
`hold` seconds, then `start + step`, and so on for `steps` levels. The first `warmup` seconds of
each level are sent but not measured. Its levels are fixed before the run, and it stops after
the first level that fails (unless that failure is excused: a fault caused on purpose, or
continue-after-fail).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from ..errors import InvalidConfig
from .base import Outcome, Plan, Stop, held_in_a_row, is_finite
from .planned_levels import PlannedLevel, check_part, due_times
from .record import RunRecord

# A ladder beyond this many requests is a typo (a hold in milliseconds, a step in requests/min),
# not a plan: at 100,000 requests/s it would take almost three hours.
MAX_REQUESTS = 1_000_000_000


@dataclass(frozen=True)
class Ladder:
    """A step ladder of arrival rates: rates in requests/s, durations in seconds."""

    kind: ClassVar[str] = "ladder"
    model: ClassVar[str] = "open"
    settle: ClassVar[float] = 0.0  # the levels follow one another without a pause
    peak_users: ClassVar[int] = 0
    is_spike: ClassVar[bool] = False

    @classmethod
    def shown_in(cls, record: RunRecord) -> bool:
        """Any finished run's record fits a ladder: the plan of every result before the others."""
        return True

    start: float
    step: float
    steps: int
    hold: float
    warmup: float = 0.0

    def start_range(self) -> None:
        """None: a ladder start where the user set them (`Plan.start_range`)."""
        return None

    def started_at(self, rate: float, calibration: dict[str, Any]) -> Plan:
        raise ValueError(f"{self.kind} has no start to calibrate")

    def validate(self) -> list[str]:
        """Every problem with the ladder, each naming its field; empty when it is valid."""
        problems = []
        numbers = {"start": self.start, "step": self.step, "hold": self.hold, "warmup": self.warmup}
        finite = {name: is_finite(value) for name, value in numbers.items()}
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

    def levels(self) -> list[PlannedLevel]:
        """The ladder's levels in order; raises InvalidConfig if the ladder is invalid."""
        self.checked()
        # Each start is index * hold, not a running sum, for the same reason due times are.
        hold, warmup = self.hold, self.warmup
        return [
            PlannedLevel(index=i, rate=self.start + i * self.step, start=i * hold, hold=hold, warmup=warmup)
            for i in range(self.steps)
        ]

    def scheduled(self) -> list[PlannedLevel]:
        """Every level: a ladder's steps are known before the run and run back to back."""
        return self.levels()

    def next_level(self, shown: Sequence[Outcome], elapsed: float) -> PlannedLevel | None:
        """The next step, unless the last one failed (and its failure is not excused)."""
        if shown and not shown[-1].passed and not shown[-1].excused:
            return None
        return self.levels()[len(shown)] if len(shown) < self.steps else None

    def stop(self, shown: Sequence[Outcome], elapsed: float) -> Stop:
        if shown and not shown[-1].passed and not shown[-1].excused and len(shown) <= self.steps:
            last = shown[-1]
            return Stop(
                "failed", f"level {len(shown)} ({last.rate:g} req/s) failed: " + "; ".join(last.reasons)
            )
        return Stop("finished", "the ladder finished")

    def headline(self, shown: Sequence[Outcome], stop: Stop | None = None) -> dict[str, Any]:
        """The offered rate of the highest step held in the unbroken run of passes."""
        held = held_in_a_row(shown)
        return {"ceiling_rps": held.rate if held else None}

    def describe(self) -> str:
        return (
            f"climbing {self.steps} levels from {self.start:g} req/s "
            f"(+{self.step:g} each, {self.hold:g} s holds)"
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Ladder:
        return cls(**data)


def ladder_due_times(ladder: Ladder, part: int = 0, parts: int = 1) -> Iterator[tuple[PlannedLevel, float]]:
    """(level, due time) for this part's requests over the whole ladder, in order."""
    check_part(part, parts)
    for level in ladder.levels():
        for due in due_times(level, part, parts):
            yield level, due
