"""Expectations against results whose figures are set by hand: which are met, in which words."""

from __future__ import annotations

import pytest

from dbladder.errors import InvalidConfig, UsageError
from dbladder.result.expectations import AtRate, Expectations, parse_at_rate, unmet


def level(rate: float, p95: float, fail: float, passed: bool) -> dict:
    return {"offered_rps": rate, "p95_ms": p95, "fail_pct": fail, "passed": passed, "state": "finished"}


RESULT = {
    "ceiling_rps": 2000,
    "levels": [
        level(500, 3.0, 0.0, True),
        level(1000, 8.0, 0.0, True),
        level(2000, 30.0, 0.2, True),
        level(4000, 900.0, 12.0, False),
        level(2830, 70.0, 0.5, False),
    ],
}


def test_expectations_met_give_nothing():
    expectations = Expectations(2000, AtRate(10, 1000), AtRate(0.5))
    assert unmet(expectations, RESULT) == []
    assert unmet(Expectations(), RESULT) == []


def test_each_unmet_expectation_is_said_with_its_figure():
    found = unmet(Expectations(10_000_000, AtRate(5, 1000), AtRate(0.1)), RESULT)
    assert found == [
        "the ceiling was 2,000 req/s; expected at least 10,000,000 req/s",
        "p95 at 1,000 req/s was 8 ms (the 1,000 req/s level); expected at most 5 ms",
        "failed share at the ceiling was 0.2 % (the 2,000 req/s level); expected at most 0.1 %",
    ]


def test_a_rate_between_levels_is_read_at_the_next_level_up():
    # 2,500 req/s never ran: the 2,830 level (p95 70 ms) is the lowest at or above it.
    assert unmet(Expectations(p95_ms=AtRate(50, 2500)), RESULT) == [
        "p95 at 2,500 req/s was 70 ms (the 2,830 req/s level); expected at most 50 ms"
    ]
    assert "unknown" in unmet(Expectations(p95_ms=AtRate(50, 9000)), RESULT)[0]
    assert "no level held" in unmet(Expectations(ceiling_rps=10), {"ceiling_rps": None, "levels": []})[0]


def test_parsing_and_validation():
    assert parse_at_rate("25", "--expect-p95") == AtRate(25.0)
    assert parse_at_rate("25@1000", "--expect-p95") == AtRate(25.0, 1000.0)
    with pytest.raises(UsageError, match="--expect-p95 takes a number"):
        parse_at_rate("fast", "--expect-p95")
    with pytest.raises(InvalidConfig) as raised:
        Expectations(-1, AtRate(-2), AtRate(200, 0)).checked()
    assert len(raised.value.problems) == 4
