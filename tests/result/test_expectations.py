"""Expectations against results whose figures are set by hand: which are met, in which words."""

from __future__ import annotations

import pytest

from dbladder.errors import InvalidConfig, UsageError
from dbladder.result.expectations import (
    AtRate,
    Checked,
    Expectations,
    check,
    parse_at_rate,
    parse_bounds,
    unmet,
)


def level(rate: float, p95: float, fail: float, passed: bool, p99: float | None = None, **operations) -> dict:
    return {
        "offered_rps": rate,
        "p95_ms": p95,
        "p99_ms": p95 * 2 if p99 is None else p99,
        "fail_pct": fail,
        "passed": passed,
        "state": "finished",
        "operations": operations,
    }


def operation(requests: int, p95: float, p99: float, fail: float) -> dict:
    return {"requests": requests, "p95_ms": p95, "p99_ms": p99, "fail_pct": fail}


RESULT = {
    "ceiling_rps": 2000,
    "levels": [
        level(500, 3.0, 0.0, True),
        level(
            1000,
            8.0,
            0.0,
            True,
            p99=20.0,
            browse=operation(800, 5.0, 9.0, 0.0),
            place_order=operation(200, 40.0, 75.0, 0.5),
            cancel=operation(0, 0.0, 0.0, 0.0),
        ),
        level(2000, 30.0, 0.2, True),
        level(4000, 900.0, 12.0, False),
        level(2830, 70.0, 0.5, False),
    ],
}


def test_expectations_met_give_nothing():
    expectations = Expectations(2000, (AtRate(10, 1000),), (AtRate(25, 1000),), (AtRate(0.5),))
    assert unmet(expectations, RESULT) == []
    assert unmet(Expectations(), RESULT) == []
    assert not Expectations().any


def test_each_unmet_expectation_is_said_with_its_figure():
    found = unmet(Expectations(10_000_000, (AtRate(5, 1000),), (AtRate(15, 1000),), (AtRate(0.1),)), RESULT)
    assert found == [
        "the ceiling was 2,000 req/s; expected at least 10,000,000 req/s",
        "p95 at 1,000 req/s was 8 ms (the 1,000 req/s level); expected at most 5 ms",
        "p99 at 1,000 req/s was 20 ms (the 1,000 req/s level); expected at most 15 ms",
        "failed share at the ceiling was 0.2 % (the 2,000 req/s level); expected at most 0.1 %",
    ]


def test_every_check_met_or_not_is_recorded_with_its_figure_and_level():
    checked = check(Expectations(1000, p99_ms=(AtRate(15, 1000), AtRate(100, 600))), RESULT)
    assert isinstance(checked, Checked) and not checked.met
    ceiling, p99_unmet, p99_met = checked.checks
    assert (ceiling.option, ceiling.found, ceiling.met) == ("--expect-ceiling", 2000, True)
    assert ceiling.line == "the ceiling was 2,000 req/s; at least 1,000 req/s"
    assert (p99_unmet.found, p99_unmet.level_rps, p99_unmet.met) == (20.0, 1000, False)
    # 600 req/s never ran: read at the 1,000 req/s level, the lowest above it.
    assert (p99_met.found, p99_met.level_rps, p99_met.met) == (20.0, 1000, True)
    assert p99_met.line == "p99 at 600 req/s was 20 ms (the 1,000 req/s level); at most 100 ms"
    assert checked.to_json()["checks"][2]["line"] == p99_met.line
    assert Checked.from_json(checked.to_json()) == checked


def test_a_bound_on_an_operation_reads_that_operations_own_figures():
    # Over every request p95 is 8 ms at 1,000 req/s, but the write's own is 40 ms.
    expectations = Expectations(
        p95_ms=(AtRate(10, 1000), AtRate(30, 1000, "place_order"), AtRate(10, 1000, "browse")),
        p99_ms=(AtRate(80, 1000, "place_order"),),
        fail_pct=(AtRate(0.1, 1000, "place_order"), AtRate(1, 1000, "cancel")),
    )
    assert unmet(expectations, RESULT) == [
        "p95 of place_order at 1,000 req/s was 40 ms (the 1,000 req/s level); expected at most 30 ms",
        "failed share of place_order at 1,000 req/s was 0.5 % (the 1,000 req/s level); "
        "expected at most 0.1 %",
        "the 1,000 req/s level had no cancel request, so its failed share of cancel is unknown; "
        "expected at most 1 %",
    ]


def test_a_rate_between_levels_is_read_at_the_next_level_up():
    # 2,500 req/s never ran: the 2,830 level (p95 70 ms) is the lowest at or above it.
    assert unmet(Expectations(p95_ms=(AtRate(50, 2500),)), RESULT) == [
        "p95 at 2,500 req/s was 70 ms (the 2,830 req/s level); expected at most 50 ms"
    ]
    assert "unknown" in unmet(Expectations(p95_ms=(AtRate(50, 9000),)), RESULT)[0]
    assert "no level held" in unmet(Expectations(ceiling_rps=10), {"ceiling_rps": None, "levels": []})[0]


def test_parsing():
    assert parse_at_rate("25", "--expect-p95") == AtRate(25.0)
    assert parse_at_rate("25ms", "--expect-p99") == AtRate(25.0)
    assert parse_at_rate("25@1000", "--expect-p95") == AtRate(25.0, 1000.0)
    assert parse_at_rate("place_order=80ms@500", "--expect-p95") == AtRate(80.0, 500.0, "place_order")
    assert parse_at_rate("checkout=0.5%", "--expect-fail-pct") == AtRate(0.5, None, "checkout")
    assert parse_bounds(["1", "a=2@3"], "--expect-p99") == (AtRate(1.0), AtRate(2.0, 3.0, "a"))
    for text, option in (("fast", "--expect-p95"), ("5%", "--expect-p95"), ("5ms", "--expect-fail-pct")):
        with pytest.raises(UsageError) as raised:
            parse_at_rate(text, option)
        assert str(raised.value) == (
            f"{option} takes a number, NUMBER@RATE or OPERATION=NUMBER@RATE "
            f"(e.g. 25@1000, place_order=80@500), not {text!r}"
        )


def test_validation_names_every_problem_with_its_option():
    with pytest.raises(InvalidConfig) as raised:
        Expectations(-1, (AtRate(-2),), (AtRate(5, 0), AtRate(5, 0)), (AtRate(200, 0),)).checked()
    assert raised.value.problems == [
        "--expect-ceiling must be above 0 req/s, not -1",
        "--expect-p95 must be 0 or more, not -2",
        "--expect-p99's rate must be above 0 req/s, not 0",
        "--expect-p99's rate must be above 0 req/s, not 0",
        "--expect-p99 is given twice at 0 req/s; give each one bound",
        "--expect-fail-pct must be from 0 to 100, not 200",
        "--expect-fail-pct's rate must be above 0 req/s, not 0",
    ]
    # The same figure at two rates, or for two operations, is two expectations, not one twice.
    Expectations(p95_ms=(AtRate(5, 100), AtRate(9, 200), AtRate(5, 100, "browse"))).checked()


def test_an_operation_the_workload_lacks_is_named_with_the_ones_it_has():
    expectations = Expectations(p99_ms=(AtRate(5, None, "checkout"), AtRate(5, None, "browse")))
    assert expectations.operation_problems("shop", ["browse", "place_order"]) == [
        "--expect-p99: the shop workload has no operation 'checkout'; its operations: browse, place_order"
    ]
