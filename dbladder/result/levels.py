"""A level's row in the result: the recorder's merged level snapshot, judged against the pass mark.

The result of a run is plain, versioned data: what reporters read and `result.json` holds.
Figures flow one way: the recorder's merged level snapshots (`dbladder.load.recorder`) become
level rows here, judged against the pass mark (`passmark.py`); the run's configuration, engine
settings and environment are attached; reporters (terminal, JSON, Markdown, HTML) only ever read
this shape.
The schema is documented in docs/result-schema.md; bump SCHEMA when a field changes meaning or
disappears (adding a field does not need a bump).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..histogram import Histogram
from ..load.recorder import DROPPED, FAILURES, OUTCOMES
from .passmark import PassMark, ceiling

SCHEMA = "dbladder.result/1"


def _ms(microseconds: float) -> float:
    return round(microseconds / 1000, 3)


def level_row(snapshot: dict[str, Any], pass_mark: PassMark) -> dict[str, Any]:
    """One level's row from its merged generator snapshot: rates, percentiles, failures, verdict.

    requests   every request due in the measured part of the level (after warm-up): answered,
               failed without an answer, dropped, or abandoned when a run was interrupted
    achieved   answers with a 2xx or 3xx status per measured second
    fail_pct   failed requests (FAILURES: 4xx, 5xx, timeout, connect, protocol, dropped) over
               requests; dropped requests count, so an overloaded generator cannot hide failures
    p50..max   latency from when each request was due (waiting for a connection counts);
               `sent` holds the same from when it was actually sent
    """
    from_due = Histogram.from_dict(snapshot["latency_from_due"])
    from_send = Histogram.from_dict(snapshot["latency_from_send"])
    lag = Histogram.from_dict(snapshot["schedule_lag"])
    outcomes = snapshot["outcomes"]
    abandoned = snapshot.get("abandoned", 0)
    requests = sum(outcomes[cause] for cause in OUTCOMES) + abandoned
    failed = sum(outcomes[cause] for cause in FAILURES) + abandoned
    measured_seconds = snapshot["hold"] - snapshot["warmup"]
    ok = outcomes["2xx"] + outcomes["3xx"]
    fail_pct = 100 * failed / requests if requests else 0.0
    p50, p95, p99 = from_due.percentiles((50, 95, 99)) if from_due.count else (0, 0, 0)
    sent = from_send.percentiles((50, 95, 99)) if from_send.count else (0, 0, 0)
    row: dict[str, Any] = {
        "index": snapshot["index"],
        "offered_rps": snapshot["rate"],
        "achieved_rps": round(ok / measured_seconds, 1) if measured_seconds > 0 else 0.0,
        "requests": requests,
        "responses": from_due.count,
        "p50_ms": _ms(p50),
        "p95_ms": _ms(p95),
        "p99_ms": _ms(p99),
        "max_ms": _ms(from_due.max) if from_due.count else 0.0,
        "mean_ms": _ms(from_due.mean) if from_due.count else 0.0,
        "sent": {
            "p50_ms": _ms(sent[0]),
            "p95_ms": _ms(sent[1]),
            "p99_ms": _ms(sent[2]),
            "max_ms": _ms(from_send.max) if from_send.count else 0.0,
        },
        "lag_p99_ms": _ms(lag.percentile(99)) if lag.count else 0.0,
        "fail_pct": round(fail_pct, 3),
        "failures": {cause: outcomes[cause] for cause in FAILURES if outcomes[cause]}
        | ({"abandoned": abandoned} if abandoned else {}),
        "dropped": outcomes[DROPPED],
        "state": snapshot["state"],
        "start_s": snapshot["start"],
        "hold_s": snapshot["hold"],
        "warmup_s": snapshot["warmup"],
        "generator": {
            "cpu_seconds": round(snapshot["cpu_seconds"], 3),
            "cpu_share": round(snapshot["cpu_share"], 3),
        },
        "flags": [],
        "histograms": {
            name: snapshot[name] for name in ("latency_from_due", "latency_from_send", "schedule_lag")
        },
    }
    if "users" in snapshot:  # closed model: the phase's users and their arrival ramp
        row["users"] = snapshot["users"]
        row["ramp_s"] = snapshot["ramp"]
    reasons = pass_mark.judge(requests, row["p95_ms"], fail_pct)
    if snapshot["state"] != "finished":
        reasons = [f"the level did not finish ({snapshot['state']})", *reasons]
    row["passed"] = not reasons
    row["reasons"] = reasons
    return row


def ceiling_of(levels: Sequence[dict[str, Any]]) -> float | None:
    """The offered rate of the highest level held (see `passmark.ceiling`)."""
    return ceiling([level["offered_rps"] for level in levels], [level["passed"] for level in levels])
