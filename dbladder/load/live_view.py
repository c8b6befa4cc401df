"""The live view: the level in progress so far, for live progress and the dashboard.

A generator process makes its own (`live_view`, from its `Recorder`, about twice a second); the
fleet's parent merges the processes' latest into one (`merge_live`), as a cluster's coordinator
merges the load machines'. A view is sent as its fields, shallow (`LiveView.to_dict`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..outcomes import DROPPED, FAILURES
from .merge import merge_seconds
from .recorder import OperationRecord, Recorder


@dataclass(frozen=True)
class LiveView:
    """The current level so far, for live progress (one process's view)."""

    level: int
    rate: float
    """The level's arrival rate over all processes, requests/s."""
    elapsed: float
    """Seconds into the measured part of the level (into the warm-up while warming up)."""
    warming_up: bool
    offered_rate: float
    """Requests due per second so far (sent or dropped)."""
    achieved_rate: float
    """Successful answers so far, to requests due in the level, per second."""
    p95_ms: float
    """p95 latency from the due time of the successful answers so far, milliseconds."""
    failures: int
    measured_from: float = 0.0
    """Run time at which the level's measured window starts (its seconds are counted from there)."""
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    """p50 and p99 as p95 above."""
    seconds: tuple[dict[str, Any], ...] = ()
    """The last whole seconds of the measured window (up to LIVE_SECONDS), each a `LevelSecond.to_dict()`
    with its number as "t": the live dashboard's second-by-second points. Answers to a second's
    requests may still arrive after it is sent; the level's final seconds replace these."""
    operations: dict[str, dict[str, float]] = field(default_factory=dict)
    """Per operation, the level's measured window so far: "requests" (with an outcome), "failures",
    "p50_ms", "p95_ms", "p99_ms" (0 during the warm-up, which the level's figures leave out)."""
    cpu: dict[str, float | None] = field(default_factory=dict)
    """The machine's latest sample as the run adds it (the fleet does not sample): "time" (its end,
    run time) and each role's CPU, % of one core."""

    def to_dict(self) -> dict[str, Any]:
        """The view as a dict of its fields, shallow: `dataclasses.asdict` would deep-copy the
        seconds' histograms (6 ms for a busy level, twice a second, in the generator's process)."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


LIVE_SECONDS = 2
"""Whole seconds a live view carries: the fleet merges a view about once a second while the
processes report every half second, so two keep any second from being missed between merges."""


def live_view(recorder: Recorder, index: int, t: float) -> LiveView | None:
    """Level `index` of a recorder so far, at run time t; None outside the levels."""
    if not 0 <= index < len(recorder.levels):
        return None
    record = recorder.levels[index]
    level = record.level
    warming_up = t < level.measured_from
    if warming_up:
        record = recorder.warmups[index]
    elapsed = max(t - (level.start if warming_up else level.measured_from), 1e-9)
    tried = record.lag.count + record.outcomes[DROPPED]  # sent or dropped
    p50, p95, p99 = record.from_due.percentiles([50, 95, 99])
    measured = recorder.levels[index]
    # The second that ended a quarter second ago or earlier: most of its answers are in by then.
    last = -1 if warming_up else min(int(elapsed - 0.25), len(measured.seconds)) - 1
    seconds = tuple(
        {"t": number} | measured.seconds[number].to_dict()
        for number in range(max(last - LIVE_SECONDS + 1, 0), last + 1)
    )
    return LiveView(
        level=level.index,
        rate=level.rate,
        elapsed=elapsed,
        warming_up=warming_up,
        offered_rate=tried / elapsed,
        achieved_rate=record.from_due.count / elapsed,
        p95_ms=p95 / 1000,
        failures=record.failures,
        measured_from=level.measured_from,
        p50_ms=p50 / 1000,
        p99_ms=p99 / 1000,
        seconds=seconds,
        operations={
            name: _operation_so_far(operation)
            for name, operation in zip(recorder.operations, measured.operations, strict=True)
        },
    )


def _operation_so_far(operation: OperationRecord) -> dict[str, float]:
    """One operation's figures of a level so far, for a live view."""
    p50, p95, p99 = operation.from_due.percentiles([50, 95, 99])
    return {
        "requests": sum(operation.outcomes.values()),
        "failures": sum(operation.outcomes[cause] for cause in FAILURES),
        "p50_ms": p50 / 1000,
        "p95_ms": p95 / 1000,
        "p99_ms": p99 / 1000,
    }


def merge_live(live: list[dict[str, Any]]) -> LiveView:
    """One live view from the processes' (or the machines') latest, as LiveView's fields: those
    of the level furthest on."""
    views = [view for view in live if view["level"] == max(v["level"] for v in live)]
    # Percentiles are the largest of any one process: merged ones would need the level's
    # histograms; a live second carries its own, so its figures are merged exactly.
    return LiveView(
        level=views[0]["level"],
        rate=views[0]["rate"],
        elapsed=max(view["elapsed"] for view in views),
        warming_up=any(view["warming_up"] for view in views),
        offered_rate=sum(view["offered_rate"] for view in views),
        achieved_rate=sum(view["achieved_rate"] for view in views),
        p95_ms=max(view["p95_ms"] for view in views),
        failures=sum(view["failures"] for view in views),
        measured_from=views[0].get("measured_from", 0.0),
        p50_ms=max(view.get("p50_ms", 0.0) for view in views),
        p99_ms=max(view.get("p99_ms", 0.0) for view in views),
        seconds=_merged_seconds([view.get("seconds", ()) for view in views]),
        operations=_merged_operations([view.get("operations", {}) for view in views]),
    )


def _merged_seconds(parts: list[Any]) -> tuple[dict[str, Any], ...]:
    """The live seconds every process has sent, merged second by second (`merge_seconds`)."""
    common = set.intersection(*({second["t"] for second in part} for part in parts)) if parts else set()
    numbers = sorted(common)
    by_number = [{second["t"]: second for second in part} for part in parts]
    merged = merge_seconds([[seconds[number] for number in numbers] for seconds in by_number])
    return tuple({"t": number} | second for number, second in zip(numbers, merged, strict=True))


def _merged_operations(parts: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Per operation: counts summed, percentiles the largest of any one process."""
    merged: dict[str, dict[str, float]] = {}
    for part in parts:
        for name, figures in part.items():
            into = merged.setdefault(name, dict.fromkeys(figures, 0))
            for key, value in figures.items():
                into[key] = into[key] + value if key in ("requests", "failures") else max(into[key], value)
    return merged
