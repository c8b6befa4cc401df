"""An agent's clock offset, by the fastest of a few round trips (dbladder.cluster.clocks)."""

from __future__ import annotations

import itertools

import pytest

from dbladder.cluster.clocks import measure


def test_the_fastest_round_trip_gives_the_offset_within_half_of_it():
    # A coordinator clock that ticks 1 ms per read; the agent's clock is 5 s ahead and read at
    # the middle of each round trip; the trips take 6, 2 and 4 ticks: the fastest, 2 ms, wins.
    ticks = iter([0.0, 0.006, 0.010, 0.012, 0.020, 0.024])
    agent = iter([5.003, 5.011, 5.022])
    found = measure(lambda: next(agent), pings=3, clock=lambda: next(ticks))
    assert found.round_trip == pytest.approx(0.002)
    assert found.bound == pytest.approx(0.001)
    assert found.offset == pytest.approx(5.0)


def test_an_agent_read_anywhere_in_the_round_trip_is_within_the_bound():
    # The agent read its clock at the very end of the trip: the offset found is off by exactly the bound.
    clock = itertools.count(0.0, 0.004).__next__
    found = measure(lambda: -2.0 + 0.004 * 1, pings=1, clock=clock)
    assert abs(found.offset - (-2.0)) <= found.bound + 1e-12


def test_no_ping_is_refused():
    with pytest.raises(ValueError):
        measure(lambda: 0.0, pings=0)
