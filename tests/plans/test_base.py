"""The one shape of a plan (dbladder.plans.base): each kind says its next level, its schedule, why it
stopped and its headline, and comes back out of a result's config block as it went in."""

from __future__ import annotations

import json

import pytest

from dbladder.plans import Ladder, Outcome, Phase, Plan, Search, UserPlan, plan_from_config, plan_to_config

LADDER = Ladder(100, 50, 3, 2.0, warmup=0.5)
USERS = UserPlan((Phase(10, 1.0, 3.0), Phase(20, 1.0, 3.0)))
SEARCH = Search(start=100, hold=3, warmup=1, settle=0.5, budget=20)


def passed(rate: float, users: int | None = None) -> Outcome:
    return Outcome(rate, True, achieved=rate * 0.9, users=users)


def failed(rate: float, *reasons: str, excused: bool = False) -> Outcome:
    return Outcome(rate, False, reasons, excused, achieved=rate * 0.5)


@pytest.mark.parametrize("plan", [LADDER, USERS, SEARCH])
def test_a_plan_goes_into_a_results_config_block_and_comes_back_the_same(plan: Plan) -> None:
    block = json.loads(json.dumps(plan_to_config(plan)))
    assert list(block) == ["ladder", "users", "search"]
    assert [kind for kind, value in block.items() if value is not None] == [plan.kind]
    assert plan_from_config(block) == plan
    assert plan_from_config({"ladder": None, "users": None, "search": None}) is None


def test_a_search_reads_back_from_a_search_block_that_also_holds_what_it_found() -> None:
    block = SEARCH.to_json() | {
        "held_rps": 400.0,
        "failed_rps": 800.0,
        "probes": 3,
        "ceiling_rests_on": {
            "rate_rps": 400,
            "levels": [3],
            "failed_twice": False,
            "words": "400 req/s failed once (level 3)",
        },
        "stopped_because": "budget",
    }
    assert plan_from_config({"search": block}) == SEARCH


def test_a_ladder_runs_its_steps_in_order_and_stops_after_the_first_failure() -> None:
    scheduled = LADDER.scheduled()
    assert [level.rate for level in scheduled] == [100, 150, 200]
    assert LADDER.next_level([], 0) == scheduled[0]
    assert LADDER.next_level([passed(100)], 0) == scheduled[1]
    assert LADDER.next_level([passed(100), failed(150, "p95 80 ms > 50 ms")], 0) is None
    stop = LADDER.stop([passed(100), failed(150, "p95 80 ms > 50 ms")], 0)
    assert stop.words == "level 2 (150 req/s) failed: p95 80 ms > 50 ms"
    assert LADDER.headline([passed(100), failed(150)]) == {"ceiling_rps": 100}
    assert LADDER.stop([passed(100), passed(150), passed(200)], 0).words == "the ladder finished"
    assert LADDER.next_level([passed(100), passed(150), passed(200)], 0) is None


def test_an_excused_failure_does_not_stop_a_ladder_nor_count_as_held() -> None:
    shown = [passed(100), failed(150, "a fault", excused=True)]
    assert LADDER.next_level(shown, 0) == LADDER.scheduled()[2]
    assert LADDER.headline(shown) == {"ceiling_rps": 100}
    assert LADDER.stop([*shown, passed(200)], 0).words == "the ladder finished"


def test_a_users_plan_runs_every_phase_and_its_headline_is_the_users_held() -> None:
    assert [level.rate for level in USERS.scheduled()] == [100, 200]
    shown = [passed(100, users=10), failed(200)]
    assert USERS.next_level(shown[:1], 0) == USERS.scheduled()[1]
    assert USERS.next_level(shown, 0) is None
    assert USERS.stop(shown, 0).words == "every phase ran"
    assert USERS.headline(shown) == {"ceiling_users": 10, "ceiling_rps": 90.0}
    assert USERS.headline([failed(100)]) == {"ceiling_users": None, "ceiling_rps": None}
    assert USERS.peak_users == 20 and USERS.model == "closed"


def test_a_search_chooses_each_probe_after_the_last_and_fixes_none_in_advance() -> None:
    assert SEARCH.scheduled() == [] and SEARCH.duration == 20 and SEARCH.settle == 0.5
    first = SEARCH.next_level([], 0)
    assert first is not None and (first.index, first.rate, first.hold, first.warmup) == (0, 100, 3, 1)
    second = SEARCH.next_level([passed(100)], 3.5)
    assert second is not None and (second.index, second.rate) == (1, 200)
    shown = [passed(100), passed(200), failed(400)]
    headline = SEARCH.headline(shown, SEARCH.stop(shown, 18.0))
    assert headline["ceiling_rps"] == 200
    assert headline["search"] == SEARCH.to_json() | {
        "held_rps": 200,
        "failed_rps": 400,
        "probes": 3,
        "ceiling_rests_on": {
            "rate_rps": 400,
            "levels": [3],
            "failed_twice": False,
            "words": "400 req/s failed once (level 3)",
        },
        "stopped_because": "budget",
    }
    assert "stopped_because" not in SEARCH.headline(shown)["search"]


def test_each_plan_describes_itself_in_one_line() -> None:
    assert LADDER.describe() == "climbing 3 levels from 100 req/s (+50 each, 2 s holds)"
    assert USERS.describe() == "users 10, 20 (think 50-150 ms)"
    assert SEARCH.describe() == (
        "searching for the ceiling from 100 req/s (x2 until a level fails, then halving the gap to "
        "5 %; 3 s probes, budget 20 s)"
    )
