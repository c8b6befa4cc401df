"""Events as a run produces them, for feeding a dashboard's state by hand: live views and level rows
in the shape the fleet and the result give them."""

from __future__ import annotations

from typing import Any

from dbladder.histogram import Histogram
from dbladder.load.live_view import LiveView

OPERATIONS = ("read", "write")


def second(t: int, sent: int, latencies_us: list[int], failed: int = 0) -> dict[str, Any]:
    """One live second as the recorder sends it: its number and a histogram of its answers."""
    histogram = Histogram()
    histogram.record_many(latencies_us)
    return {"t": t, "sent": sent, "answered": len(latencies_us), "failed": failed,
            "latency_from_due": histogram.to_dict()}  # fmt: skip


def live_view(
    level: int, elapsed: float, seconds: tuple[dict[str, Any], ...] = (), **counts: int
) -> LiveView:
    """A live view of `level` at 100 req/s per level number, `counts` the operations' requests so far."""
    rate = 100.0 * (level + 1)
    return LiveView(
        level=level, rate=rate, elapsed=elapsed, warming_up=False, offered_rate=rate, achieved_rate=rate,
        p95_ms=4.0, failures=0, measured_from=10.0 * level + 1.0, p50_ms=2.0, p99_ms=8.0, seconds=seconds,
        operations={name: {"requests": counts.get(name, 0), "failures": 0, "p50_ms": 2.0, "p95_ms": 4.0,
                           "p99_ms": 8.0} for name in OPERATIONS},
        cpu={"time": 10.0 * level + 1.0 + elapsed, "generator": 5.0, "service": 40.0, "database": None},
    )  # fmt: skip


def level_row(index: int, reads: int, writes: int, write_failures: int = 0) -> dict[str, Any]:
    """A finished level's row with the keys the dashboard reads, its seconds and its operations."""
    rate = 100.0 * (index + 1)
    return {
        "index": index, "offered_rps": rate, "sent_rps": rate, "achieved_rps": rate - write_failures,
        "p50_ms": 2.0, "p95_ms": 4.0, "p99_ms": 8.0, "max_ms": 9.0, "fail_pct": 0.0, "failures": {},
        "passed": True, "reasons": [], "start_s": 10.0 * index, "warmup_s": 1.0, "hold_s": 10.0,
        "seconds": [{"t": t, "sent": int(rate), "answered": int(rate), "failed": 0, "p50_ms": 2.0,
                     "p95_ms": 4.0, "p99_ms": 8.0, "max_ms": 9.0} for t in range(9)],
        "operations": {"read": {"requests": reads, "failures": {}},
                       "write": {"requests": writes, "failures": {"5xx": write_failures}}},
        "machine": {"generator_cpu_pct": 5.0, "service_cpu_pct": 40.0, "database_cpu_pct": None},
    }  # fmt: skip
