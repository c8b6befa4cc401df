"""The plan a result followed, as the reports ask it (`dbladder.report.plan_views`, picked by `view_of`)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from report_support import fake_result, spike_result, users_result

from dbladder.plans import Ladder, Search, UserPlan, plan_class_of
from dbladder.report.plan_views import PlanView, view_of
from dbladder.report.plan_views.search_view import SearchView
from dbladder.report.plan_views.users_view import UsersView
from dbladder.result.run import RunResult

PREVIOUS = Path(__file__).parents[1] / "result" / "fixtures" / "previous-release-users.json"
"""A users run's result.json as the release before the typed result wrote it, untouched."""


def previous() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(PREVIOUS.read_text())
    return data


def search_result() -> RunResult:
    result = fake_result()
    result["config"].update(
        ladder=None,
        search={"start": 500, "factor": 2, "resolution": 0.05, "budget": 20, "hold": 3.0, "warmup": 1.0},
    )
    result["search"] = {"held_rps": 1000, "failed_rps": 1050, "probes": 5, "stopped_because": "resolution"}
    result["ceiling_rps"] = 1000
    return RunResult.from_json(result)


def test_the_view_is_picked_by_the_plan_kind_of_the_result():
    assert type(view_of(RunResult.from_json(fake_result()))) is PlanView
    assert type(view_of(search_result())) is SearchView
    assert type(view_of(RunResult.from_json(users_result()))) is UsersView


def test_a_ladder_is_told_by_its_start_step_and_hold():
    ladder = view_of(RunResult.from_json(fake_result()))
    assert (ladder.start, ladder.step, ladder.holds()) == (500.0, 500.0, [4.0])
    assert ladder.title() == "500 to 1,500 req/s"
    assert ladder.facts()["ladder"] == "500 req/s, +500 per level, 3 levels (top 1,500 req/s)"
    assert ladder.headline == 1000.0 and ladder.resolution == 0.5 and not ladder.lower_bound


def test_a_search_writes_out_its_start_factor_resolution_budget_hold_and_warmup():
    search = view_of(search_result())
    facts = search.facts()
    assert "ladder" not in facts
    assert facts["search"] == (
        "from 500 req/s, x2 until a probe fails, then halving the gap between held and failed down to "
        "5 %, within 20 s"
    )
    assert facts["hold"] == "3 s per probe; the first 1 s left out of its figures"
    assert search.holds() == [3.0] and search.title() == "ceiling search from 500 req/s"
    assert round(search.resolution, 3) == 0.05  # the last bracket, 1,050 over 1,000


def test_users_are_counted_on_the_x_axis_and_a_spike_has_no_ceiling_to_mark():
    users = view_of(RunResult.from_json(users_result(failing_from=2)))
    level = users.result.levels[1]
    assert users.x(level) == 40.0 and users.ceiling_x == 40.0 and users.resolution == 0.0
    assert users.headline == 390.0 and not users.spike
    spike = view_of(RunResult.from_json(spike_result()))
    assert spike.spike and spike.ceiling_x is None and spike.headline == 1500.0
    assert not spike.lower_bound


def test_a_bundle_of_the_previous_release_is_a_users_plan():
    assert plan_class_of(RunResult.from_json(previous())) is UserPlan


def test_the_plan_is_read_from_the_model_or_the_search():
    document = previous()
    ladder = copy.deepcopy(document)
    ladder.update(model="open")
    ladder["config"].update(users=None, ladder={"start": 1, "step": 1, "steps": 2})
    assert plan_class_of(RunResult.from_json(ladder)) is Ladder
    ladder["config"]["search"] = {"start": 500, "factor": 2}
    assert plan_class_of(RunResult.from_json(ladder)) is Search


def test_every_plan_has_one_view_and_the_plans_are_listed_once():
    # dbladder.plans.PLANS is the one list of plans; each view names its plan, so a new plan
    # without a view (or a view of no plan) fails here, not in a report.
    from dbladder.plans import PLANS
    from dbladder.report.plan_views import VIEWS

    assert set(VIEWS) == set(PLANS)
    assert len(VIEWS) == len(PLANS) == 3
