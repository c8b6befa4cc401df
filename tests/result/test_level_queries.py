"""A level's queries per request: differences of cumulative counts, and their ratios."""

from __future__ import annotations

from dbladder.load.queries import merge
from dbladder.result.queries import difference, query_rows


def test_a_level_is_the_difference_of_two_snapshots_with_its_ratios():
    before = {"list": {"requests": 10, "statements": 860, "round_trips": 880}}
    after = {
        "list": {"requests": 30, "statements": 2580, "round_trips": 2640},
        "detail": {"requests": 4, "statements": 11, "round_trips": 19},
    }
    counted = difference(before, after)
    assert counted == {
        "list": {"requests": 20, "statements": 1720, "round_trips": 1760},
        "detail": {"requests": 4, "statements": 11, "round_trips": 19},
    }
    assert query_rows(counted) == {
        "list": {
            "requests": 20,
            "statements": 1720,
            "round_trips": 1760,
            "statements_per_request": 86.0,
            "round_trips_per_request": 88.0,
        },
        "detail": {
            "requests": 4,
            "statements": 11,
            "round_trips": 19,
            "statements_per_request": 2.75,
            "round_trips_per_request": 4.75,
        },
    }


def test_missing_snapshots_counters_that_went_down_and_no_requests():
    assert difference(None, {"a": {"requests": 1}}) is None
    assert query_rows(None) is None
    # A process replaced between the two snapshots lost its counts: no figure rather than a wrong one.
    assert difference({"a": {"requests": 9}}, {"a": {"requests": 4}}) == {}
    rows = query_rows({"a": {"requests": 0, "statements": 0, "round_trips": 0}})
    assert rows is not None
    assert rows["a"]["statements_per_request"] is None


def test_processes_counts_merge_by_summing():
    assert merge([None, None]) is None
    assert merge(
        [
            {"a": {"requests": 2, "statements": 10}},
            None,
            {"a": {"requests": 1, "statements": 5}, "b": {"requests": 1, "statements": 3}},
        ]
    ) == {"a": {"requests": 3, "statements": 15}, "b": {"requests": 1, "statements": 3}}
