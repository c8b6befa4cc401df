"""A level's row in the result: the recorder's merged level snapshot, judged against the pass mark.

The result of a run is plain, versioned data: what reporters read and `result.json` holds.
Figures flow one way: the recorder's merged level snapshots (`dbladder.load.recorder`) become
level rows here, judged against the pass mark (`passmark.py`); the run's configuration, engine
settings and environment are attached; reporters (terminal, JSON, Markdown, HTML) only ever read
this shape.
The schema is documented in docs/result-schema.md; bump result.schema.RESULT_SCHEMA when a field
changes meaning or disappears (adding a field does not need a bump).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..histogram import SUB_BUCKET_BITS, Histogram, bucket_index
from ..outcomes import DROPPED, FAILURES, HISTOGRAMS, OUTCOMES
from .interval import p95_interval
from .passmark import PassMark, ceiling
from .queries import query_rows
from .seconds import second_rows


def _ms(microseconds: float) -> float:
    return round(microseconds / 1000, 3)


def at_timeout(count: int, timeout_us: int) -> Histogram:
    """A histogram of `count` values, each the timeout: how failures rank among the answers."""
    histogram = Histogram()
    if count <= 0:
        return histogram
    return Histogram.from_dict(
        {
            "sub_bucket_bits": SUB_BUCKET_BITS,
            "count": count,
            "min": timeout_us,
            "max": timeout_us,
            "total": count * timeout_us,
            "indexes": [bucket_index(timeout_us)],
            "counts": [count],
        }
    )


def every_request(answered: Histogram, failures: int, timeout_us: int) -> Histogram:
    """Latency over every request: the successful answers as they came, each failure at the timeout.

    A failure ranks at the timeout whenever it happened: a fast 503 counted at its own 1 ms would
    make the percentiles better the more a server fails. So a level whose failures exceed 1 % can
    never show a p99 below the timeout.
    """
    merged = answered.copy()
    merged.merge(at_timeout(failures, timeout_us))
    return merged


def _timeout_us(snapshot: dict[str, Any], answered: Histogram, failed: Histogram) -> int:
    timeout = snapshot.get("timeout") or 0
    if timeout > 0:
        return int(timeout * 1_000_000)
    return max(answered.max, failed.max)  # an older snapshot without its timeout: the slowest seen


def _percentiles(histogram: Histogram) -> dict[str, float]:
    p50, p95, p99 = histogram.percentiles((50, 95, 99)) if histogram.count else (0, 0, 0)
    return {
        "p50_ms": _ms(p50),
        "p95_ms": _ms(p95),
        "p99_ms": _ms(p99),
        "max_ms": _ms(histogram.max) if histogram.count else 0.0,
    }


def level_row(snapshot: dict[str, Any], pass_mark: PassMark) -> dict[str, Any]:
    """One level's row from its merged generator snapshot: rates, percentiles, failures, verdict.

    requests      every request due in the measured part of the level (after warm-up): answered,
                  failed without an answer, dropped, or abandoned when a run was interrupted
    sent_rps      requests due in the measured part that were sent (not dropped), per measured second
    achieved_rps  successful answers (2xx, 3xx) *received* within the measured window, whichever
                  level they were due in, per measured second: what the server gave in that window
    served        answers of any status received within the measured window: the requests the
                  service answered, which the per-request costs divide by
    fail_pct      failed requests (FAILURES: 4xx, 5xx, timeout, connect, protocol, dropped) over
                  requests; dropped requests count, so an overloaded generator cannot hide failures
    p50..max      latency over every request from when it was due (waiting for a connection
                  counts), each failed request counted at the timeout (`every_request`)
    p95_interval  where the true p95 lies with 95 % confidence, from the same latencies' order
                  statistics (`interval.p95_interval`); None without a request
    answered      the same percentiles over the successful answers only
    failed_after  how long the failures actually took from their due time (p50, max)
    sent          latency of every answer with a status from when it was actually sent
    """
    answered = Histogram.from_dict(snapshot["latency_from_due"])
    from_send = Histogram.from_dict(snapshot["latency_from_send"])
    lag = Histogram.from_dict(snapshot["schedule_lag"])
    failed_after = (
        Histogram.from_dict(snapshot["failed_after"]) if "failed_after" in snapshot else Histogram()
    )
    outcomes = snapshot["outcomes"]
    abandoned = snapshot.get("abandoned", 0)
    requests = sum(outcomes[cause] for cause in OUTCOMES) + abandoned
    failed = sum(outcomes[cause] for cause in FAILURES) + abandoned
    measured_seconds = snapshot["hold"] - snapshot["warmup"]
    fail_pct = 100 * failed / requests if requests else 0.0
    timeout_us = _timeout_us(snapshot, answered, failed_after)
    everything = every_request(answered, failed, timeout_us)
    headline = _percentiles(everything)
    sent = _percentiles(from_send)

    def per_second(count: int) -> float:
        return round(count / measured_seconds, 1) if measured_seconds > 0 else 0.0

    row: dict[str, Any] = {
        "index": snapshot["index"],
        "offered_rps": snapshot["rate"],
        "sent_rps": per_second(lag.count),
        "achieved_rps": per_second(snapshot.get("ok_in_window", 0)),
        "requests": requests,
        "responses": from_send.count,
        "served": snapshot.get("answered_in_window", 0),
        **headline,
        "mean_ms": _ms(everything.mean) if everything.count else 0.0,
        "p95_interval": p95_interval(everything, pass_mark.p95_ms),
        "answered": _percentiles(answered),
        "failed_after": {
            "p50_ms": _ms(failed_after.percentile(50)) if failed_after.count else 0.0,
            "max_ms": _ms(failed_after.max) if failed_after.count else 0.0,
        },
        "sent": sent,
        "lag_p99_ms": _ms(lag.percentile(99)) if lag.count else 0.0,
        "fail_pct": round(fail_pct, 3),
        "failures": {cause: outcomes[cause] for cause in FAILURES if outcomes[cause]}
        | ({"abandoned": abandoned} if abandoned else {}),
        "dropped": outcomes[DROPPED],
        "state": snapshot["state"],
        "start_s": snapshot["start"],
        "hold_s": snapshot["hold"],
        "warmup_s": snapshot["warmup"],
        "timeout_s": snapshot.get("timeout") or None,
        "generator": {
            "cpu_seconds": round(snapshot["cpu_seconds"], 3),
            "cpu_share": round(snapshot["cpu_share"], 3),
        },
        "flags": [],
        "histograms": {name: snapshot[name] for name in HISTOGRAMS if name in snapshot},
    }
    if "operations" in snapshot:
        row["operations"] = operation_rows(snapshot["operations"], timeout_us)
    if snapshot.get("queries") is not None:  # direct mode, a workload that counts its queries
        row["queries"] = query_rows(snapshot["queries"])
    if "seconds" in snapshot:  # the open model: the measured window second by second
        row["seconds"] = second_rows(snapshot["seconds"])
    if "users" in snapshot:  # closed model: the phase's users and their arrival ramp
        row["users"] = snapshot["users"]
        row["ramp_s"] = snapshot["ramp"]
    reasons = pass_mark.judge(requests, row["p95_ms"], fail_pct)
    if snapshot["state"] != "finished":
        reasons = [f"the level did not finish ({snapshot['state']})", *reasons]
    row["passed"] = not reasons
    row["reasons"] = reasons
    return row


def operation_rows(operations: dict[str, Any], timeout_us: int = 0) -> dict[str, Any]:
    """Each operation's share of a level: its requests, latency from the due time, and failures.

    Latency percentiles are over every request of the operation, each failure at the timeout (as
    the level's), `answered_p95_ms` over its successful answers only; `fail_pct` over its
    requests, dropped ones included. An operation the mix never drew in the level has 0 requests
    and no percentiles.
    """
    rows = {}
    for name, figures in operations.items():
        outcomes = figures["outcomes"]
        requests = sum(outcomes[cause] for cause in OUTCOMES)
        failed = sum(outcomes[cause] for cause in FAILURES)
        answered = Histogram.from_dict(figures["latency_from_due"])
        everything = every_request(answered, failed, timeout_us or answered.max)
        rows[name] = {
            "requests": requests,
            **_percentiles(everything),
            "answered_p95_ms": _ms(answered.percentile(95)) if answered.count else 0.0,
            "fail_pct": round(100 * failed / requests, 3) if requests else 0.0,
            "failures": {cause: outcomes[cause] for cause in FAILURES if outcomes[cause]},
        }
    return rows


def ceiling_of(levels: Sequence[dict[str, Any]]) -> float | None:
    """The offered rate of the highest level held (see `passmark.ceiling`)."""
    return ceiling([level["offered_rps"] for level in levels], [level["passed"] for level in levels])
