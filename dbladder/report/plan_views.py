"""The plan a run followed, as the reports ask it: its figures, its x axis, its words.

A run climbed a ladder of arrival rates, searched for its ceiling with probes, or ran phases of
users (closed model, "Postgres vs MariaDB on two dedicated CPUs"), of which a spike is one shape.
Each is a `PlanView` here, and `plan_of` is the one place that picks it (by the typed result's
`plan_kind`): the rest of `report/` asks the view (what the round key holds, its title and setup
facts, where a level sits on the x axis, the headline and how finely it is known) instead of
asking which kind of plan it holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from ..result.level import Level
from ..result.run import RunResult
from . import closed
from .figures import ms, plain, rate

OPEN_MODEL = (
    "open: each request is sent when it is due, whatever the service does; latency is measured from "
    "when it was due"
)


@dataclass(frozen=True)
class PlanView:
    """A ladder of arrival rates: the base every plan view shares."""

    result: RunResult
    name: ClassVar[str] = "ladder"
    closed: ClassVar[bool] = False
    searched: ClassVar[bool] = False
    x_label: ClassVar[str] = "offered rate, req/s"
    top_words: ClassVar[str] = "the top step"
    """What holding everything means: "the top step" of a ladder, "every probe" of a search."""

    @property
    def spike(self) -> bool:
        return False

    def key(self) -> tuple[object, ...]:
        """What the plan puts in the round key: runs of the same round ran the same load."""
        ladder = self.result.config.ladder
        if ladder is None:
            return (None, None, None, None, None)
        return (ladder.start, ladder.step, ladder.steps, ladder.hold, ladder.warmup)

    def title(self) -> str:
        """The load in a few words, for the round's title: "500 to 2,000 req/s"."""
        ladder = self.result.config.ladder
        start, top = (ladder.start, ladder.top) if ladder else (0, 0)
        return f"{rate(start)} to {rate(top)} req/s"

    @property
    def start(self) -> float:
        """The first level's x: its offered rate (users for a users plan)."""
        ladder = self.result.config.ladder
        return ladder.start if ladder else 0

    @property
    def step(self) -> float:
        """The ladder's step (a ceiling's precision); 0 for a plan without one."""
        ladder = self.result.config.ladder
        return ladder.step if ladder else 0

    def holds(self) -> list[float]:
        """Seconds each level was held and measured."""
        ladder = self.result.config.ladder
        return [] if ladder is None or ladder.hold is None else [float(ladder.hold)]

    def facts(self) -> dict[str, str]:
        """The setup section's lines about the load."""
        ladder = self.result.config.ladder
        start, step, steps = (ladder.start, ladder.step, ladder.steps) if ladder else (0, 0, 1)
        hold, warmup = (ladder.hold, ladder.warmup) if ladder else (None, None)
        return {
            "ladder": f"{rate(start)} req/s, +{rate(step)} per level, {steps} levels "
            f"(top {rate(start + step * (steps - 1))} req/s)",
            "hold": f"{plain(hold)} s per level; the first {plain(warmup)} s left out of its figures",
            "model": OPEN_MODEL,
        }

    def x(self, level: Level) -> float:
        """Where a level sits on the plots' x axis."""
        return float(level.offered_rps)

    def level_words(self, level: Level) -> str:
        """A level as the plots' tips name it: "500 req/s offered"."""
        return f"{rate(level.offered_rps)} req/s offered"

    def ceiling_words(self, x: float) -> str:
        """The ceiling's mark on the plots: "1,000"."""
        return rate(x)

    def detail(self) -> str:
        """What else sets a round of this plan apart from one that shares its title ("" if nothing)."""
        return ""

    def held_words(self) -> str:
        """The terminal's ceiling line: "2,000 req/s (the highest step held)"."""
        ceiling = self.result.ceiling_rps
        return (
            f"{ceiling:,.0f} req/s (the highest step held)"
            if ceiling is not None
            else "none: the first step failed"
        )

    @property
    def first_failure(self) -> Level | None:
        return next((level for level in self.result.levels if not level.passed), None)

    def sentence(self, name: str) -> str:
        """The run in a sentence (`name` is how the report calls it): what it held, and why the next
        level failed."""
        ceiling = self.result.ceiling_rps
        failed = self.first_failure
        if failed is None:
            top = self.result.levels[-1].offered_rps
            return (
                f"{name} held every level up to {rate(top)} req/s, the last one climbed: "
                "no level failed, so its limit was not reached."
            )
        why = "; ".join(failed.reasons) or "it failed"
        if ceiling is None:
            return f"{name} held no level: the first, {rate(failed.offered_rps)} req/s, failed ({why})."
        return (
            f"{name} held {rate(ceiling)} req/s; the next level, "
            f"{rate(failed.offered_rps)} req/s, failed ({why})."
        )

    def title_words(self) -> str:
        """A single run's headline for the report's title: "held 1,000 req/s (no level failed)"."""
        ceiling = self.result.ceiling_rps
        if ceiling is None:
            return "no level held"
        return f"held {rate(ceiling)} req/s" + (" (no level failed)" if self.lower_bound else "")

    def cell(self) -> str:
        """The headline for a table: "2,000", "≥ 2,000" (no level failed) or "< 500" (the first failed)."""
        levels = self.result.levels
        ceiling = self.headline
        if ceiling is None:
            return f"< {rate(levels[0].offered_rps)}" if levels else "no level"
        return ("≥ " if self.lower_bound else "") + rate(ceiling)

    @property
    def headline(self) -> float | None:
        """The figure the result table compares: the ceiling (`ceiling_rps`)."""
        value = self.result.ceiling_rps
        return None if value is None else float(value)

    @property
    def ceiling_x(self) -> float | None:
        """Where the plots mark the ceiling; None when there is none to mark."""
        return self.headline

    @property
    def lower_bound(self) -> bool:
        """No level failed: the figure is where the plan ended, not the engine's limit."""
        levels = self.result.levels
        return bool(levels) and all(level.passed for level in levels)

    @property
    def resolution(self) -> float:
        """How finely the headline is known, as a share of it: the true figure lies in
        [headline, headline * (1 + resolution)). A ladder's step over the ceiling."""
        headline = self.headline
        return self.step / headline if headline else 0.0


