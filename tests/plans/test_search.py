"""The ceiling search's planner against fake servers of known capacity: where it ends, in how many probes."""

from __future__ import annotations

import random

import pytest

from dbladder.errors import InvalidConfig
from dbladder.plans import Outcome
from dbladder.plans.search import (
    BUDGET,
    FOUND,
    MAX_HOLD_FACTOR,
    TOO_FAST,
    TOO_SLOW,
    Search,
    bracket,
    ceiling,
    ceiling_rests_on,
    probed_again,
    rests_on_a_stall,
)


def search_against(capacity: float, search: Search, noise: float = 0.0, seed: int = 1) -> list[Outcome]:
    """Run the planner against a server that holds a rate when it is at most its capacity
    (times a random factor within +-noise, drawn afresh per probe)."""
    rng = random.Random(seed)
    probes: list[Outcome] = []
    while (rate := search.next_rate(probes)) is not None:
        probes.append(Outcome(rate, rate <= capacity * (1 + rng.uniform(-noise, noise))))
        assert len(probes) < 100
    return probes


@pytest.mark.parametrize("capacity", [3.7, 180, 500, 2_600, 4_100, 31_000, 250_000])
def test_the_search_ends_within_its_resolution_of_the_capacity(capacity):
    search = Search(start=500, budget=10_000)
    probes = search_against(capacity, search)
    held, failed = bracket(probes)
    assert search.stop_reason(probes) == FOUND
    assert held is not None and failed is not None
    assert held <= capacity < failed <= held * 1.05
    assert capacity / 1.05 <= ceiling(probes) <= capacity


def test_the_probes_climb_geometrically_then_bisect():
    probes = search_against(2_600, Search(start=500, budget=10_000))
    rates = [probe.rate for probe in probes]
    assert rates[:4] == [500, 1000, 2000, 4000]
    assert [probe.passed for probe in probes[:4]] == [True, True, True, False]
    assert rates[4] == 2830  # sqrt(2,000 * 4,000) to three figures
    # Bisecting a factor of 2 down to 5 %: ln 2 / ln 1.05 = 14.2, so 4 halvings of the log width.
    assert len(rates) == 4 + 4


def test_the_first_probe_failing_sends_the_search_down_once_it_failed_again():
    probes = search_against(90, Search(start=500, budget=10_000))
    # The first probe's failure is probed once more: saturation fails again, and the search goes down.
    assert [probe.rate for probe in probes[:5]] == [500, 500, 250, 125, 62.5]
    assert [probe.rate for probe in probes].count(500) == 2
    assert ceiling(probes) is not None and 90 / 1.05 <= ceiling(probes) <= 90


def test_the_budget_stops_the_search_and_the_bracket_stays_honest():
    search = Search(start=500, budget=60, hold=10, settle=2)  # 5 probes of 12 s
    probes = search_against(2_600, search)
    assert len(probes) == 5 and search.max_probes == 5
    assert search.stop_reason(probes) == BUDGET
    assert bracket(probes) == (2000, 2830)  # the ceiling is what was held, not a guess past it


def test_the_elapsed_time_counts_instead_of_the_nominal_probe_length():
    search = Search(start=500, budget=60, hold=10, settle=2)
    probes = [Outcome(500, True)]
    assert search.next_rate(probes, elapsed=12) == 1000
    assert search.next_rate(probes, elapsed=50) is None and search.stop_reason(probes, elapsed=50) == BUDGET


def test_a_server_that_holds_nothing_or_everything_ends_the_search():
    assert search_against(0.1, Search(start=500, budget=10_000))[-1].rate >= 1
    assert (
        Search(start=500, budget=10_000).stop_reason(search_against(0.1, Search(start=500, budget=10_000)))
        == TOO_SLOW
    )
    search = Search(start=500, budget=10_000, max_rate=10_000)
    probes = search_against(1e9, search)
    assert [probe.rate for probe in probes] == [500, 1000, 2000, 4000, 8000]
    assert search.stop_reason(probes) == TOO_FAST and ceiling(probes) == 8000


def test_a_noisy_server_still_ends_near_its_capacity():
    # A server whose capacity wobbles +-3 % from probe to probe: the bracket ends within the
    # resolution plus the wobble, and a pass above a failure never raises the ceiling.
    for seed in range(50):
        probes = search_against(2_600, Search(start=500, budget=10_000), noise=0.03, seed=seed)
        found = ceiling(probes)
        assert found is not None and 2_600 * 0.97 / 1.05 <= found <= 2_600 * 1.03
        failed = min(probe.rate for probe in probes if not probe.passed)
        assert found < failed


def test_the_ceiling_ignores_a_pass_above_the_lowest_failure():
    probes = [Outcome(1000, True), Outcome(2000, False), Outcome(1500, True), Outcome(3000, True)]
    assert bracket(probes) == (1500, 2000)
    assert ceiling(probes) == 1500
    assert ceiling([Outcome(500, False)]) is None


def test_invalid_settings_are_all_reported_at_once():
    with pytest.raises(InvalidConfig) as raised:
        Search(start=0, factor=1, resolution=0, hold=2, warmup=3, budget=1).checked()
    text = str(raised.value)
    for words in ("search start", "factor", "resolution", "warmup", "budget"):
        assert words in text


def test_a_stall_at_the_upper_bracket_is_run_once_more_and_the_second_result_counts():
    search = Search(start=1000, factor=2, resolution=0.05, budget=300, hold=10, warmup=2)
    probes = [Outcome(1000, True), Outcome(2000, False, stalled=True)]
    assert search.next_rate(probes) == 2000  # once more, within the budget
    held_again = [*probes, Outcome(2000, True)]
    assert bracket(held_again) == (2000, None)  # the second result is the one that counts
    assert search.next_rate(held_again) == 4000
    assert not rests_on_a_stall(held_again)
    stalled_again = [*probes, Outcome(2000, False, stalled=True)]
    assert search.next_rate(stalled_again) == 1410  # run once more only: the search goes on
    assert rests_on_a_stall(stalled_again)
    assert search.headline(stalled_again)["search"]["rests_on_a_stall"] is True


