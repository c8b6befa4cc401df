"""Plans: what load a round sends, as data (workloads bring presets, load runs plans, reports read them).

One shape for three plans (`base.Plan`): the open model's linear ladder (`ladder.py`), the closed
model's users (`users.py`) and the ceiling search (`search.py`, `dbladder run`'s default); a
plan's levels and their due times (`levels.py`); named rounds (`presets.py`).
"""

from __future__ import annotations

from typing import Any

from .base import Outcome, Plan, Stop
from .ladder import MAX_REQUESTS, Ladder, ladder_due_times
from .levels import Level, due_times
from .presets import Preset
from .search import Search
from .users import MAX_USERS, Phase, UserPlan

PLANS: tuple[type[Ladder] | type[UserPlan] | type[Search], ...] = (UserPlan, Search, Ladder)
"""Every kind of plan, in the order a result's config block is read for one."""


def plan_from_config(config: dict[str, Any]) -> Plan | None:
    """The plan a result's config block ran (under its "ladder", "users" or "search" key), or
    None when it names none."""
    for kind in PLANS:
        if config.get(kind.kind):
            return kind.from_json(config[kind.kind])
    return None


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
    "Preset",
    "Search",
    "Stop",
    "UserPlan",
    "due_times",
    "ladder_due_times",
    "plan_from_config",
    "plan_to_config",
]
