"""The warm-up and the calibrated start in the terminal's summary and the report, from a result's
`warmup` and `search.calibration` (schema-checked by fake_result); two engines whose searches
calibrated different starts are still runs of one round, so a comparison compares them."""

from __future__ import annotations

import copy
from typing import Any

from report_support import fake_result, texts

from dbladder.report.runs import rounds_of
from dbladder.report.warm_up import summary_lines
from dbladder.result.run import RunResult

WARMUP = {
    "seconds": 10.9,
    "limit_s": 120.0,
    "requests": 241,
    "first_hits": 201,
    "stopped_because": "settled",
    "settled": True,
    "rule": "its median over the last 10 answers within 15 % (or 0.5 ms) of the 10 before",
    "by_request": [
        {"request": "home", "first_hits": 1, "first_ms": 612.0, "first_max_ms": 612.0, "settled_ms": 18.2,
         "answers": 21, "failed": 0, "settled": True},
        {"request": "item", "first_hits": 200, "first_ms": 52.1, "first_max_ms": 61.0, "settled_ms": 11.0,
         "answers": 220, "failed": 2, "settled": True},
    ],
}  # fmt: skip


def calibration(start: float) -> dict[str, Any]:
    return {
        "service_ms": 10.9,
        "estimate_rps": start / 0.7,
        "connections": 2,
        "start_rps": start,
        "share": 0.7,
        "sequential_requests": 180,
        "loops": [{"connections": 1, "rps": 91.0}, {"connections": 2, "rps": 99.0}],
        "failed": 0,
        "seconds": 3.5,
        "how": "measured",
    }


def searched(engine: str, start: float) -> dict[str, Any]:
    result = fake_result(engine)
    config = copy.deepcopy(result["config"]) | {"preset": "search", "ladder": None}
    config["search"] = {"start": start, "factor": 2.0, "resolution": 0.05, "budget": 150.0, "hold": 10.0,
                        "warmup": 2.0, "settle": 2.0, "min_rate": 1.0, "max_rate": 1e6}  # fmt: skip
    search = config["search"] | {"held_rps": 1000.0, "failed_rps": 1500.0, "probes": 3}
    return fake_result(
        engine, config=config, search=search | {"calibration": calibration(start)}, warmup=WARMUP
    )


def test_the_summary_says_how_long_the_warm_up_took_each_requests_first_and_settled_and_the_start():
    lines = summary_lines(RunResult.from_json(searched("sqlite", 69.3)))
    assert lines[0] == (
        "warm-up  warmed up in 10.9 s: 241 requests, 201 of them first hits, one at a time; every request "
        "settled (its median over the last 10 answers within 15 % (or 0.5 ms) of the 10 before)"
    )
    assert lines[1] == "           home: first 612 ms, settled 18 ms"
    assert lines[2] == (
        "           item: first 52 ms (median of 200 first hits, slowest 61 ms), settled 11 ms; "
        "2 of 220 answers failed"
    )
    assert lines[3] == (
        "start    calibration: service time 11 ms per request on one connection, a first capacity "
        "estimate of 99 req/s on 2 connection(s); the first probe at 69.3 req/s (0.7 x the estimate)"
    )


def test_the_report_shows_the_warm_up_and_the_calibration():
    md, html = texts([searched("sqlite", 69.3)])
    assert "The app warmed up in 10.9 s: 241 requests" in md
    assert "- home: first 612 ms, settled 18 ms" in md
    assert "Calibration: service time 11 ms per request on one connection" in md
    assert "home: first 612 ms, settled 18 ms" in html


def test_runs_that_calibrated_different_starts_are_one_round():
    results = [searched("sqlite", 69.3), searched("postgresql", 41.0)]
    (round_,) = rounds_of(results)
    assert len(round_.runs) == 2 and "calibrated start" in round_.title


def test_a_result_without_a_warm_up_says_nothing_of_one():
    assert summary_lines(RunResult.from_json(fake_result())) == []
