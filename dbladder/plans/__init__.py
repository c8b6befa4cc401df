"""Plans: what load a round sends, as data (workloads bring presets, load runs plans, reports read them).

One shape for three plans (`base.Plan`): the open model's linear ladder (`ladder.py`), the closed
model's users (`users.py`) and the ceiling search (`search.py`, `dbladder run`'s default); a
plan's levels and their due times (`planned_levels.py`); named rounds (`presets.py`). Which plan a finished
run followed is read from the result's record of it (`record.py`, older bundles too:
`plan_class_of`); how the reports then ask that plan for its figures and words is its view, in
`dbladder.report.plan_views`.
"""

from __future__ import annotations

from typing import Any

from .base import Outcome, Plan, Stop
from .ladder import MAX_REQUESTS, Ladder, ladder_due_times
from .planned_levels import PlannedLevel, due_times
from .presets import Preset
from .record import RunRecord
from .search import Search
from .users import MAX_USERS, Phase, UserPlan

PLANS: tuple[type[Plan], ...] = (Ladder, UserPlan, Search)
"""Every kind of plan, the one place they are listed: in the order a result's config block keeps
them, each after the ladder more particular than the ones before it (a finished run followed the
last one its record shows)."""


def plan_from_config(config: dict[str, Any]) -> Plan | None:
    """The plan a result's config block ran (under its "ladder", "users" or "search" key), or
    None when it names none."""
    for kind in reversed(PLANS):
        if config.get(kind.kind):
            return kind.from_json(config[kind.kind])
    return None


def plan_class_of(record: RunRecord) -> type[Plan]:
    """Which plan a finished run followed, from the result's record of it (older bundles too): the
    last of PLANS its record shows (users when its model or config block says so, a search when
    its config block or the search block it left does, else the ladder)."""
    return [kind for kind in PLANS if kind.shown_in(record)][-1]


def plan_to_config(plan: Plan) -> dict[str, Any]:
    """The config block's plan keys: the plan under its kind, None under the others (the shape
    results have always had, so that older bundles still read)."""
    return {kind.kind: plan.to_json() if kind.kind == plan.kind else None for kind in PLANS}


__all__ = [
    "MAX_REQUESTS",
    "MAX_USERS",
    "PLANS",
    "Ladder",
    "Outcome",
    "Phase",
    "Plan",
    "PlannedLevel",
    "Preset",
    "Search",
    "Stop",
    "UserPlan",
    "due_times",
    "ladder_due_times",
    "plan_class_of",
    "plan_from_config",
    "plan_to_config",
]
