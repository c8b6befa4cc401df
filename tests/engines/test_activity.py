"""The activity sampler's own logic: scheduling, windows and their baselines, failures kept as
warnings. A counting probe stands in for an engine here; each engine's probe is tested against its
real database in test_<engine>_activity.py."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import ClassVar

import pytest

from dbladder.engines.activity import ActivitySampler, differences, session_shares
from dbladder.engines.base import ActivityReading
from dbladder.errors import ServerUnreachable


class CountingProbe:
    """Counts its readings; its figure is how many readings a window's counter grew by."""

    engine: ClassVar[str] = "counting"
    default_interval: ClassVar[float] = 0.01

    def __init__(self, fail_every: int = 0, open_error: Exception | None = None):
        self.read_count = 0
        self.closed = False
        self.fail_every = fail_every
        self.open_error = open_error

    async def open(self) -> None:
        if self.open_error is not None:
            raise self.open_error

    async def read(self) -> ActivityReading:
        self.read_count += 1
        if self.fail_every and self.read_count % self.fail_every == 0:
            raise ConnectionResetError("the server went away")
        return ActivityReading(0.0, {"active": 2, "Lock": 1}, {"reads": float(self.read_count)})

    async def close(self) -> None:
        self.closed = True

    def figures(self, readings: Sequence[ActivityReading]) -> dict[str, float]:
        return {**session_shares(readings[1:]), **differences(readings[0], readings[-1], {"reads": "reads"})}


def test_a_window_counts_from_the_last_reading_before_it():
    probe = CountingProbe()
    sampler = ActivitySampler(probe)
    sampler.start()
    deadline = time.perf_counter() + 5
    while len(sampler.readings()) < 5:
        assert time.perf_counter() < deadline, "the sampler took too few readings"
        time.sleep(0.01)
    sampler.stop()
    assert probe.closed and sampler.warnings == []
    readings = sampler.readings()
    assert len(readings) >= 5
    assert [r.t for r in readings] == sorted(r.t for r in readings)
    start, end = readings[1].t + 1e-9, readings[4].t
    window = sampler.window(start, end)
    assert window.readings == 3  # readings 2, 3 and 4; reading 1 is the baseline
    assert window.figures == {"active_sessions": 2.0, "share.Lock": 0.5, "lock_wait_share": 0.5, "reads": 3.0}
    assert window.engine == "counting" and window.to_dict()["figures"]["reads"] == 3.0


def test_windows_cut_a_span_second_by_second_and_keep_the_remainder():
    sampler = ActivitySampler(CountingProbe(), interval=10)
    sampler.start()
    sampler.stop()
    windows = sampler.windows(100.0, 102.5)
    assert [(w.start, w.end) for w in windows] == [(100.0, 101.0), (101.0, 102.0), (102.0, 102.5)]
    assert [(w.start, w.end) for w in sampler.windows(0.0, 0.3, step=0.1)] == [
        (0.0, 0.1),
        (0.1, 0.2),
        (0.2, 0.3),
    ]
    with pytest.raises(ValueError, match="above 0"):
        sampler.windows(0.0, 1.0, step=0)


def test_a_window_with_fewer_than_two_readings_has_no_figures():
    sampler = ActivitySampler(CountingProbe(), interval=10)
    sampler.start()
    sampler.stop()
    only = sampler.readings()[0].t
    assert sampler.window(only - 1, only + 1).figures == {}


def test_failed_readings_are_left_out_and_said_once():
    probe = CountingProbe(fail_every=2)
    sampler = ActivitySampler(probe)
    sampler.start()
    deadline = time.perf_counter() + 5
    while probe.read_count < 4:
        assert time.perf_counter() < deadline, "the sampler took too few readings"
        time.sleep(0.01)
    sampler.stop()
    assert sampler.warnings == ["an activity reading failed: ConnectionResetError: the server went away"]
    assert all(int(r.totals["reads"]) % 2 == 1 for r in sampler.readings())


def test_a_probe_that_cannot_connect_fails_the_start_with_its_own_error():
    sampler = ActivitySampler(CountingProbe(open_error=ServerUnreachable("PostgreSQL at x is down")))
    with pytest.raises(ServerUnreachable, match="is down"):
        sampler.start()


def test_the_interval_must_be_positive():
    with pytest.raises(ValueError, match="above 0"):
        ActivitySampler(CountingProbe(), interval=0)


def test_a_counter_that_went_down_counts_from_zero():
    first = ActivityReading(0.0, {}, {"waits": 10.0})
    last = ActivityReading(1.0, {}, {"waits": 3.0})
    assert differences(first, last, {"waits": "waits", "absent": "absent"}) == {"waits": 3.0}
