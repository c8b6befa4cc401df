"""The recorder: what one executor process saw, per level, as mergeable plain data.

Each request is filed under the level in which it was due: its latency from the due time and from
the send, its schedule lag (send - due), and its outcome (`OUTCOMES`). Requests due in a level's
warm-up (a closed-model phase's ramp) are kept apart and left out of that level's figures. The
executor also notes the CPU time it used per level, so a reporter can flag a level where the
executor rather than the service fell behind (`fell_behind`).

A `Recorder` snapshot is plain data (dicts, lists, histogram to_dict()), so several processes'
snapshots merge in the parent (`merge_levels`, `merge_snapshots`; `fleet.py` runs the processes).
`UsersRecorder` (the closed model) adds the plan's users per level and, per second of the run (by
due time), a histogram of latency from the due time and the failures, from which
`dbladder.result.spike` tells how long p95 took to come back after a spike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..histogram import Histogram
from .plans import Level, UserPlan
from .targets import CONNECT, PROTOCOL, TIMEOUT

DROPPED = "dropped"


OUTCOMES = ("2xx", "3xx", "4xx", "5xx", TIMEOUT, CONNECT, PROTOCOL, DROPPED)
"""Every outcome a request can have, in report order."""


FAILURES = ("4xx", "5xx", TIMEOUT, CONNECT, PROTOCOL, DROPPED)
"""Outcomes that count as failed requests (as k6's http_req_failed: any status outside 200-399)."""


STATUS_CLASS = {2: "2xx", 3: "3xx", 4: "4xx", 5: "5xx"}
"""The outcome of an HTTP status, by its hundreds (any other status is a protocol error)."""


HISTOGRAMS = ("latency_from_due", "latency_from_send", "schedule_lag")
"""The histograms of a level snapshot, each a Histogram.to_dict() of microseconds."""


class LevelRecord:
    """What one process saw of one level (or of its warm-up): histograms, outcomes, CPU use.

    Latency histograms hold responses only (any status); failures without a response are counted
    in `outcomes` alone. `schedule_lag` has one value per request sent, so its count is the
    number sent.
    """

    __slots__ = (
        "cpu_seconds",
        "from_due",
        "from_send",
        "in_flight",
        "lag",
        "level",
        "outcomes",
        "scheduled",
        "started",
        "wall_seconds",
    )

    def __init__(self, level: Level):
        self.level = level
        self.from_due = Histogram()
        self.from_send = Histogram()
        self.lag = Histogram()
        self.outcomes = dict.fromkeys(OUTCOMES, 0)
        self.in_flight = 0
        self.started = False  # the driver reached this level
        self.scheduled = False  # every request due in this level has been sent or dropped
        self.cpu_seconds = 0.0
        self.wall_seconds = 0.0

    @property
    def responses(self) -> int:
        """Requests answered with an HTTP status."""
        return self.from_due.count

    @property
    def failures(self) -> int:
        """Requests that failed, by any cause in FAILURES."""
        return sum(self.outcomes[cause] for cause in FAILURES)


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
    """Responses per second so far."""
    p95_ms: float
    """p95 latency from the due time so far, milliseconds."""
    failures: int


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
    return LiveView(
        level=level.index,
        rate=level.rate,
        elapsed=elapsed,
        warming_up=warming_up,
        offered_rate=tried / elapsed,
        achieved_rate=record.responses / elapsed,
        p95_ms=record.from_due.percentile(95) / 1000,
        failures=record.failures,
    )


class Recorder:
    """Per-level records of one generator process, and their snapshot as plain data."""

    def __init__(self, levels: Sequence[Level], part: int = 0, parts: int = 1):
        self.levels = [LevelRecord(level) for level in levels]
        self.warmups = [LevelRecord(level) for level in levels]
        self.part = part
        self.parts = parts
        self.interrupted = False
        self.late_start = 0.0
        """Seconds after the run start at which this process began its schedule (0 if it was ready)."""

    def level_snapshot(self, index: int) -> dict[str, Any]:
        """One level's figures so far as dicts, lists and numbers (JSON-ready; `merge_levels` combines them).

        A level's "state" is "pending" (not reached), "running", "finished" (every request due in
        it has its outcome) or "interrupted" (the run stopped first; "abandoned" counts the
        requests still in flight then, which have no outcome).
        """
        record, warmup = self.levels[index], self.warmups[index]
        level = record.level
        if not record.started:
            state = "pending"
        elif record.scheduled and record.in_flight == 0:
            state = "finished"
        else:
            state = "interrupted" if self.interrupted else "running"
        return {
            "index": level.index,
            "rate": level.rate,
            "start": level.start,
            "hold": level.hold,
            "warmup": level.warmup,
            "state": state,
            "outcomes": dict(record.outcomes),
            "abandoned": record.in_flight,
            "warmup_requests": warmup.lag.count + warmup.outcomes[DROPPED],
            "latency_from_due": record.from_due.to_dict(),
            "latency_from_send": record.from_send.to_dict(),
            "schedule_lag": record.lag.to_dict(),
            "cpu_seconds": record.cpu_seconds,
            "wall_seconds": record.wall_seconds,
            "cpu_share": record.cpu_seconds / record.wall_seconds if record.wall_seconds else 0.0,
        }

    def snapshot(self) -> dict[str, Any]:
        """Every level's figures so far (`level_snapshot`), and the process's own state."""
        return {
            "parts": self.parts,
            "processes": 1,
            "interrupted": self.interrupted,
            "late_start": self.late_start,
            "levels": [self.level_snapshot(index) for index in range(len(self.levels))],
        }


def fell_behind(
    level: dict[str, Any], max_lag_p99_us: int = 2000, max_cpu_share: float | None = None
) -> list[str]:
    """Why the generator itself may have limited this level snapshot, in words; empty if it kept up.

    A schedule lag p99 above `max_lag_p99_us` means requests left late, so the service saw less
    than the offered rate. A CPU share at or above `max_cpu_share` (e.g. 0.95) means a generator
    process had no time to spare. That check is off by default: MonotonicClock busy-waits the
    last 2 ms before each due time, so with it the share reads near 1 at any rate above 500/s and
    only the lag tells; pass a bound when the clock sleeps instead.
    """
    reasons = []
    lag_p99 = Histogram.from_dict(level["schedule_lag"]).percentile(99)
    if lag_p99 > max_lag_p99_us:
        reasons.append(f"schedule lag p99 {lag_p99 / 1000:.1f} ms is above {max_lag_p99_us / 1000:g} ms")
    if max_cpu_share is not None and level["cpu_share"] >= max_cpu_share:
        reasons.append(f"a generator process used {level['cpu_share']:.0%} of a CPU")
    return reasons


_STATE_ORDER = ("finished", "running", "pending", "interrupted")


_PLAN_KEYS = ("users", "ramp")
"""Keys of a closed-model (`UsersRecorder`) level snapshot that describe the plan, the same in every part."""


def merge_levels(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Combine one level's snapshots from several processes into one of the same shape.

    Histograms merge, counts and CPU seconds add up; the level is only as finished as its least
    finished part; "cpu_share" becomes the largest of any one process, since each process is one
    CPU's worth of generator. A closed-model phase's "users" and "ramp" (`UsersRecorder`) are kept.
    """
    if not parts:
        raise ValueError("merge_levels needs at least one level snapshot")
    level = {key: parts[0][key] for key in ("index", "rate", "start", "hold", "warmup")}
    level |= {key: parts[0][key] for key in _PLAN_KEYS if key in parts[0]}
    level["state"] = max((part["state"] for part in parts), key=_STATE_ORDER.index)
    level["outcomes"] = {cause: sum(part["outcomes"][cause] for part in parts) for cause in OUTCOMES}
    for key in ("abandoned", "warmup_requests", "cpu_seconds"):
        level[key] = sum(part[key] for part in parts)
    for name in HISTOGRAMS:
        histogram = Histogram()
        for part in parts:
            histogram.merge(Histogram.from_dict(part[name]))
        level[name] = histogram.to_dict()
    level["wall_seconds"] = max(part["wall_seconds"] for part in parts)
    level["cpu_share"] = max(part["cpu_share"] for part in parts)
    return level


def merge_snapshots(snapshots: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Combine the snapshots of several processes (parts of one ladder) into one of the same shape;
    "late_start" becomes the largest of any one process."""
    snapshots = list(snapshots)
    if not snapshots:
        raise ValueError("merge_snapshots needs at least one snapshot")
    if len({snapshot["parts"] for snapshot in snapshots}) > 1:
        raise ValueError("merge_snapshots needs snapshots of parts of one ladder (the same `parts`)")
    return {
        "parts": snapshots[0]["parts"],
        "processes": sum(snapshot["processes"] for snapshot in snapshots),
        "interrupted": any(snapshot["interrupted"] for snapshot in snapshots),
        "late_start": max(snapshot["late_start"] for snapshot in snapshots),
        "levels": [
            merge_levels(parts) for parts in zip(*(snapshot["levels"] for snapshot in snapshots), strict=True)
        ],
    }


class SecondRecord:
    """One second of the run: latency from the due time of its answered requests, and its failures."""

    __slots__ = ("failures", "latency")

    def __init__(self) -> None:
        self.latency = Histogram()
        self.failures = 0


class UsersRecorder(Recorder):
    """A `Recorder` whose levels are a plan's phases, plus the per-second series.

    Its level snapshots add "users" (the phase's users over all processes) and "ramp" (seconds);
    its snapshot adds "model" ("closed"), "think_min", "think_max" and "per_second":
    [{"t": second of the run, "latency_from_due": Histogram.to_dict(), "failures": n}, ...] for
    every second in which a request was due, failures counting every outcome in
    FAILURES (dropped included).
    """

    def __init__(self, plan: UserPlan, part: int = 0, parts: int = 1):
        super().__init__(plan.phase_levels(), part, parts)
        self.plan = plan
        self.seconds: dict[int, SecondRecord] = {}

    def level_snapshot(self, index: int) -> dict[str, Any]:
        """The open model's level snapshot, with the phase's "users" and "ramp"."""
        phase = self.plan.phases[index]
        return super().level_snapshot(index) | {"users": phase.users, "ramp": phase.ramp}

    def snapshot(self) -> dict[str, Any]:
        """The open model's snapshot, with the plan's think times and the per-second series."""
        return super().snapshot() | {
            "model": "closed",
            "think_min": self.plan.think_min,
            "think_max": self.plan.think_max,
            "per_second": [
                {"t": t, "latency_from_due": second.latency.to_dict(), "failures": second.failures}
                for t, second in sorted(self.seconds.items())
            ],
        }


def merge_per_second(series: Iterable[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Combine several processes' per-second series into one: histograms merge, failures add up."""
    merged: dict[int, tuple[Histogram, list[int]]] = {}
    for one in series:
        for entry in one:
            histogram, failures = merged.setdefault(entry["t"], (Histogram(), [0]))
            histogram.merge(Histogram.from_dict(entry["latency_from_due"]))
            failures[0] += entry["failures"]
    return [
        {"t": t, "latency_from_due": histogram.to_dict(), "failures": failures[0]}
        for t, (histogram, failures) in sorted(merged.items())
    ]


def merge_users_snapshots(snapshots: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """`merge_snapshots` for closed-model snapshots: also the think times and the merged
    per-second series."""
    snapshots = list(snapshots)
    merged = merge_snapshots(snapshots)
    for key in ("model", "think_min", "think_max"):
        merged[key] = snapshots[0][key]
    merged["per_second"] = merge_per_second(snapshot["per_second"] for snapshot in snapshots)
    return merged
