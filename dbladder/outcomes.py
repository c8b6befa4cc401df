"""How a request can end, and the histograms a level snapshot holds: the vocabulary the recorder
writes and the result reads.

A leaf (docs/design.md): the load generator files every request under one of these names
(`dbladder.load.recorder`), and a level's row in the result counts them (`dbladder.result.level_rows`);
neither package imports the other.
"""

from __future__ import annotations

TIMEOUT = "timeout"
"""No complete response within the target's per-request timeout (over HTTP the connection is discarded)."""
CONNECT = "connect"
"""The connection was refused, reset or closed before the response was complete."""
PROTOCOL = "protocol"
"""The response could not be parsed as HTTP/1.x; the connection is discarded."""
UNEXPECTED = "unexpected"
"""An answer whose status the request does not count as a success (the user's app: a request's
`success` statuses, such as a 200 where a write should redirect, or a redirect to the login page)."""
DROPPED = "dropped"
"""The request could not be sent on time (no free slot before its deadline): counted, never skipped."""

OUTCOMES = ("2xx", "3xx", "4xx", "5xx", UNEXPECTED, TIMEOUT, CONNECT, PROTOCOL, DROPPED)
"""Every outcome a request can have, in report order."""

FAILURES = ("4xx", "5xx", UNEXPECTED, TIMEOUT, CONNECT, PROTOCOL, DROPPED)
"""Outcomes that count as failed requests (as k6's http_req_failed: any status outside 200-399)."""

HISTOGRAMS = ("latency_from_due", "latency_from_send", "schedule_lag", "failed_after")
"""The histograms of a level snapshot, each a Histogram.to_dict() of microseconds: successful answers
from the due time, every answer (any status) from the send, the schedule lag of every request sent,
and the time each failure took from its due time (a dropped request fails at its send time)."""
