"""Choosing a round's plan from the options a user gave (dbladder.run.plan_choice)."""

from __future__ import annotations

import pytest

from dbladder.errors import UsageError
from dbladder.plans import Ladder, Search, UserPlan
from dbladder.run.plan_choice import SEARCH_PLAN, PlanOptions, choose_plan


def test_no_preset_is_the_ceiling_search_with_the_options_over_its_defaults() -> None:
    choice = choose_plan("shop", PlanOptions(start=100, hold=4, resolution="10%", min_answers=50, writes=0.5))
    assert choice.name == SEARCH_PLAN and choice.preset is None
    assert choice.plan == Search(start=100, hold=4, resolution=0.1, min_answers=50)
    assert not isinstance(choice.plan, Ladder | UserPlan)
    assert choice.write_share == 0.5 and choice.weights is None and choice.engine_settings == {}


def test_step_alone_asks_for_the_quick_ladder() -> None:
    choice = choose_plan("shop", PlanOptions(step=50))
    assert choice.name == "quick" and isinstance(choice.plan, Ladder) and choice.plan.step == 50
    assert not isinstance(choice.plan, Search)


def test_a_workloads_default_preset_is_its_plan() -> None:
    assert choose_plan("orm", PlanOptions()).name == "ciso"


def test_a_users_preset_takes_users_ramp_and_hold_and_keeps_the_spikes_jumps() -> None:
    choice = choose_plan("shop", PlanOptions(preset="spike", ramp=5, hold=3))
    assert isinstance(choice.plan, UserPlan) and not isinstance(choice.plan, Ladder)
    ramps = [phase.ramp for phase in choice.plan.phases]
    assert ramps[0] == 5 and 0 in ramps[1:]
    assert {phase.hold for phase in choice.plan.phases} == {3}
    levels = choose_plan("shop", PlanOptions(preset="users-read", users="10,20"))
    assert isinstance(levels.plan, UserPlan) and [p.users for p in levels.plan.phases] == [10, 20]


def test_writes_over_a_preset_drops_its_weights() -> None:
    choice = choose_plan("shop", PlanOptions(preset="read", writes=0.3))
    assert choice.write_share == 0.3 and choice.weights is None
    assert choose_plan("shop", PlanOptions(preset="read")).write_share == 0.0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            PlanOptions(resolution="five"),
            "--resolution takes a percentage (5%) or a fraction (0.05), not 'five'",
        ),
        (PlanOptions(users="10,20"), "--users applies to presets, not to the ceiling search; add --preset"),
        (PlanOptions(users="1", ramp=2), "--users, --ramp apply to presets, not to the ceiling search"),
        (PlanOptions(preset="quick", budget=60), "--budget applies to the ceiling search, not to a preset"),
        (PlanOptions(preset="quick", min_answers=9), "--min-answers applies to the ceiling search"),
        (PlanOptions(preset="users-read", start=5), "--start apply to ladder presets; this preset is closed"),
        (PlanOptions(preset="users-read", users="a,b"), "--users takes whole numbers separated by commas"),
        (PlanOptions(preset="nope"), "the shop workload has no preset 'nope'; its presets: "),
    ],
)
def test_options_that_do_not_go_together_are_usage_errors(options: PlanOptions, message: str) -> None:
    with pytest.raises(UsageError) as raised:
        choose_plan("shop", options)
    assert message in str(raised.value)
