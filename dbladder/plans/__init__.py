"""Plans: what load a round sends, as data (workloads bring presets, load runs plans, reports read them).

One shape for three plans (`base.Plan`): the open model's linear ladder (`ladder.py`), the closed
model's users (`users.py`) and the ceiling search (`search.py`, `dbladder run`'s default); a
plan's levels and their due times (`levels.py`); named rounds (`presets.py`). How the reports ask
a finished run's plan for its figures and words: each plan's view (`views.py`, `search_view.py`,
`users_view.py`) over the result's record of the plan (`record.py`), picked by `view_of`.
"""

from __future__ import annotations

from typing import Any

from .base import Outcome, Plan, Stop
from .ladder import MAX_REQUESTS, Ladder, ladder_due_times
from .levels import Level, due_times
from .presets import Preset
from .record import RunRecord
from .search import Search
from .users import MAX_USERS, Phase, UserPlan
from .views import PlanView

PLANS: tuple[type[Ladder] | type[UserPlan] | type[Search], ...] = (UserPlan, Search, Ladder)
"""Every kind of plan, in the order a result's config block is read for one."""


def plan_from_config(config: dict[str, Any]) -> Plan | None:
    """The plan a result's config block ran (under its "ladder", "users" or "search" key), or
    None when it names none."""
    for kind in PLANS:
        if config.get(kind.kind):
            return kind.from_json(config[kind.kind])
    return None


def plan_class_of(record: RunRecord) -> type[Ladder] | type[UserPlan] | type[Search]:
    """Which plan a finished run followed, from the result's record of it (older bundles too): the
    closed model's users when the model or the config block says so, a search when its config
    block or the search block it left does, else the ladder."""
    if record.model == UserPlan.model or record.config.users is not None:
        return UserPlan
    if record.config.search is not None or record.search is not None:
        return Search
    return Ladder


def view_of(record: RunRecord) -> PlanView:
    """The view of the plan a finished run followed: what the reports ask of it (`views.py`)."""
    return plan_class_of(record).view(record)


def plan_to_config(plan: Plan) -> dict[str, Any]:
    """The config block's plan keys: the plan under its kind, None under the others (the shape
    results have always had, so that older bundles still read)."""
    return {
        kind.kind: plan.to_json() if kind.kind == plan.kind else None for kind in (Ladder, UserPlan, Search)
    }


__all__ = [
    "MAX_REQUESTS",
    "MAX_USERS",
    "PLANS",
    "Ladder",
    "Level",
    "Outcome",
    "Phase",
    "Plan",
    "PlanView",
    "Preset",
    "Search",
    "Stop",
    "UserPlan",
    "due_times",
    "ladder_due_times",
    "plan_class_of",
    "plan_from_config",
    "plan_to_config",
    "view_of",
]
