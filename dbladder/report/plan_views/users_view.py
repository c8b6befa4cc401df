"""A closed-model plan as the reports ask it (`views.PlanView`): users plans, think times, spike phases.

A closed-model result runs phases of users who send, think and send again (`config.users`,
`model: "closed"`), "Postgres vs MariaDB on two dedicated CPUs". Here a level is a number of
users, the rate is what those users achieved, and `offered_rps` is only what they could have sent
had every answer been instant (users / mean think time).

A spike is a plan whose phase with the most users is neither the first nor the last ("Postgres vs
MariaDB on two dedicated CPUs"'s 100 -> 3,000 -> 100): its figures are the phases before, at and
after the peak, and `spike.recovery_seconds`. The runner attaches a `spike` block to any
three-phase closed run (with a note when the plan is no spike), so the plan's shape decides, not
the block's presence.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from ...formats import ms, number, plain, rate
from ...plans import Plan, UserPlan
from ...plans.record import FinishedLevel, PhaseRecord
from .ladder_view import PEAK_ROW, RECOVERY_ROW, PairWords, PlanView, Throughput

SPIKE_PHASES = ("before", "spike", "after")
DEFAULT_TOLERANCE = 0.2  # the runner's, when a spike block does not say


@dataclass(frozen=True)
class UsersView(PlanView):
    """Phases of users who send, think and send again (closed model)."""

    plan: ClassVar[type[Plan]] = UserPlan
    name: ClassVar[str] = "users"
    x_label: ClassVar[str] = "users"
    x_column: ClassVar[str] = "users"
    top_words: ClassVar[str] = "every level"
    levels_note: ClassVar[str] = (
        " In a users round, users is the level's users (their figures cover its hold, after "
        "they arrived) and could send is users / mean think time: the most they would have "
        "sent had every answer been instant."
    )
    unreached_advice: ClassVar[str] = (
        "ran, up to {top} users: the limit lies higher; add users (--users) to find it."
    )

    @property
    def spike(self) -> bool:
        return self._peak_inside()

    def key(self) -> tuple[object, ...]:
        users = self.result.config.users
        phases = tuple((p.users, p.ramp, p.hold) for p in self.plan_phases())
        think = (users.think_min, users.think_max) if users else (None, None)
        return ("users", phases, *think)

    def title(self) -> str:
        return self.users_words()

    @property
    def start(self) -> float:
        counts = self.user_counts()
        return float(counts[0] if counts else 0)

    @property
    def step(self) -> float:
        return 0.0

    def holds(self) -> list[float]:
        return [float(p.hold) for p in self.plan_phases() if p.hold is not None]

    def facts(self) -> dict[str, str]:
        mean = self.mean_think()
        counts = self.user_counts()
        could = (
            f"; {rate(max(counts))} users could send at most {rate(max(counts) / mean)} req/s"
            if mean and counts
            else ""
        )
        return {
            "users": self.plan_words()
            + "; the arrival is left out of the level's figures"
            + (
                " (a spike: the phase with the most users comes between two quieter ones)"
                if self.spike
                else ""
            ),
            "think time": f"{self.think_words()} between an answer and the user's next "
            f"request, uniform{could}",
            "model": "closed: each user sends a request, waits for its answer, thinks and sends the "
            "next, so a slower answer means fewer requests; latency is measured from when the think "
            "time ended",
        }

    def x(self, level: FinishedLevel) -> float:
        return float(level.users) if level.users is not None else float(level.offered_rps)

    def level_words(self, level: FinishedLevel) -> str:
        return f"{rate(level.users or 0)} users"

    def ceiling_words(self, x: float) -> str:
        return f"{rate(x)} users"

    def detail(self) -> str:
        return f"think {self.think_words()}"

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
        phases = self.phases()
        plan = self.users_words()
        if len(phases) < 3:
            return f"{name} finished {len(phases)} of the spike's 3 phases ({plan})."
        rates = _listed([rate(row.achieved_rps) for _, row in phases])
        p95s = _listed([ms(row.p95_ms) for _, row in phases])
        text = (
            f"{name} answered {rates} req/s before, at and after the spike ({plan}), with p95 {p95s} ms; "
            f"{self.recovery_words()}."
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
        if not self.recovery_recorded():
            return f"{rate(at_spike)} req/s at the spike"
        return f"{rate(at_spike)} req/s at the spike, {self.recovery_words()}"

    def held_words(self) -> str:
        """The users held and their rate; a spike's rate and p95 in each of its phases."""
        phases = self.phases()
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
            return self.spike_rate()
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

    @property
    def names_users_held(self) -> bool:
        return not self.spike

    @property
    def second_row(self) -> str | None:
        return RECOVERY_ROW if self.spike else PEAK_ROW

    precision_order: ClassVar[int] = 2

    @classmethod
    def precision(cls, entries: Sequence[tuple[str, PlanView]]) -> tuple[str, str] | None:
        """A users round's precision is one users level (a spike's figure is no level held)."""
        plans = list(
            dict.fromkeys(
                view.users_words() for _, view in entries if isinstance(view, UsersView) and not view.spike
            )
        )
        if not plans:
            return None
        return (
            "Precision is one users level.",
            f"A closed round's ceiling is a level of its plan ({' / '.join(plans)}): the limit lies "
            "between the level held and the next one, and the rate given with it is what those users "
            "achieved, not the most the engine could serve.",
        )

    def after_failure(self, continue_after_fail: bool | None) -> str:
        # The runner plays every phase of a closed plan: users slow themselves down instead.
        return "every phase runs (a failed level does not stop the plan)"

    def summary_head(self) -> list[str]:
        label = "phases " if self.phases() else "ceiling"
        return [f"{label}  {self.held_words()}"]

    def summary_tail(self) -> list[str]:
        # The runner attaches a spike block to any three-phase plan; only a spike has a recovery.
        return [f"recovery {self.recovery_words()}"] if self.phases() else []

    def throughput(self) -> Throughput:
        """Achieved rate against users: n users thinking t s on average could send at most n / t
        req/s; the gap below that line is time spent waiting for answers."""
        think = self.mean_think()
        return Throughput(
            "Achieved rate against users",
            "Answered requests per second against the number of users. The dashed line is what the users "
            "could send if every answer were instant (users / mean think time); below it, they spent "
            "time waiting for answers, and where the lines flatten the service is saturated.",
            "what the users could send",
            1 / think if think else None,
        )

    def pair_words(self) -> PairWords:
        if self.spike:
            return PairWords("At the spike ", "answered", "did not finish the spike", limit_note=False)
        return PairWords(
            "At the highest users level each held ", "sustained", "held no level", limit_note=False
        )

    def both_held(self, best: str, other: str, best_figure: float, other_figure: float) -> str | None:
        if self.spike:
            return None  # a spike's plan goes back down: no top to hold
        return (
            f"{best} and {other} both held every users level ({rate(best_figure)} against "
            f"{rate(other_figure)} req/s at the top, where the users' think time sets the rate): "
            "neither limit was reached; add users to separate them."
        )

    def first_failed(self) -> str:
        first = self.result.levels[0]
        return f"{rate(first.users or 0)} users): its limit is below the plan; start with fewer users."

    def think_caveat(self, title: str) -> str | None:
        mean, counts = self.mean_think(), self.user_counts()
        if not mean or not counts:
            return None
        most = max(counts)
        return (
            f"In {title}, each user thinks {self.think_words()} between an answer and its "
            f"next request, so {rate(most)} users send at most {rate(most / mean)} req/s, and fewer "
            "as answers slow down: the rate is what the users sent, not what the engine could serve. "
            "Until the service saturates, every engine reaches about the same rate (the 800-user "
            "row); compare latency there, and rates only where they stop growing with the users."
        )

    def plan_phases(self) -> tuple[PhaseRecord, ...]:
        """The plan's phases (`config.users`), each with its users, ramp and hold; none when unknown."""
        users = self.result.config.users
        return tuple(users.phases) if users else ()

    def user_counts(self) -> list[int]:
        """The users of each phase, in order."""
        return [int(phase.users or 0) for phase in self.plan_phases()]

    def _peak(self) -> int | None:
        """The phase with the most users (the first of equals), or None for an empty plan."""
        counts = self.user_counts()
        return max(range(len(counts)), key=lambda i: counts[i]) if counts else None

    def _peak_inside(self) -> bool:
        """Whether the busiest phase has a phase before and after it: the plan is a spike."""
        peak = self._peak()
        return peak is not None and 0 < peak < len(self.user_counts()) - 1

    def users_words(self) -> str:
        """The plan in a few words: "20 to 80 users", "20 → 200 → 20 users", "80, 20, 40 users"."""
        counts = self.user_counts()
        if not counts:
            return "? users"
        shown = [rate(count) for count in counts]
        if self.spike:
            return " → ".join(shown) + " users"
        if len(counts) > 1 and all(a < b for a, b in itertools.pairwise(counts)):
            return f"{shown[0]} to {shown[-1]} users"
        return ", ".join(shown) + " users"

    def think_times(self) -> tuple[float, float] | None:
        """(shortest, longest) think time in seconds, or None when the result does not say."""
        users = self.result.config.users
        low = number(users.think_min) if users else None
        high = number(users.think_max) if users else None
        return None if low is None or high is None else (low, high)

    def mean_think(self) -> float | None:
        """The mean think time in seconds (uniform between the two), or None."""
        think = self.think_times()
        return None if think is None else (think[0] + think[1]) / 2

    def think_words(self) -> str:
        """The think time as "Postgres vs MariaDB on two dedicated CPUs" says it: "50 to 150 ms"."""
        think = self.think_times()
        if think is None:
            return "? ms"
        low, high = (plain(round(value * 1000, 3)) for value in think)
        return f"{low} ms" if low == high else f"{low} to {high} ms"

    def plan_words(self) -> str:
        """Every phase of the plan written out, for the setup section."""
        found = self.plan_phases()
        ramps = {plain(phase.ramp) for phase in found}
        hold_set = {plain(phase.hold) for phase in found}
        counts = ", ".join(rate(phase.users or 0) for phase in found)
        if len(ramps) == 1 and len(hold_set) == 1:
            ramp, hold = ramps.pop(), hold_set.pop()
            arrive = "at once" if ramp == "0" else f"over {ramp} s"
            return f"{counts} users; each level's users arrive {arrive}, then it is held {hold} s"
        return "; ".join(
            f"{rate(phase.users or 0)} users "
            + ("at once" if not phase.ramp else f"over {plain(phase.ramp)} s")
            + f", held {plain(phase.hold)} s"
            for phase in found
        )

    def phases(self) -> list[tuple[str, FinishedLevel]]:
        """A spike's finished levels as (phase name, level): before, spike, after; empty for no spike."""
        peak = self._peak()
        if peak is None or not self.spike:
            return []
        levels = {level.index: level for level in self.result.levels}
        indexes = (peak - 1, peak, peak + 1)
        return [(name, levels[i]) for name, i in zip(SPIKE_PHASES, indexes, strict=True) if i in levels]

    def spike_rate(self) -> float | None:
        """Answers per second at the spike (the phase with the most users), or None before it finished."""
        peak = self._peak() if self.spike else None
        found = [level for level in self.result.levels if peak is not None and level.index == peak]
        return float(found[0].achieved_rps) if found else None

    def recovery_words(self, short: bool = False) -> str:
        """How long p95 took to come back after the spike, from `spike.recovery_seconds`.

        "p95 back within 20 % after 3 s" or "p95 did not recover (...)"; `short` gives a table cell:
        "3 s", "did not recover", "not computed".
        """
        block = self.result.spike
        tolerance = number(block.tolerance) if block else None
        share = plain(round(100 * (DEFAULT_TOLERANCE if tolerance is None else tolerance), 3))
        seconds = number(block.recovery_seconds) if block else None
        if seconds is not None:
            return f"{plain(seconds)} s" if short else f"p95 back within {share} % after {plain(seconds)} s"
        if block is None or block.note or not block.to_json():
            note = (block.note if block else None) or "the run recorded no recovery time"
            return "not computed" if short else f"recovery not computed ({note})"
        return (
            "did not recover"
            if short
            else f"p95 did not recover: never back within {share} % of its pre-spike value"
        )

    def recovery_recorded(self) -> bool:
        """Whether the spike block says how long recovery took (or that it never came): no note."""
        block = self.result.spike
        return block is not None and "recovery_seconds" in block.to_json() and not block.note


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
