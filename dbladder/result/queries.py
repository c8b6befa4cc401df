"""Queries per request, per operation and level, for a workload that counts what it sends (an ORM).

The counts come as cumulative totals per operation (`Workload.query_counts`): from the service's
`/stats` at the edges of each level's measured window, or, in direct mode, from the generator
processes' own contexts at the same moments. A level's figures are the difference of the two
snapshots, so "this endpoint issues 86 queries" is a count, not an estimate:

    requests                  requests of the operation the workload ran in the window
    statements                SQL statements it sent
    round_trips               messages to the server and back (statements, BEGIN, COMMIT,
                              ROLLBACK as the driver sends them); 0 in-process (SQLite)
    statements_per_request    statements / requests
    round_trips_per_request   round_trips / requests

The window is the same as the service breakdown's, by the clock, not by each request's due time,
so the requests counted here can differ a little from the generator's count of the level; the
ratios are what the figures are for.
"""

from __future__ import annotations

from typing import Any

from ..types import QueryCounts

COUNTERS = ("requests", "statements", "round_trips")


def difference(before: QueryCounts | None, after: QueryCounts | None) -> dict[str, dict[str, int]] | None:
    """Each operation's counters in `after` minus those in `before` (None when either is missing).

    An operation whose counters went down (a process replaced and its counts lost) is left out:
    a level without a figure, rather than a wrong one.
    """
    if before is None or after is None:
        return None
    result = {}
    for name, values in after.items():
        earlier = before.get(name, {})
        changes = {counter: int(values.get(counter, 0)) - int(earlier.get(counter, 0)) for counter in values}
        if all(change >= 0 for change in changes.values()):
            result[name] = changes
    return result


def query_rows(counts: QueryCounts | None) -> dict[str, dict[str, Any]] | None:
    """A level's `queries` field: per operation the counts and their per-request ratios."""
    if counts is None:
        return None
    rows = {}
    for name, values in counts.items():
        requests = int(values.get("requests", 0))
        statements = int(values.get("statements", 0))
        round_trips = int(values.get("round_trips", 0))
        rows[name] = {
            "requests": requests,
            "statements": statements,
            "round_trips": round_trips,
            "statements_per_request": round(statements / requests, 2) if requests else None,
            "round_trips_per_request": round(round_trips / requests, 2) if requests else None,
        }
    return rows