def test_a_stall_that_is_not_the_upper_bracket_or_a_saturation_is_not_run_again():
    search = Search(start=1000, factor=2, resolution=0.05, budget=300, hold=10, warmup=2)
    below = [
        Outcome(1000, True),
        Outcome(2000, False),
        Outcome(1410, True),
        Outcome(3000, False, stalled=True),
    ]
    assert search.next_rate(below) == 1680
    assert search.next_rate([Outcome(1000, True), Outcome(2000, False)]) == 1410
    assert "rests_on_a_stall" not in search.headline([Outcome(1000, True), Outcome(2000, False)])["search"]
    # No room left in the budget: the search stops rather than run it again.
    assert (
        Search(start=1000, budget=24, hold=10, warmup=2).stop_reason(
            [Outcome(1000, True), Outcome(2000, False, stalled=True)]
        )
        == BUDGET
    )


def test_a_first_probe_failed_cold_and_held_again_does_not_set_the_ceiling():
    # An app met cold: its first probe fails, the same rate holds once warm; the search climbs on.
    search = Search(start=8, budget=10_000, hold=10, warmup=2)
    probes = [Outcome(8, False)]
    assert search.next_rate(probes) == 8
    probes.append(Outcome(8, True))
    assert bracket(probes) == (8, None) and search.next_rate(probes) == 16
    assert probed_again(probes) == [
        {"rate_rps": 8, "levels": [1, 2], "because": "the first probe", "failed_again": False}
    ]
    assert ceiling_rests_on(probes) is None


def test_a_failure_that_repeats_sets_the_ceiling_and_is_probed_only_once_more():
    search = Search(start=500, budget=10_000)
    probes = [Outcome(500, True), Outcome(1000, False, stalled=True), Outcome(1000, False, stalled=True)]
    assert search.next_rate(probes) == 707  # not a third time
    probes += [Outcome(707, True), Outcome(841, True), Outcome(917, True), Outcome(958, True)]
    assert search.stop_reason(probes) == FOUND
    assert ceiling_rests_on(probes) == {
        "rate_rps": 1000,
        "levels": [2, 3],
        "failed_twice": True,
        "words": "1,000 req/s failed twice (levels 2 and 3; probed again after a stall): "
        "a failure that repeats",
    }


def test_a_failure_whose_resource_a_passing_probe_below_showed_well_under_its_bound_is_probed_again():
    search = Search(start=1000, budget=10_000)
    cpu = "service CPU"
    probes = [Outcome(1000, True), Outcome(2000, False, limit=cpu), Outcome(1410, True, shares=((cpu, 0.8),))]
    assert search.next_rate(probes) == 1680  # 80 % of its bound: no doubt, the search bisects
    doubted = [*probes[:2], Outcome(1410, True, shares=((cpu, 0.25),))]
    assert search.next_rate(doubted) == 2000
    rests = ceiling_rests_on([*doubted, Outcome(2000, False, limit=cpu)])
    assert rests is not None and rests["failed_twice"]
    assert "service CPU at 25 % of its bound at 1,410 req/s" in rests["words"]
    # A failure with no resource named, or a doubt raised by a probe that failed, is not probed again.
    assert search.next_rate([probes[0], Outcome(2000, False), doubted[2]]) == 1680


def test_a_doubted_failure_the_budget_has_no_room_for_says_so():
    search = Search(start=1000, budget=24, hold=10, warmup=2)
    probes = [Outcome(1000, False), Outcome(500, True)]
    assert search.stop_reason(probes, elapsed=24) == BUDGET
    rests = ceiling_rests_on(probes)
    assert rests is not None and not rests["failed_twice"]
    assert rests["words"] == (
        "1,000 req/s failed once (level 1), after the first probe, and the budget left no time "
        "to probe it again"
    )


def test_a_probe_at_a_low_rate_holds_until_it_has_its_minimum_of_answers():
    search = Search(hold=10, warmup=2, min_answers=200, budget=1000)
    assert search.probe_hold(500) == 10  # 4,000 due in its window already
    assert search.probe_hold(8) == 27  # (16 + 200) / 8: a 25 s window of 200 due
    assert search.probe_hold(2) == MAX_HOLD_FACTOR * 10  # (4 + 200) / 2 = 102 s, bounded at 60
    assert search.probe_hold(8, left=20) == 18  # what the budget has left, less the settle pause
    assert search.probe_hold(8, left=5) == 10  # never under the hold
    assert Search(min_answers=0).probe_hold(1) == Search().hold
    level = search.next_level([], 0)
    assert level is not None and level.hold == search.probe_hold(search.start)
    low = Search(start=7, hold=10, warmup=2, budget=1000).next_level([], 0)
    assert low is not None
    measured = [i for i in range(low.requests) if i / low.rate >= low.warmup]
    assert len(measured) >= 200 and low.hold == 30.58  # (14 + 200) / 7 = 30.571...: rounded up
    # The plan counts the longer probes against the budget.
    assert search.spent([Outcome(8, True), Outcome(500, True)]) == 27 + 2 + 10 + 2


def test_min_answers_is_checked_with_the_other_settings():
    for wrong in (-1, 2.5, True, 10_000_000):
        with pytest.raises(InvalidConfig, match="search min_answers must be a whole number"):
            Search(min_answers=wrong).checked()
