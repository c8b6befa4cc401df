"""A spike's recovery time, from a constructed per-second series with known answers."""

from __future__ import annotations

from typing import Any

import pytest

from dbladder.histogram import Histogram
from dbladder.result.spike import recovery_seconds


def second(t: int, p95_us: int, failures: int = 0) -> dict[str, Any]:
    """A per-second entry whose p95 is `p95_us`: 20 answers of that latency."""
    histogram = Histogram()
    histogram.record_many([p95_us] * 20)
    return {"t": t, "latency_from_due": histogram.to_dict(), "failures": failures}


def test_recovery_seconds_on_a_constructed_series() -> None:
    # 1 ms before the spike, 50 ms during it (seconds 3-5), then back down with a relapse at 8.
    p95s = [1000, 1000, 1000, 50_000, 50_000, 50_000, 20_000, 1100, 5000, 1150, 1000, 900, 1000]
    series = [second(t, p95) for t, p95 in enumerate(p95s)]
    assert recovery_seconds(series, 1000, start=6.0) == 3.0  # 9, 10, 11 are within 1.2 ms
    assert recovery_seconds(series, 1000, start=6.0, settle=1) == 1.0  # 7 alone
    assert recovery_seconds(series, 1000, start=5.5) == 3.5  # counted from the spike's end
    assert recovery_seconds(series, 1000, start=6.0, tolerance=0.05) == 4.0  # 1150 is too high
    assert recovery_seconds(series, 800, start=6.0) is None  # never back within 960 us
    assert recovery_seconds([], 1000, start=0.0) is None
    # A second without answers is not a recovered one.
    gappy = [entry for entry in series if entry["t"] != 10]
    assert recovery_seconds(gappy, 1000, start=6.0) is None
    with pytest.raises(ValueError, match="tolerance"):
        recovery_seconds(series, 1000, 6.0, tolerance=-0.1)
    with pytest.raises(ValueError, match="settle"):
        recovery_seconds(series, 1000, 6.0, settle=0)
