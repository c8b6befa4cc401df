"""Several processes' snapshots made one: a level's, a run's, the closed model's per-second series.

Each generator process records its own part of every level (`recorder.py`); the parent (and a
cluster's coordinator) merges them here: histograms merge, counts and CPU seconds add up, and a
level is only as finished as its least finished part. The merged snapshot has the shape of one
process's, so the result reads one shape however many processes sent the load.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..histogram import Histogram
from ..outcomes import HISTOGRAMS, OUTCOMES
from . import queries

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
    for key in ("abandoned", "warmup_requests", "cpu_seconds", "answered_in_window", "ok_in_window"):
        level[key] = sum(part.get(key, 0) for part in parts)
    level["timeout"] = max(part.get("timeout", 0.0) for part in parts)
    for name in HISTOGRAMS:
        histogram = Histogram()
        for part in parts:
            if name in part:
                histogram.merge(Histogram.from_dict(part[name]))
        level[name] = histogram.to_dict()
    level["operations"] = {
        name: merge_operation(
            [part["operations"][name] for part in parts if name in part.get("operations", {})]
        )
        for name in parts[0].get("operations", {})
    }
    level["wall_seconds"] = max(part["wall_seconds"] for part in parts)
    level["cpu_share"] = max(part["cpu_share"] for part in parts)
    if any("queries" in part for part in parts):  # direct mode, a workload that counts its queries
        level["queries"] = queries.merge(part.get("queries") for part in parts)
    if any("seconds" in part for part in parts):
        level["seconds"] = merge_seconds([part["seconds"] for part in parts if "seconds" in part])
    return level


def merge_seconds(parts: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One level's seconds from several processes, second by second: counts add up, histograms
    merge, a second's length is the same in every process (1 in a snapshot that did not say)."""
    merged = []
    for seconds in zip(*parts, strict=True):
        histogram = Histogram()
        for second in seconds:
            histogram.merge(Histogram.from_dict(second["latency_from_due"]))
        merged.append(
            {"length_s": seconds[0].get("length_s", 1.0)}
            | {key: sum(second[key] for second in seconds) for key in ("sent", "answered", "failed")}
            | {"dropped": sum(second.get("dropped", 0) for second in seconds)}
            | {"lag_max_us": max(second.get("lag_max_us", 0) for second in seconds)}
            | {"latency_from_due": histogram.to_dict()}
        )
    return merged


def merge_operation(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One operation's figures of a level from several processes: latencies merged, outcomes summed."""
    histogram = Histogram()
    for part in parts:
        histogram.merge(Histogram.from_dict(part["latency_from_due"]))
    return {
        "latency_from_due": histogram.to_dict(),
        "outcomes": {cause: sum(part["outcomes"][cause] for part in parts) for cause in OUTCOMES},
    }


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
