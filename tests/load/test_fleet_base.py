"""`dbladder.load.fleet.base`: what every fleet does alike with the plan's levels, on a fleet that
reaches no process (its processes' side is what `test_fleet.py` and the cluster's tests run)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from dbladder.load.fleet import LevelDone
from dbladder.load.fleet.base import FleetBase
from dbladder.load.live_view import LiveView
from dbladder.plans import PlannedLevel


class Recording(FleetBase):
    """A fleet whose processes are a list: the probes sent, the events to give, whether stopped."""

    def __init__(self, scheduled: list[PlannedLevel], events: tuple[LevelDone | LiveView, ...] = ()):
        self.origin = time.perf_counter()
        self._scheduled = scheduled
        self._started = len(scheduled)
        self._next_level = 0
        self.sent: list[tuple[PlannedLevel, float]] = []
        self.stopped = False
        self._events = list(events)

    def events(self) -> Iterator[LevelDone | LiveView]:
        yield from self._events

    def stop(self) -> None:
        self.stopped = True

    def _send_level(self, level: PlannedLevel, start_delay: float) -> None:
        self.sent.append((level, start_delay))


LADDER = [PlannedLevel(0, 10.0, 0.0, 1.0, 0.0), PlannedLevel(1, 20.0, 1.0, 1.0, 0.0)]


def test_a_scheduled_level_is_already_on_the_schedule_and_nothing_is_sent() -> None:
    fleet = Recording(LADDER)
    assert fleet.start_level(PlannedLevel(1, 99.0, 5.0, 9.0, 0.0)) == LADDER[1]
    assert fleet.sent == []


def test_a_probe_starts_its_delay_from_now_on_the_fleets_timeline_and_in_order() -> None:
    fleet = Recording([])
    fleet.origin = time.perf_counter() - 10.0  # the run started 10 s ago
    probe = fleet.start_level(PlannedLevel(0, 50.0, 0.0, 2.0, 0.5))
    assert probe.start == pytest.approx(10.0 + FleetBase.probe_delay, abs=0.1)
    assert (probe.rate, probe.hold, probe.warmup) == (50.0, 2.0, 0.5)
    assert fleet.sent == [(probe, FleetBase.probe_delay)]
    later = fleet.start_level(PlannedLevel(1, 80.0, 100.0, 2.0, 0.5), start_delay=0.0)
    assert later.start == 100.0  # its own start, later than now
    with pytest.raises(ValueError, match="number 2, not 5"):
        fleet.start_level(PlannedLevel(5, 80.0, 0.0, 2.0, 0.5))


def test_the_end_of_the_plan_stops_the_processes_only_when_scheduled_levels_are_left() -> None:
    stopped_early = Recording(LADDER)
    stopped_early._next_level = 1  # the ladder stopped after its first level failed
    stopped_early.end_schedule()
    assert stopped_early.stopped
    ran_through = Recording(LADDER)
    ran_through._next_level = 2
    ran_through.end_schedule()
    assert not ran_through.stopped


def test_a_levels_events_end_with_its_level_done() -> None:
    live = LiveView(0, 10.0, 0.5, False, 10.0, 10.0, 1.0, 0)
    first, second = LevelDone(0, {"index": 0}), LevelDone(1, {"index": 1})
    fleet = Recording(LADDER, (live, first, live, second))
    assert list(fleet.level_events(0)) == [live, first]
    assert list(Recording(LADDER, (live,)).level_events(0)) == [live]  # the processes stopped first