@dataclass(frozen=True)
class SearchView(PlanView):
    """A ceiling search: probes at rates chosen one after another."""

    name: ClassVar[str] = "search"
    searched: ClassVar[bool] = True
    top_words: ClassVar[str] = "every probe"

    def key(self) -> tuple[object, ...]:
        search = self.result.config.search
        fields = ("start", "factor", "resolution", "hold", "warmup")
        return ("search", *(getattr(search, name) if search else None for name in fields))

    def title(self) -> str:
        search = self.result.config.search
        start = search.start if search and search.start is not None else 0
        return f"ceiling search from {rate(start)} req/s"

    def held_words(self) -> str:
        """A search's ceiling: "2,000 req/s (held; 2,090 failed, 4.5 % above, after 8 probes)"."""
        search = self.result.search
        if search is None:
            return super().held_words()
        held, failed, probes = search.held_rps, search.failed_rps, search.probes or 0
        if held is None:
            lowest = min(level.offered_rps for level in self.result.levels)
            return f"none: no probe held, down to {lowest:,.0f} req/s"
        if failed is None:
            return f"at least {held:,.0f} req/s (every probe held; the search did not find a limit)"
        return (
            f"{held:,.0f} req/s (held; {failed:,.0f} failed, {100 * (failed / held - 1):.1f} % above, "
            f"after {probes} probes)"
        )

    def sentence(self, name: str) -> str:
        """A ceiling search in a sentence: the bracket it ended on, and why the rate above failed."""
        levels = self.result.levels
        ceiling = self.result.ceiling_rps
        failed = [level for level in levels if not level.passed]
        if not failed:
            top = max(level.offered_rps for level in levels)
            return (
                f"{name} held every probe, up to {rate(top)} req/s: the search found no limit "
                f"in {len(levels)} probes."
            )
        lowest = min(failed, key=lambda level: level.offered_rps)
        why = "; ".join(lowest.reasons) or "it failed"
        if ceiling is None:
            return (
                f"{name} held no probe, down to {rate(min(level.offered_rps for level in levels))} "
                f"req/s ({why} at {rate(lowest.offered_rps)} req/s)."
            )
        return (
            f"{name} held {rate(ceiling)} req/s; {rate(lowest.offered_rps)} req/s failed ({why}), "
            f"found in {len(levels)} probes."
        )

    def holds(self) -> list[float]:
        search = self.result.config.search
        return [] if search is None or search.hold is None else [float(search.hold)]

    def facts(self) -> dict[str, str]:
        search = self.result.config.search
        if search is None:
            return {"search": "-", "model": OPEN_MODEL}
        resolution = None if search.resolution is None else 100 * search.resolution
        return {
            "search": f"from {rate(search.start or 0)} req/s, x{plain(search.factor)} until a probe "
            f"fails, then halving the gap between held and failed down to {plain(resolution)} %, "
            f"within {plain(search.budget)} s",
            "hold": f"{plain(search.hold)} s per probe; the first {plain(search.warmup)} s left out "
            "of its figures",
            "model": OPEN_MODEL,
        }

    @property
    def resolution(self) -> float:
        """A search's bracket: the lowest rate failed over the highest held."""
        search = self.result.search
        held, failed = (search.held_rps, search.failed_rps) if search else (None, None)
        if held and failed:
            return float(failed) / float(held) - 1
        return float((search.resolution if search else None) or 0.0)


