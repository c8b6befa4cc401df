"""Where the service's time went inside its requests, between two `/stats` snapshots.

The service times every request in three parts (dbladder/service/app.py): waiting for a pooled
connection, holding one (the database calls), and the rest. `/stats` serves the three histograms
cumulative since the service started, merged over its workers; a level's figures are the
difference of the snapshots taken around it. `service_breakdown` returns:

    timed_requests            requests the service timed in between (its own /stats, /healthz left out)
    pool_wait_p50_ms pool_wait_p95_ms pool_wait_mean_ms
    database_p50_ms database_p95_ms database_mean_ms
    other_p50_ms other_p95_ms other_mean_ms
    service_mean_ms           the three means added: a request's mean time inside the service
    pool_wait_share database_share other_share
                              each part's share of the total time (they add up to 1)
    busy_waits                sleeps on SQLite's file lock in between (the busy handler's count,
                              /stats totals; absent when the snapshots have none)
    writer_writes writer_queue_mean_ms writer_busy_mean_ms writer_queue_share
                              with a single SQLite writer (its /stats totals): the writes it
                              started in between, the mean time each queued from its worker's
                              send until the writer began it, the mean time it then took, and
                              the queue's share of the two (absent without a writer, None
                              without a write)

The worker answering /stats copies its own histograms into the shared file first; the others
copy theirs every 0.2 s (the service's FLUSH_INTERVAL_SECONDS), so with several workers a snapshot
can miss their last 0.2 s, which then counts in the next window.

Percentiles are of each part on its own, so the p95s do not add up to a request's p95. Figures
are None when no request was timed. At saturation of a server database, the pool-wait share
grows while the database share stays put ("Postgres vs MariaDB on two dedicated CPUs": "everyone else waits
for a connection").
On SQLite it stays near 0: its calls run inline, so a worker's requests never hold a
connection across an await, and queue for the worker's event loop instead - before the
service starts timing them, so that wait shows in the client's latency only.
"""

from __future__ import annotations

from typing import Any

from ..histogram import Histogram

PARTS = ("pool_wait", "database", "other")
"""The request-time histograms of /stats "timing", in microseconds."""


class NoTiming(ValueError):
    """A /stats snapshot without request-time histograms, or two that do not belong together."""


def timing_histograms(stats: dict[str, Any]) -> dict[str, Histogram]:
    """The request-time histograms of one /stats answer; NoTiming if it has none."""
    timing = stats.get("timing")
    if not isinstance(timing, dict) or any(part not in timing for part in PARTS):
        raise NoTiming("this /stats answer has no request-time histograms (a service from before issue 6?)")
    try:
        return {part: Histogram.from_dict(timing[part]) for part in PARTS}
    except ValueError as exc:
        raise NoTiming(f"the /stats request-time histograms cannot be read: {exc}") from None


def service_breakdown(stats_before: dict[str, Any], stats_after: dict[str, Any]) -> dict[str, Any]:
    """The request-time breakdown between two /stats snapshots of one service; keys in the module doc.

    Raises NoTiming if a snapshot lacks the histograms or the later one is not a continuation of
    the earlier (another service, or a worker that died while writing them).
    """
    before, after = timing_histograms(stats_before), timing_histograms(stats_after)
    try:
        window = {part: after[part].subtract(before[part]) for part in PARTS}
    except ValueError:
        raise NoTiming(
            "the later /stats snapshot is not a continuation of the earlier one "
            "(another service, or a worker lost its counts)"
        ) from None
    return breakdown(window) | busy_waits(stats_before, stats_after) | writer_queue(stats_before, stats_after)


def busy_waits(stats_before: dict[str, Any], stats_after: dict[str, Any]) -> dict[str, Any]:
    """{"busy_waits": the sleeps on SQLite's file lock between two /stats snapshots}, or {} without them.
    Read at the level's edges with the rest of the breakdown, not by the activity probe at every
    reading: a /stats answer costs each worker about a millisecond."""
    before, after = stats_before.get("totals") or {}, stats_after.get("totals") or {}
    if "busy_waits" not in before or "busy_waits" not in after:
        return {}
    return {"busy_waits": max(after["busy_waits"] - before["busy_waits"], 0)}


WRITER_COUNTERS = ("writer_writes", "writer_queued_us", "writer_busy_us")


def writer_queue(stats_before: dict[str, Any], stats_after: dict[str, Any]) -> dict[str, Any]:
    """The single SQLite writer's queue between two /stats snapshots (keys in the module doc); empty
    for a service without a writer, or one whose /stats does not count its queue."""
    if not stats_after.get("writer"):  # the writer's state, None for a service without one
        return {}
    before, after = stats_before.get("totals") or {}, stats_after.get("totals") or {}
    if any(name not in before or name not in after for name in WRITER_COUNTERS):
        return {}
    writes, queued, busy = (after[name] - before[name] for name in WRITER_COUNTERS)
    if writes <= 0:
        return dict.fromkeys(("writer_queue_mean_ms", "writer_busy_mean_ms", "writer_queue_share")) | {
            "writer_writes": 0
        }
    return {
        "writer_writes": writes,
        "writer_queue_mean_ms": queued / writes / 1000,
        "writer_busy_mean_ms": busy / writes / 1000,
        "writer_queue_share": queued / (queued + busy) if queued + busy else None,
    }


def breakdown(histograms: dict[str, Histogram]) -> dict[str, Any]:
    """service_breakdown's figures from the three histograms of one window."""
    requests = histograms["database"].count
    result: dict[str, Any] = {"timed_requests": requests}
    totals = {part: histograms[part].total for part in PARTS}
    everything = sum(totals.values())
    for part in PARTS:
        histogram = histograms[part]
        if histogram.count:
            p50, p95 = histogram.percentiles([50, 95])
            result[f"{part}_p50_ms"] = p50 / 1000
            result[f"{part}_p95_ms"] = p95 / 1000
            result[f"{part}_mean_ms"] = histogram.mean / 1000
        else:
            result.update(dict.fromkeys((f"{part}_p50_ms", f"{part}_p95_ms", f"{part}_mean_ms")))
    result["service_mean_ms"] = everything / requests / 1000 if requests else None
    for part in PARTS:
        result[f"{part}_share"] = totals[part] / everything if everything else None
    return result
