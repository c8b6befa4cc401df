"""A spike's recovery: how long p95 took to come back after the closed model's spike.

It reads the per-second series a closed-model run records (`dbladder.load.recorder.UsersRecorder`,
merged or not): p95 per second, and the seconds after the spike until it stays within bounds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..histogram import Histogram

SETTLE_SECONDS = 3
"""Consecutive seconds p95 must stay within bounds for `recovery_seconds` to call it recovered."""


def p95_series(series: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per second: {"t", "p95_ms", "responses", "failures"}, for a plot or a table."""
    rows = []
    for entry in series:
        histogram = Histogram.from_dict(entry["latency_from_due"])
        rows.append(
            {
                "t": entry["t"],
                "p95_ms": histogram.percentile(95) / 1000,
                "responses": histogram.count,
                "failures": entry["failures"],
            }
        )
    return rows


def recovery_seconds(
    series: Sequence[dict[str, Any]],
    before_p95: float,
    start: float,
    tolerance: float = 0.2,
    settle: int = SETTLE_SECONDS,
) -> float | None:
    """Seconds after `start` (the spike's end, in run time) until p95 is back within `tolerance` of
    `before_p95`, to whole seconds; None if it never is.

    `series` is a per-second series (`UsersRecorder.snapshot()["per_second"]`, merged or not) and
    `before_p95` the pre-spike p95 in microseconds, like the histograms. Recovered means: the
    first whole second at or after `start` from which p95 stays at or below
    before_p95 * (1 + tolerance) for `settle` consecutive seconds; a second with no answer does not
    count as recovered. The answer is that second's start minus `start`: 0 if the first second
    after the spike was already back.
    """
    if not (_is_finite(before_p95) and before_p95 >= 0):
        raise ValueError(f"before_p95 must be 0 microseconds or more, not {before_p95!r}")
    if not (_is_finite(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance must be 0 or more, not {tolerance!r}")
    if not (_is_whole(settle) and settle >= 1):
        raise ValueError(f"settle must be a whole number of seconds, 1 or more, not {settle!r}")
    bound = before_p95 * (1 + tolerance)
    p95: dict[int, int | None] = {}
    for entry in series:
        histogram = Histogram.from_dict(entry["latency_from_due"])
        p95[entry["t"]] = histogram.percentile(95) if histogram.count else None
    if not p95:
        return None
    run = 0  # seconds in a row within the bound, up to t
    for t in range(math.ceil(start), max(p95) + 1):
        value = p95.get(t)
        run = run + 1 if value is not None and value <= bound else 0
        if run == settle:
            return float(t - settle + 1) - start
    return None


def spike_recovery(snapshot: dict[str, Any], tolerance: float = 0.2) -> float | None:
    """`recovery_seconds` for a spike run's snapshot (e.g. of `UserPlan.spike()`): the pre-spike p95
    is that of the hold before the phase with the most users, and the spike ends where the phase
    after it starts. None if it never recovered; ValueError if the plan has no such phases."""
    levels = snapshot["levels"]
    peak = max(range(len(levels)), key=lambda i: levels[i]["users"])
    if not 0 < peak < len(levels) - 1:
        raise ValueError("a spike needs a phase before and after the one with the most users")
    before = Histogram.from_dict(levels[peak - 1]["latency_from_due"])
    if not before.count:
        raise ValueError(f"phase {peak - 1} (before the spike) has no answered request to compare with")
    return recovery_seconds(
        snapshot["per_second"], before.percentile(95), levels[peak + 1]["start"], tolerance
    )


def _is_finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