@dataclass(frozen=True)
class UsersView(PlanView):
    """Phases of users who send, think and send again (closed model)."""

    name: ClassVar[str] = "users"
    closed: ClassVar[bool] = True
    x_label: ClassVar[str] = "users"

    @property
    def spike(self) -> bool:
        return closed.is_spike(self.result)

    def key(self) -> tuple[object, ...]:
        users = self.result.config.users
        phases = tuple((p.users, p.ramp, p.hold) for p in closed.phases(self.result))
        think = (users.think_min, users.think_max) if users else (None, None)
        return ("users", phases, *think)

    def title(self) -> str:
        return closed.users_words(self.result)

    @property
    def start(self) -> float:
        counts = closed.user_counts(self.result)
        return float(counts[0] if counts else 0)

    @property
    def step(self) -> float:
        return 0.0

    def holds(self) -> list[float]:
        return [float(p.hold) for p in closed.phases(self.result) if p.hold is not None]

    def facts(self) -> dict[str, str]:
        mean = closed.mean_think(self.result)
        counts = closed.user_counts(self.result)
        could = (
            f"; {rate(max(counts))} users could send at most {rate(max(counts) / mean)} req/s"
            if mean and counts
            else ""
        )
        return {
            "users": closed.plan_words(self.result)
            + "; the arrival is left out of the level's figures"
            + (
                " (a spike: the phase with the most users comes between two quieter ones)"
                if self.spike
                else ""
            ),
            "think time": f"{closed.think_words(self.result)} between an answer and the user's next "
            f"request, uniform{could}",
            "model": "closed: each user sends a request, waits for its answer, thinks and sends the "
            "next, so a slower answer means fewer requests; latency is measured from when the think "
            "time ended",
        }

    def x(self, level: Level) -> float:
        return float(level.users) if level.users is not None else float(level.offered_rps)

    def level_words(self, level: Level) -> str:
        return f"{rate(level.users or 0)} users"

    def ceiling_words(self, x: float) -> str:
        return f"{rate(x)} users"

    def detail(self) -> str:
        return f"think {closed.think_words(self.result)}"

    def sentence(self, name: str) -> str:
        """The users level held and the rate they achieved, why the next failed, and the peak; a
        spike's rate and p95 in each phase, the phases that failed, and the recovery."""
        if self.spike:
            return self._spike_sentence(name)
        levels = self.result.levels
        ceiling = self.result.ceiling_rps
        failed = self.first_failure
        if failed is None:
            return (
                f"{name} held every users level up to {rate(levels[-1].users or 0)} users "
                f"({rate(levels[-1].achieved_rps)} req/s at the top): no level failed, so its limit "
                "was not reached."
            )
        why = "; ".join(failed.reasons) or "it failed"
        if ceiling is None:
            return (
                f"{name} held no level: the first, {rate(failed.users or 0)} users, failed ({why})."
                + self._peak_words()
            )
        return (
            f"{name} held {rate(self.ceiling_users or 0)} users at {rate(ceiling)} req/s; the next "
            f"level, {rate(failed.users or 0)} users, failed ({why})." + self._peak_words()
        )

    def _peak_words(self) -> str:
        """ " Its peak was 812 req/s, at 160 users." when the peak is not the ceiling's rate."""
        peak = max(self.result.levels, key=lambda row: row.achieved_rps)
        ceiling = self.result.ceiling_rps
        if ceiling is not None and peak.achieved_rps == float(ceiling):
            return ""
        return f" Its peak was {rate(peak.achieved_rps)} req/s, at {rate(peak.users or 0)} users."

    def _spike_sentence(self, name: str) -> str:
        phases = closed.spike_levels(self.result)
        plan = closed.users_words(self.result)
        if len(phases) < 3:
            return f"{name} finished {len(phases)} of the spike's 3 phases ({plan})."
        rates = _listed([rate(row.achieved_rps) for _, row in phases])
        p95s = _listed([ms(row.p95_ms) for _, row in phases])
        text = (
            f"{name} answered {rates} req/s before, at and after the spike ({plan}), with p95 {p95s} ms; "
            f"{closed.recovery_words(self.result)}."
        )
        failed = [f"{phase} ({'; '.join(row.reasons)})" for phase, row in phases if not row.passed]
        if failed:
            text += f" Failed the pass mark: {', '.join(failed)}."
        return text

    def title_words(self) -> str:
        """ "held 80 users, 796 req/s"; a spike's rate at the spike and its recovery."""
        if not self.spike:
            ceiling = self.result.ceiling_rps
            if ceiling is None:
                return "no level held"
            held = f"held {rate(self.ceiling_users or 0)} users, {rate(ceiling)} req/s"
            return held + (" (no level failed)" if self.lower_bound else "")
        at_spike = self.headline
        if at_spike is None:
            return "the spike did not finish"
        if not closed.recovery_recorded(self.result):
            return f"{rate(at_spike)} req/s at the spike"
        return f"{rate(at_spike)} req/s at the spike, {closed.recovery_words(self.result)}"

    def held_words(self) -> str:
        """The users held and their rate; a spike's rate and p95 in each of its phases."""
        phases = closed.spike_levels(self.result)
        if phases:
            # A spike's "ceiling" would be the quiet phase after it: its phases say what happened.
            rates = " / ".join(f"{row.achieved_rps:,.0f}" for _, row in phases)
            p95s = " / ".join(ms(row.p95_ms) for _, row in phases)
            return f"{rates} req/s, p95 {p95s} ms ({' / '.join(name for name, _ in phases)})"
        ceiling = self.result.ceiling_rps
        if ceiling is None:
            return "none: the first level failed"
        return f"{self.result.ceiling_users or 0:,} users, {ceiling:,.0f} req/s (the highest level held)"

    def cell(self) -> str:
        """The rate only (the users held are said beside it), or "< 20 users"; a spike: the rate at
        the spike, or "-" when the spike did not finish."""
        if self.spike:
            return "-" if self.headline is None else rate(self.headline)
        levels = self.result.levels
        if self.headline is None:
            return f"< {rate(levels[0].users or 0)} users" if levels else "no level"
        return rate(self.headline)

    @property
    def headline(self) -> float | None:
        """The rate the users achieved at the highest users level held; a spike's rate at the spike
        (its ceiling would be the phase after the spike, which says nothing about the spike)."""
        if self.spike:
            return closed.spike_rate(self.result)
        return super().headline

    @property
    def ceiling_users(self) -> int | None:
        """The users of the highest level held; None when none held."""
        value = self.result.ceiling_users
        return int(value) if isinstance(value, int | float) else None

    @property
    def ceiling_x(self) -> float | None:
        if self.spike:
            return None  # its plan goes back down: no ceiling to climb to
        users = self.ceiling_users
        return None if users is None else float(users)

    @property
    def lower_bound(self) -> bool:
        return not self.spike and super().lower_bound

    @property
    def resolution(self) -> float:
        return 0.0  # a rate the users achieved


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


_VIEWS: dict[str, Callable[[RunResult], PlanView]] = {
    "ladder": PlanView,
    "search": SearchView,
    "users": UsersView,
}


def plan_of(result: RunResult) -> PlanView:
    """The view of the plan a result followed."""
    return _VIEWS[result.plan_kind](result)
