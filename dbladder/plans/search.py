"""The ceiling search: which rate to probe next, given the probes so far.

`dbladder run`'s default plan. Each probe holds one rate for a full level (warm-up, then the
measured hold) and is judged against the pass mark. The search

  1. climbs geometrically from `start` (x `factor` each probe) until a probe fails; if the very
     first probe fails it goes down the same way until one holds;
  2. then bisects, geometrically (the middle of 2,000 and 4,000 is 2,828), between the highest
     rate held below the lowest rate failed, until the two are within `resolution` of each other
     (5 %: the failed rate at most 1.05 x the held one);
  3. stops early when the next probe would not fit in `budget` seconds, or when the rate would
     leave [min_rate, max_rate].

A probe holds long enough for its p95 to mean something: its measured window has at least
`min_answers` requests due (200: the p95 is then bounded within ranks 184 to 197, see
dbladder/result/interval.py), however long that takes at a low rate, up to MAX_HOLD_FACTOR times
the hold and within what is left of the budget (`probe_hold`). At 500 req/s an 8 s window has
4,000: the hold is as set.

A ceiling rests on a failure that repeats (`again_because`): before the search goes on, the rate
that sets the bracket's upper end is probed once more when its one probe was the search's first
(an app met cold: caches to fill, pages to render), failed by a stall (one moment, not what the
rate costs), or failed by a resource that a later probe below it, which passed, showed well under
its bound (WELL_UNDER). The rate then counts by its second result (`latest`): a failure that does
not repeat is not the ceiling, and the search climbs past it within its budget. No rate is probed
more than twice. `ceiling_rests_on` says on what the ceiling rests.

The ceiling is the highest rate held below the lowest rate failed (`ceiling`): a noisy probe that
holds above a failure does not raise it, and one that fails below a pass lowers the bracket. This
module is pure logic: `next_rate(probes)` is all a runner asks, so it is tested against fake
servers of known capacity (tests/plans/test_search.py). As a `Plan` (plans/base.py) its levels
are none in advance: each probe is chosen when the last one has shown, and starts then.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, ClassVar

from ..errors import InvalidConfig
from .base import Outcome, Stop
from .planned_levels import PlannedLevel
from .record import RunRecord

FOUND, BUDGET, TOO_SLOW, TOO_FAST = "found", "budget", "too slow", "too fast"

MAX_HOLD_FACTOR = 6.0
"""A probe held for its minimum of answers holds at most this many times the search's hold."""

WELL_UNDER = 0.5
"""A passing probe whose resource stayed under this share of its bound casts doubt on a failure
above it by that resource: the failure is probed again."""

FIRST, STALL = "the first probe", "a stall"

STOPS = {
    FOUND: "the search found the ceiling to within {percent:g} %",
    BUDGET: "the search ran out of its {budget:g} s budget before the gap closed to {percent:g} %",
    TOO_SLOW: "no level held, down to {min_rate:g} req/s",
    TOO_FAST: "every level held, up to {max_rate:g} req/s",
}
"""Why a search stopped, in words (`Search.stop_reason`)."""


