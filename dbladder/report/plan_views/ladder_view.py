"""A plan as the reports ask it: its figures, its x axis, its words, from a finished run.

A run climbed a ladder of arrival rates, searched for its ceiling with probes, or ran phases of
users (closed model, "Postgres vs MariaDB on two dedicated CPUs"), of which a spike is one shape.
Each plan has its view (`PlanView` here is the ladder's, `search_view.py`, `users_view.py`), and
`dbladder.report.plan_views.view_of` is the one place that picks it, from the result's record of its
plan (`dbladder.plans.record`): the reports ask the view (what the round key holds, its title and
setup facts, the level table's first column, where a level sits on the x axis, the headline and how
finely it is known, its sentences) instead of asking which kind of plan a run followed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from ...formats import plain, rate
from ...plans import Ladder, Plan
from ...plans.record import FinishedLevel, RunRecord

PEAK_ROW, RECOVERY_ROW = "peak", "p95 recovery"
"""The result table's second rows of a round (`PlanView.second_row`)."""

OPEN_MODEL = (
    "open: each request is sent when it is due, whatever the service does; latency is measured from "
    "when it was due"
)


@dataclass(frozen=True)
class PlanView:
    """A ladder of arrival rates: the base every plan view shares."""

    result: RunRecord
    plan: ClassVar[type[Plan]] = Ladder
    """The plan this is the view of (`dbladder.plans.PLANS`)."""
    name: ClassVar[str] = "ladder"
    x_label: ClassVar[str] = "offered rate, req/s"
    x_column: ClassVar[str] = "offered"
    """The terminal's level table's second column: the rate offered, or the users."""
    top_words: ClassVar[str] = "the top step"
    """What holding everything means: "the top step" of a ladder, "every probe" of a search,
    "every level" of users."""
    probes_in_order: ClassVar[bool] = False
    """Whether the levels are probes whose rates were chosen one after another (a search): the
    plots join them by rate and show them once more in the order run."""
    levels_note: ClassVar[str] = ""
    """What the levels section says of this plan's columns ("" when nothing)."""
    unreached_advice: ClassVar[str] = (
        "climbed, up to {top} req/s: the limit lies higher; climb further (--start, --step, --steps) "
        "to find it."
    )
    """The caveat's words after "X held every level it " when no level failed ({top}: the last x)."""
    precision_order: ClassVar[int] = 1
    """Where that caveat comes among the plans' (a search's first, then a ladder's, then users')."""

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

    def x(self, level: FinishedLevel) -> float:
        """Where a level sits on the plots' x axis."""
        return float(level.offered_rps)

    def level_words(self, level: FinishedLevel) -> str:
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
    def first_failure(self) -> FinishedLevel | None:
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

    @property
    def ceiling_users(self) -> int | None:
        """The users of the highest level held; None when none held or the plan has no users."""
        return None

    @property
    def names_users_held(self) -> bool:
        """Whether the result table names the users level held beside the rates (a users plan)."""
        return False

    @property
    def second_row(self) -> str | None:
        """The result table's second row of a round: "peak" (a users plan), "p95 recovery" (a
        spike), None for none."""
        return None

    @classmethod
    def precision(cls, entries: Sequence[tuple[str, PlanView]]) -> tuple[str, str] | None:
        """The caveat (lead, text) on how finely this kind of plan's headline is known, for the runs
        (name, view) of its rounds in a report; None when there is nothing to say. A ladder's: one
        step."""
        steps = sorted({view.step for _, view in entries})
        if not steps:
            return None
        listed = " / ".join(rate(step) for step in steps)
        return (
            "Precision is one step.",
            f"Each ceiling is a step on the ladder (steps of {listed} req/s): "
            "the limit lies between the ceiling and the next step, and differences below a step are "
            "not real.",
        )

    def after_failure(self, continue_after_fail: bool | None) -> str:
        """The setup's line on what a failed level does to the plan."""
        return "climb on" if continue_after_fail else "stop"

    def summary_head(self) -> list[str]:
        """The terminal summary's lines on what the run held."""
        return [f"ceiling  {self.held_words()}"]

    def summary_tail(self) -> list[str]:
        """The terminal summary's lines after the peak: what else the plan found."""
        return []

    def throughput(self) -> Throughput:
        """The throughput plot's title, caption and diagonal, as the plan's x axis has them."""
        return Throughput(
            "Achieved against offered rate",
            "Answered requests per second against the offered rate. Below the dashed diagonal the "
            "service answered less than it was sent.",
            "achieved = offered",
            1.0,
        )

    def pair_words(self) -> PairWords:
        """How the verdict words one engine against another on this plan's headline."""
        return PairWords(where="", what="held", none_held="held no level", limit_note=True)

    def both_held(self, best: str, other: str, best_figure: float, other_figure: float) -> str | None:
        """The verdict when both engines held every level, or None when that says nothing here."""
        if best_figure != other_figure:
            return None
        return (
            f"{best} and {other} both held the top of the ladder ({rate(best_figure)} req/s): neither "
            "limit was reached; climb higher to separate them."
        )

    def unreached(self, who: str, top: float) -> str:
        """The caveat when no level failed: `who` held every level up to `top` (an x)."""
        return who + self.unreached_advice.format(top=rate(top))

    def first_failed(self) -> str:
        """The caveat's words when the first level failed (a run with levels)."""
        first = self.result.levels[0]
        return f"{rate(first.offered_rps)} req/s): its limit is below the ladder; start lower."

    def think_caveat(self, title: str) -> str | None:
        """Why the plan's rate is bounded whatever the engine could do, or None (an open plan's is not)."""
        return None

    def recovery_words(self, short: bool = False) -> str:
        """How long p95 took to come back after a spike ("" for a plan that has no spike)."""
        return ""

    def phases(self) -> list[tuple[str, FinishedLevel]]:
        """A spike's finished levels by phase name (before, spike, after); empty for any other plan."""
        return []

    def stall_line(self) -> str | None:
        """What the plan did about a level that failed by a stall, or None when nothing."""
        return None

    def level_notes(self) -> list[str]:
        """Notes for the level table on levels the plan ran for a reason of its own (a search's
        second probe of a rate): "Level 2: ..."."""
        return []


@dataclass(frozen=True)
class Throughput:
    """The throughput plot's title, caption, and the diagonal (its label and slope; no slope: none)."""

    title: str
    caption: str
    diagonal: str
    slope: float | None


@dataclass(frozen=True)
class PairWords:
    """The verdict's words for one engine against another: `where` leads the sentence ("At the
    spike "), `what` the engine did ("held", "sustained"), `none_held` what an engine without a
    figure did, and `limit_note` whether a winner that held every level is said to go higher."""

    where: str
    what: str
    none_held: str
    limit_note: bool
