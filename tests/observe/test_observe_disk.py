"""The disk's fsync rate, probed on a real file in a real folder."""

from __future__ import annotations

import time

import pytest

from dbladder.errors import UsageError
from dbladder.observe.disk import PROBE_SECONDS_VARIABLE, fsync_rate, probe_seconds


@pytest.mark.serial
def test_the_probe_syncs_for_about_the_time_asked_and_leaves_nothing_behind(tmp_path):
    began = time.perf_counter()
    rate = fsync_rate(tmp_path, seconds=0.2)
    took = time.perf_counter() - began
    assert rate.syncs >= 1
    assert 0.2 <= rate.seconds <= took < 1.0
    assert rate.per_second == pytest.approx(rate.syncs / rate.seconds)
    assert rate.to_dict()["folder"] == str(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_disk_slower_than_the_time_asked_still_gives_one_sync(tmp_path):
    ticks = iter([0.0, 5.0])
    rate = fsync_rate(tmp_path, seconds=1.0, clock=lambda: next(ticks))
    assert (rate.syncs, rate.seconds, rate.per_second) == (1, 5.0, 0.2)


def test_the_time_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="above 0"):
        fsync_rate(tmp_path, seconds=0)


def test_a_runs_probe_lasts_a_second_unless_the_environment_says_otherwise(monkeypatch):
    monkeypatch.delenv(PROBE_SECONDS_VARIABLE, raising=False)
    assert probe_seconds() == 1.0
    monkeypatch.setenv(PROBE_SECONDS_VARIABLE, "0.2")
    assert probe_seconds() == 0.2
    for bad in ("0", "soon", "11"):
        monkeypatch.setenv(PROBE_SECONDS_VARIABLE, bad)
        with pytest.raises(
            UsageError, match=f"DBLADDER_FSYNC_PROBE_SECONDS must be seconds from 0.05 to 10, not '{bad}'"
        ):
            probe_seconds()