@dataclass(frozen=True)
class Search:
    """A ceiling search's settings: rates in requests/s, durations in seconds."""

    kind: ClassVar[str] = "search"
    model: ClassVar[str] = "open"
    peak_users: ClassVar[int] = 0
    is_spike: ClassVar[bool] = False

    @classmethod
    def shown_in(cls, record: RunRecord) -> bool:
        """Whether a finished run searched: its config block or the search block it left says so."""
        return record.config.search is not None or record.search is not None

    start: float = 500.0
    factor: float = 2.0
    resolution: float = 0.05
    budget: float = 150.0
    hold: float = 10.0
    warmup: float = 2.0
    settle: float = 2.0  # the rest after a probe that failed (its backlog); one that held left none
    min_rate: float = 1.0
    max_rate: float = 1_000_000.0
    min_answers: int = 200
    # How `start` was chosen when the user gave none (dbladder.load.calibration): the result's
    # `search.calibration`, not a setting (the config block keeps the start it chose).
    calibration: dict[str, Any] | None = field(default=None, compare=False)

    def start_range(self) -> tuple[float, float, float]:
        """The start it would take and the rates it may search (`Plan.start_range`)."""
        return (self.start, self.min_rate, self.max_rate)

    def started_at(self, rate: float, calibration: dict[str, Any]) -> Search:
        """The search from `rate`, the calibration that chose it kept (`Plan.started_at`)."""
        return replace(self, start=rate, calibration=calibration)

    def validate(self) -> list[str]:
        """Every problem with the settings, each naming its field; empty when they are valid."""
        problems = []
        numbers = {
            name: getattr(self, name)
            for name in (
                "start",
                "factor",
                "resolution",
                "budget",
                "hold",
                "warmup",
                "settle",
                "min_rate",
                "max_rate",
            )
        }
        for name, value in numbers.items():
            if not (isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)):
                problems.append(f"search {name} must be a finite number, not {value!r}")
        if problems:
            return problems
        if not 0 < self.min_rate <= self.start <= self.max_rate:
            problems.append(
                f"search start must be from min_rate ({self.min_rate:g}) to max_rate ({self.max_rate:g}) "
                f"requests/s, not {self.start:g}"
            )
        if not self.factor > 1:
            problems.append(f"search factor must be above 1, not {self.factor:g}")
        if not 0.001 <= self.resolution <= 1:
            problems.append(f"resolution must be from 0.001 (0.1 %) to 1 (100 %), not {self.resolution:g}")
        if not self.hold > 0:
            problems.append(f"search hold must be above 0 seconds, not {self.hold:g}")
        if not 0 <= self.warmup < self.hold:
            problems.append(
                f"search warmup must be 0 or more and under the hold ({self.hold:g} s), not {self.warmup:g}"
            )
        if not self.settle >= 0:
            problems.append(f"search settle must be 0 seconds or more, not {self.settle:g}")
        if not (
            isinstance(self.min_answers, int)
            and not isinstance(self.min_answers, bool)
            and 0 <= self.min_answers <= 1_000_000
        ):
            problems.append(
                f"search min_answers must be a whole number from 0 to 1,000,000, not {self.min_answers!r}"
            )
        if not self.budget >= self.probe_seconds:
            problems.append(
                f"budget must leave room for at least one probe ({self.probe_seconds:g} s), "
                f"not {self.budget:g} s"
            )
        return problems

    def checked(self) -> Search:
        """These settings, or InvalidConfig listing every problem."""
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self

    @property
    def probe_seconds(self) -> float:
        """What one probe costs at most: its hold (warm-up included) and the settle pause after
        it (taken only when it fails: the budget counts it for every probe, to be safe)."""
        return self.hold + self.settle

    def probe_hold(self, rate: float, left: float | None = None) -> float:
        """How long a probe at `rate` holds: the hold, or longer where its measured window would
        have fewer than `min_answers` requests due; at most MAX_HOLD_FACTOR times the hold and, given
        `left` (the budget's seconds left), what fits in it, but never under the hold."""
        if rate <= 0:
            return self.hold
        # Due times are start + i / rate: the window [warmup, hold) holds the i from
        # ceil(warmup * rate) to ceil(hold * rate) - 1, so a hold of (ceil(warmup * rate) +
        # min_answers) / rate, rounded up to a hundredth of a second, holds min_answers of them.
        wanted = math.ceil(100 * (math.ceil(self.warmup * rate) + self.min_answers) / rate) / 100
        hold = min(max(self.hold, wanted), MAX_HOLD_FACTOR * self.hold)
        if left is not None:
            hold = min(hold, left - self.settle)
        return max(hold, self.hold)

    def spent(self, probes: Sequence[Outcome]) -> float:
        """The seconds `probes` took by the plan: each its hold at its rate and the settle pause."""
        return sum(self.probe_hold(probe.rate) + self.settle for probe in probes)

    @property
    def max_probes(self) -> int:
        """How many probes fit in the budget."""
        return int(self.budget // self.probe_seconds)

    @property
    def duration(self) -> float:
        """The budget: no probe starts that would not end within it."""
        return self.budget

    def scheduled(self) -> list[PlannedLevel]:
        """None: each probe's rate depends on what the probes before it showed."""
        return []

    def next_level(self, shown: Sequence[Outcome], elapsed: float) -> PlannedLevel | None:
        """The next probe (numbered in the order run; it starts when the load can), or None."""
        rate = self.next_rate(shown, elapsed)
        if rate is None:
            return None
        hold = self.probe_hold(rate, self.budget - elapsed)
        return PlannedLevel(index=len(shown), rate=rate, start=0.0, hold=hold, warmup=self.warmup)

    def stop(self, shown: Sequence[Outcome], elapsed: float) -> Stop:
        code = self.stop_reason(shown, elapsed) or FOUND
        return Stop(code, STOPS[code].format(**asdict(self), percent=100 * self.resolution))

    def headline(self, shown: Sequence[Outcome], stop: Stop | None = None) -> dict[str, Any]:
        """The highest rate held below the lowest rate failed, whatever order the probes ran in,
        and the search's block: its settings, the bracket, the probes and (once over) why it stopped."""
        held, failed = bracket(shown)
        search = self.to_json() | {"held_rps": held, "failed_rps": failed, "probes": len(shown)}
        if self.calibration is not None:
            search["calibration"] = self.calibration
        if any(probe.stalled for probe in shown):  # a probe failed by a stall, and was run again
            search["rests_on_a_stall"] = rests_on_a_stall(shown)
        if again := probed_again(shown):
            search["probed_again"] = again
        if (rests := ceiling_rests_on(shown)) is not None:
            search["ceiling_rests_on"] = rests
        if stop is not None:
            search["stopped_because"] = stop.code
        return {"ceiling_rps": held, "search": search}

    def describe(self) -> str:
        return (
            f"searching for the ceiling from {self.start:g} req/s (x{self.factor:g} until a level "
            f"fails, then halving the gap to {100 * self.resolution:g} %; {self.hold:g} s probes, "
            f"budget {self.budget:g} s)"
        )

    def to_json(self) -> dict[str, Any]:
        settings = asdict(self)
        del settings["calibration"]
        return settings

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Search:
        """The settings from a result's search block (which also holds the bracket found)."""
        names = {field.name for field in fields(cls)} - {"calibration"}
        return cls(**{name: value for name, value in data.items() if name in names})

    def next_rate(self, probes: Sequence[Outcome], elapsed: float | None = None) -> float | None:
        """The rate of the next probe, or None when the search is over (`stop_reason` says why).

        `elapsed` is the seconds the probes took so far; by default each counts `probe_seconds`.
        """
        return self._next(probes, elapsed)[0]

    def stop_reason(self, probes: Sequence[Outcome], elapsed: float | None = None) -> str | None:
        """Why the search is over ("found", "budget", "too slow", "too fast"), None while it goes on."""
        return self._next(probes, elapsed)[1]

    def _next(self, probes: Sequence[Outcome], elapsed: float | None) -> tuple[float | None, str | None]:
        spent = self.spent(probes) if elapsed is None else elapsed
        if not probes:
            return self.start, None
        if (rerun := _to_probe_again(probes)) is not None:
            if spent + self.probe_seconds > self.budget + 1e-9:
                return None, BUDGET
            return rerun, None
        held, failed = bracket(probes)
        if held is not None and failed is not None:
            if failed <= held * (1 + self.resolution):
                return None, FOUND
            rate = _round(math.sqrt(held * failed))
            if not held < rate < failed:  # rounding left nothing between them
                return None, FOUND
        elif failed is None:  # everything held so far: climb
            rate = _round(max(probe.rate for probe in probes) * self.factor)
            if rate > self.max_rate:
                return None, TOO_FAST
        else:  # nothing held yet: go down
            rate = _round(min(probe.rate for probe in probes) / self.factor)
            if rate < self.min_rate:
                return None, TOO_SLOW
        if spent + self.probe_seconds > self.budget + 1e-9:
            return None, BUDGET
        return rate, None


def _to_probe_again(probes: Sequence[Outcome]) -> float | None:
    """The rate to probe once more before the search goes on: the bracket's upper end, probed once
    so far, when there is a cause to doubt its failure (`again_because`)."""
    _, failed = bracket(probes)
    if failed is None or sum(probe.rate == failed for probe in probes) > 1:
        return None
    return failed if again_because(probes, failed) is not None else None


def again_because(probes: Sequence[Outcome], rate: float) -> str | None:
    """Why the failure of `rate`'s first probe is in doubt, in words, or None: it was the search's
    first probe, it failed by a stall, or a later probe below it passed with the resource that
    failed it under WELL_UNDER of its bound ("service CPU at 25 % of its bound at 12 req/s")."""
    at = next((number for number, probe in enumerate(probes) if probe.rate == rate), None)
    if at is None or probes[at].passed:
        return None
    failed = probes[at]
    if at == 0:
        return FIRST
    if failed.stalled:
        return STALL
    if failed.limit is None:
        return None
    for later in probes[at + 1 :]:
        share = dict(later.shares).get(failed.limit)
        if later.passed and later.rate < rate and share is not None and share < WELL_UNDER:
            return f"{failed.limit} at {100 * share:.0f} % of its bound at {_words(later.rate)} req/s"
    return None


def probed_again(probes: Sequence[Outcome]) -> list[dict[str, Any]]:
    """Each rate probed twice: its rate, its levels (numbered from 1), why it was probed again,
    and whether it failed again."""
    found = []
    for rate in dict.fromkeys(probe.rate for probe in probes):
        numbers = [number for number, probe in enumerate(probes) if probe.rate == rate]
        if len(numbers) < 2:
            continue
        first, second = numbers[:2]
        found.append(
            {
                "rate_rps": rate,
                "levels": [first + 1, second + 1],
                "because": again_because(probes[:second], rate),
                "failed_again": not probes[second].passed,
            }
        )
    return found


def ceiling_rests_on(probes: Sequence[Outcome]) -> dict[str, Any] | None:
    """On what the ceiling rests: the lowest rate failed, its probes (levels numbered from 1),
    whether it failed twice, and in words; None when no rate failed."""
    held, failed = bracket(probes)
    if failed is None:
        return None
    numbers = [number + 1 for number, probe in enumerate(probes) if probe.rate == failed]
    twice = len(numbers) > 1 and not any(probes[n - 1].passed for n in numbers)
    rate = _words(failed)
    if twice:
        because = again_because(probes[: numbers[1] - 1], failed)
        words = (
            f"{rate} req/s failed twice (levels {numbers[0]} and {numbers[1]}; probed again after "
            f"{because}): a failure that repeats"
        )
    else:
        doubt = again_because(probes, failed)
        words = f"{rate} req/s failed once (level {numbers[-1]})" + (
            f", after {doubt}, and the budget left no time to probe it again" if doubt else ""
        )
    if held is None:
        words += ", and no rate below it held"
    return {"rate_rps": failed, "levels": numbers, "failed_twice": twice, "words": words}


def _words(rate: float) -> str:
    return f"{rate:,.0f}" if rate >= 10 else f"{rate:g}"


def latest(probes: Sequence[Outcome]) -> list[Outcome]:
    """Each rate's latest probe: a rate run again (after a stall) counts by its second result."""
    return list({probe.rate: probe for probe in probes}.values())


def rests_on_a_stall(probes: Sequence[Outcome]) -> bool:
    """Whether the lowest rate failed, which the ceiling is below, failed by a stall even so."""
    _, failed = bracket(probes)
    return any(probe.rate == failed and probe.stalled for probe in latest(probes))


def bracket(probes: Sequence[Outcome]) -> tuple[float | None, float | None]:
    """(highest rate held below the lowest rate failed, lowest rate failed); None where there is none.
    A rate probed twice counts by its latest probe (`latest`)."""
    probes = latest(probes)
    failed = min((probe.rate for probe in probes if not probe.passed), default=None)
    held = max(
        (probe.rate for probe in probes if probe.passed and (failed is None or probe.rate < failed)),
        default=None,
    )
    return held, failed


def ceiling(probes: Sequence[Outcome]) -> float | None:
    """The highest rate held below the lowest rate failed; None when no rate below it held."""
    return bracket(probes)[0]


def _round(rate: float) -> float:
    """A rate to three significant figures (2,828.4 -> 2,830): probes read as round numbers, and
    0.1 % is far finer than any resolution a search is asked for."""
    if rate <= 0:
        return rate
    digits = 2 - math.floor(math.log10(rate))
    value = round(rate, digits)
    return float(int(value)) if value == int(value) else value
