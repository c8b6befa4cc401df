"""The poller that reads /stats and the storage counters at a level's window edges
(dbladder.run.observation.StatsPoller), on its own thread and the real clock."""

from __future__ import annotations

import itertools
import time

from dbladder.run.observation import StatsPoller


def test_an_edge_asked_for_with_other_rounding_is_the_reading_taken_at_it():
    # A level's edge is given as origin + (start + hold) and asked for as (origin + start) + hold:
    # the two can differ in the last bit. An exact match waited 2 s and returned nothing, so the
    # level lost its service breakdown and storage reads.
    origin = time.perf_counter() + 0.2
    starts, holds = [0.1 * k for k in range(1, 50)], [0.01 * k for k in range(1, 50)]
    start, hold = next(
        (start, hold)
        for start, hold in itertools.product(starts, holds)
        if (origin + start) + hold != origin + (start + hold)
    )
    readings = itertools.count(1)
    poller = StatsPoller(lambda: {"reading": next(readings)}, [origin + (start + hold)])
    poller.start()
    try:
        assert poller.at((origin + start) + hold, wait=10.0) == {"reading": 1}
    finally:
        poller.stop()


def test_a_moment_never_given_is_none_after_the_wait():
    poller = StatsPoller(lambda: {"reading": 1}, [time.perf_counter() + 0.05])
    poller.start()
    try:
        assert poller.at(time.perf_counter() + 100.0, wait=0.2) is None
    finally:
        poller.stop()
