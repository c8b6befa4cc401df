"""What every plan is: one shape for the ceiling search, the linear ladder and the closed users plan.

A run asks its plan, level after level, what to run next given what the finished levels showed
(`next_level`), and runs it; the plan says how long each level holds (its `PlannedLevel`), which executor
runs it (`model`: "open", requests due on a schedule; "closed", users who wait for their answers),
which of its levels are fixed before the run starts (`scheduled`: the processes then run them
back to back from the run start, with no pause between them), why it stopped (`stop`) and its
headline figures (`headline`: the ceiling rate, or the users held). A plan is data: it goes into
the result's config block (`to_json`, under its `kind`) and comes back out of it
(`plan_from_config`), so a report can ask a plan from a result for its words without knowing
which kind it is.

    plan          next level                          scheduled   headline
    Ladder        the next step, until one fails      every step  the highest step held
    UserPlan      every phase                         every phase the users held, their rate
    Search        climb, then bisect the bracket      none        held below the lowest failed
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from .planned_levels import PlannedLevel
from .record import RunRecord


@dataclass(frozen=True)
class Outcome:
    """What a finished level showed, as a plan sees it: the rate offered and whether it held.

    `excused`: the run goes on through this level's failure (a fault was caused in it on purpose,
    or continue-after-fail was asked for); a ladder does not stop there. `achieved` and `users`
    are the answers per second and the users of the level (a users plan's headline). `stalled`:
    the level failed by a stall rather than saturation (its diagnosis), which a search runs again.
    `limit`: the resource a failed level ran out of (its diagnosis names it), and `shares`: each
    measured resource's use as a share of its bound (1.0: at it), so that a search can see a
    passing level below a failure with that resource well under its bound.
    """

    rate: float
    passed: bool
    reasons: tuple[str, ...] = ()
    excused: bool = False
    achieved: float | None = None
    users: int | None = None
    stalled: bool = False
    limit: str | None = None
    shares: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Stop:
    """Why a plan stopped: a short `code` the result keeps (a search's "budget") and the words."""

    code: str
    words: str


class Plan(Protocol):
    """The one shape of a plan; see the module notes."""

    kind: ClassVar[str]
    """The plan's key in a result's config block: "ladder", "users" or "search"."""
    model: ClassVar[str]
    """Which executor runs it: "open" (requests due on a schedule) or "closed" (users)."""

    @classmethod
    def shown_in(cls, record: RunRecord) -> bool:
        """Whether a finished run's record (result.json, older bundles too) shows this plan: the
        reports' view of it is picked by the last plan of `PLANS` that it shows."""
        ...

    def validate(self) -> list[str]: ...

    @property
    def duration(self) -> float:
        """The most seconds the plan's levels can take from the run start (a search: its budget)."""
        ...

    @property
    def settle(self) -> float:
        """Seconds of rest after a level that failed, before the next (its backlog drains)."""
        ...

    @property
    def peak_users(self) -> int:
        """The most users the plan runs at once (0 for an open plan): each needs a connection."""
        ...

    @property
    def is_spike(self) -> bool:
        """Whether the plan is a spike, whose recovery the result measures."""
        ...

    def start_range(self) -> tuple[float, float, float] | None:
        """Where a start measured on the service may put the plan (`dbladder.load.calibration`):
        the start it would take, the lowest rate and the highest; None when its rates are fixed
        (a ladder's steps, users' phases)."""
        ...

    def started_at(self, rate: float, calibration: dict[str, Any]) -> Plan:
        """The plan starting at `rate`, chosen as `calibration` records; only for a plan with a
        `start_range`."""
        ...

    def scheduled(self) -> list[PlannedLevel]:
        """The levels fixed before the run starts, which the processes run back to back from it."""
        ...

    def next_level(self, shown: Sequence[Outcome], elapsed: float) -> PlannedLevel | None:
        """The level to run after those that showed `shown` (`elapsed` seconds so far), or None
        when the plan is over. A level not in `scheduled()` starts as soon as the load can."""
        ...

    def stop(self, shown: Sequence[Outcome], elapsed: float) -> Stop:
        """Why the plan is over after `shown`."""
        ...

    def headline(self, shown: Sequence[Outcome], stop: Stop | None = None) -> dict[str, Any]:
        """The result's headline fields after `shown` (with `stop`, once the plan is over)."""
        ...

    def describe(self) -> str:
        """One line saying what load the plan sends."""
        ...

    def to_json(self) -> dict[str, Any]:
        """The plan as the result's config block keeps it under `kind`."""
        ...

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Plan:
        """The plan from the result's config block under `kind` (`to_json`'s, or an older one)."""
        ...


def held_in_a_row(shown: Sequence[Outcome]) -> Outcome | None:
    """The last level of the unbroken run of passes from the first; None if the first failed."""
    held = None
    for outcome in shown:
        if not outcome.passed:
            break
        held = outcome
    return held


def is_finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
