"""A level row as `level_row` writes it reads as a typed Level and comes back unchanged."""

from __future__ import annotations

from dbladder.histogram import Histogram
from dbladder.outcomes import OUTCOMES
from dbladder.result.level import Level
from dbladder.result.level_rows import level_row
from dbladder.result.passmark import PassMark


def snapshot(**extra: object) -> dict[str, object]:
    answers = Histogram()
    for value in range(1000, 101000, 1000):
        answers.record(value)
    outcomes = dict.fromkeys(OUTCOMES, 0) | {"2xx": 98, "5xx": 2}
    return {
        "index": 1,
        "rate": 100,
        "state": "finished",
        "start": 4.0,
        "hold": 4.0,
        "warmup": 1.0,
        "timeout": 5.0,
        "cpu_seconds": 0.5,
        "cpu_share": 0.25,
        "latency_from_due": answers.to_dict(),
        "latency_from_send": answers.to_dict(),
        "schedule_lag": answers.to_dict(),
        "outcomes": outcomes,
        "operations": {"product": {"latency_from_due": answers.to_dict(), "outcomes": outcomes}},
        **extra,
    }


def test_a_level_row_round_trips_and_reads_as_attributes():
    row = level_row(snapshot(), PassMark(50.0, 1.0))
    level = Level.from_json(row)
    assert level.to_json() == row
    assert level.number == 2 and level.offered_rps == 100 and level.failures == {"5xx": 2}
    assert level.operations is not None and level.operations["product"].failures == {"5xx": 2}
    assert not level.passed and level.reasons == tuple(row["reasons"])
    assert level.answered is not None and level.answered_p95_ms == level.answered.p95_ms
    assert level.users is None and level.queries is None


def test_a_users_level_and_one_with_counted_queries():
    counts = {"product": {"requests": 4, "statements": 8, "round_trips": 12}}
    row = level_row(snapshot(users=20, ramp=2.0, queries=counts), PassMark(50.0, 1.0))
    level = Level.from_json(row)
    assert level.to_json() == row
    assert level.users == 20 and level.ramp_s == 2.0
    assert level.queries is not None and level.queries["product"].statements_per_request == 2.0


def test_an_older_row_without_the_answered_block_reads_its_own_p95():
    row = level_row(snapshot(), PassMark(50.0, 1.0))
    del row["answered"]
    level = Level.from_json(row)
    assert level.answered_p95_ms == row["p95_ms"]
    assert level.to_json() == row
