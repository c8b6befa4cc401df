"""The report's queries per request and round trips, from made-up results with known answers."""

from __future__ import annotations

from typing import Any

from report_support import fake_result

from dbladder.report import document, markdown
from dbladder.report.roundtrips import baseline, derive, entry_of, gap_sentence, gaps
from dbladder.report.runs import rounds_of
from dbladder.result.schema import RESULT_SCHEMA, problem

OPERATIONS = ("list_assets", "dashboard")


def result(
    label: str,
    engine: str,
    transport: str,
    p50: dict[str, float],
    trips: dict[str, float],
    latency: float | None = None,
    round_trip_us: float = 50.0,
    late_us: float = 0.0,
) -> dict[str, Any]:
    """A one-level result of `engine` over `transport` whose operations took `p50` ms with `trips`
    round trips a request."""
    made = fake_result(engine, (5,), label=label)
    level = made["levels"][0]
    level["operations"] = {
        name: {
            "requests": 10,
            "p50_ms": ms,
            "p95_ms": ms,
            "p99_ms": ms,
            "max_ms": ms,
            "fail_pct": 0.0,
            "failures": {},
        }
        for name, ms in p50.items()
    }
    level["queries"] = {
        name: {
            "requests": 10,
            "statements": int(10 * max(count - 2, 0)),
            "round_trips": int(10 * count),
            "statements_per_request": max(count - 2, 0),
            "round_trips_per_request": count,
        }
        for name, count in trips.items()
    }
    made["workload"]["operations"] = list(OPERATIONS)
    probe = {"median": round_trip_us, "p10": round_trip_us, "p90": round_trip_us, "count": 200}
    made["transport"] = {
        "transport": transport,
        "chosen": True,
        "url": made["config"]["db_url"],
        "added_latency_ms": latency,
        "round_trip_us": {"direct": probe},
    }
    if latency is not None:
        through = round_trip_us + 2000 * latency + 150
        made["transport"]["round_trip_us"]["through_relay"] = dict(probe, median=through)
        stats = dict.fromkeys(("connections", "chunks_up", "chunks_down", "bytes_up", "bytes_down"), 1)
        made["transport"]["relay"] = {
            "target": "127.0.0.1:5432",
            "listen": "127.0.0.1:40000",
            "stats": stats
            | {"held_chunks": 1, "late_seconds": 0.0, "most_late_seconds": 0.0, "mean_late_us": late_us},
        }
    assert problem(made, RESULT_SCHEMA) is None, problem(made, RESULT_SCHEMA)
    return made


PG_TRIPS = {"list_assets": 88.0, "dashboard": 6.0}
NO_TRIPS = {"list_assets": 0.0, "dashboard": 0.0}
# 2 ms each way and 150 us of lateness per chunk: 4.3 ms a round trip more than the relay at 0.
SLOWER = {"list_assets": 48.8 + 88 * 4.3, "dashboard": 6.1 + 6 * 4.3}
RESULTS = [
    result("sqlite", "sqlite", "inproc", {"list_assets": 30.0, "dashboard": 5.0}, NO_TRIPS),
    result("pg-unix", "postgresql", "unix", {"list_assets": 28.0, "dashboard": 4.0}, PG_TRIPS, None, 40),
    result("pg-tcp", "postgresql", "tcp", {"list_assets": 40.0, "dashboard": 5.5}, PG_TRIPS, None, 100),
    result("pg-tcp+0", "postgresql", "tcp", {"list_assets": 48.8, "dashboard": 6.1}, PG_TRIPS, 0.0, 100),
    result("pg-tcp+2", "postgresql", "tcp", SLOWER, PG_TRIPS, 2.0, 100, 150),
]


def entries() -> dict[str, Any]:
    (round_,) = rounds_of(RESULTS)
    return {group.label: entry_of(group) for group in round_.groups}


def test_each_entry_is_compared_with_what_isolates_one_cost():
    found = entries()
    listed = list(found.values())
    assert baseline(found["pg-tcp"], listed) == (found["pg-unix"], "tcp instead of the Unix socket")
    assert baseline(found["pg-tcp+0"], listed) == (found["pg-tcp"], "the relay's own cost")
    assert baseline(found["pg-tcp+2"], listed) == (found["pg-tcp+0"], "2 ms added each way")
    assert baseline(found["pg-unix"], listed) is None and baseline(found["sqlite"], listed) is None


def test_the_cost_per_round_trip_is_the_p50_difference_over_the_round_trips():
    found = entries()
    added = derive(found["pg-tcp+2"], found["pg-tcp+0"], "2 ms added each way")
    assert added is not None
    # Known answer: every operation gained 4.3 ms per round trip, so each and the slope say 4,300 us,
    # and that is what 2 ms each way plus 150 us of lateness per chunk should give.
    assert sorted(added.by_operation) == ["dashboard", "list_assets"]
    assert all(abs(value - 4300) < 1e-6 for value in added.by_operation.values())
    assert added.fit_us is not None and abs(added.fit_us - 4300) < 1e-6
    assert added.expected_us == 4300.0
    assert added.probe_us == 4000.0  # (100 + 4,000 + 150) - (100 + 0 + 150)
    tcp = derive(found["pg-tcp"], found["pg-unix"], "tcp instead of the Unix socket")
    assert tcp is not None and tcp.expected_us is None
    # list_assets 12 ms over 88 round trips, dashboard 1.5 ms over 6: the slope weights the first.
    assert abs(tcp.by_operation["list_assets"] - 12000 / 88) < 1e-6
    slope = (88 * 12000 + 6 * 1500) / (88**2 + 6**2)
    assert tcp.fit_us is not None and abs(tcp.fit_us - slope) < 1e-6


def test_the_engine_gap_is_said_to_be_round_trips_or_not():
    found = entries()
    # Over TCP PostgreSQL's list_assets is 10 ms slower than SQLite's; 88 round trips at 100 us are
    # 8.8 ms of it: explained.
    over_tcp = gaps(found["sqlite"], found["pg-tcp"])
    assert [gap.operation for gap in over_tcp] == ["dashboard", "list_assets"]
    sentence = gap_sentence(over_tcp)
    assert sentence is not None
    assert sentence.startswith("list_assets, pg-tcp against sqlite: 10.0 ms slower at p50; 88 round trips")
    assert "8.8 ms" in sentence and "the gap is explained by round trips (88% of it)" in sentence
    # Over the socket PostgreSQL is faster: nothing for round trips to explain.
    over_unix = gap_sentence(gaps(found["sqlite"], found["pg-unix"]))
    assert over_unix is not None and "there is no gap for round trips to explain" in over_unix


def test_the_report_shows_queries_beside_latency_and_the_round_trip_section():
    text = markdown.render(document.build(RESULTS))
    assert "## Queries per request" in text
    # The per-operation table of each level carries the counts beside the latency.
    assert "| 1 | list_assets | 10 | 40.0 | 40.0 | 40.0 | 0.00 |  | 86.0 | 88.0 |" in text
    assert (
        "| level | operation | requests | p50 | p95 | p99 | fail % | failures | statements / request |"
        in text
    )
    assert "## Round trips" in text
    assert "pg-tcp+2 against pg-tcp+0 (2 ms added each way): 4,300 us per round trip" in text
    assert "100% of the 4,300 us expected" in text
