"""The ceiling search's answers against servers whose right figures are worked out in advance
(tests/known_servers.py): a probe's minimum of answers at a low rate and its p95 interval, a
one-off failure that does not set the ceiling, and a saturation that does, probed only once more.

Each runs the whole pipeline (`run_round` with `service_url`: real generator processes, real
HTTP over loopback) in a few seconds of probes. Tolerances allow for the event loops' timers
(about a millisecond either side) on a busy 2-core machine.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from known_servers import known_server

from dbladder.plans import Plan, Search
from dbladder.report import terminal
from dbladder.result.interval import quantile_ranks
from dbladder.result.passmark import PassMark
from dbladder.run.config import RunConfig
from dbladder.run.round import run_round

pytestmark = [pytest.mark.serial, pytest.mark.slow]

SMALL = {"products": 2000, "orders": 5000}


def run(url: str, sqlite_url: str, out: Path, plan: Plan, **changes) -> dict:
    config = RunConfig(db_url=sqlite_url, plan=plan, sizes=SMALL, service_url=url, out_dir=out)
    return run_round(dataclasses.replace(config, **changes)).to_json()


def test_a_probe_at_a_low_rate_holds_for_its_answers_and_its_p95_interval_is_its_order_statistics(
    sqlite_url, tmp_path
):
    # 40 req/s for a 1 s hold of which 0.5 s warm-up would measure 20 requests; 200 asked for
    # hold it (20 + 200) / 40 = 5.5 s, within 6 times the hold. The server answers in 10 ms and
    # every 20th request in 300 ms: 200 requests in a row hold exactly 10 slow ones, ranks 191 to
    # 200. Order statistics bound the p95 of 200 by ranks 184 and 197 (95 %), so the interval
    # runs from a fast answer to a slow one: 10 to 300 ms, the true p95 (10 ms, the fast answers'
    # time: 95 % of answers take it) inside it, and wide: a p95 from 200 such answers is that loose.
    search = Search(start=40, max_rate=40, hold=1.0, warmup=0.5, settle=0.2, budget=10, min_answers=200)
    with known_server("slow", service_ms=10.0, slow_ms=300.0, every=20) as server:
        result = run(server.url, sqlite_url, tmp_path, search, pass_mark=PassMark(p95_ms=1000.0))
    (level,) = result["levels"]
    assert level["hold_s"] == 5.5 and level["warmup_s"] == 0.5
    assert level["requests"] == 200 and level["responses"] == 200 and level["fail_pct"] == 0
    ranks = quantile_ranks(200)
    assert (ranks.lower, ranks.upper) == (184, 197)
    interval = level["p95_interval"]
    assert interval["n"] == 200 and interval["coverage"] == ranks.coverage
    # Rank 184 is a fast answer (the 97th percentile of the 190 fast ones: 10 ms and the loops'
    # lateness, 14.7 ms on a busy machine), rank 197 a slow one (300 ms and the same lateness).
    assert 10 <= interval["low_ms"] <= 50, interval
    assert 300 <= interval["high_ms"] <= 320, interval
    assert interval["low_ms"] <= level["p95_ms"] <= interval["high_ms"]
    assert "p95 interval " in terminal.level_line(level)  # wide: shown beside the level
    assert result["search"]["min_answers"] == 200


def test_a_one_off_stall_in_the_first_probe_does_not_set_the_ceiling(sqlite_url, tmp_path):
    # The server stalls once, for 2 s, from its 150th request: 1.5 s into the first probe at
    # 100 req/s (its window 0.5-3 s), which fails. Its failure is probed once more, holds, and the
    # search climbs past it to its max_rate: every rate held, the first failure not the ceiling.
    search = Search(start=100, max_rate=200, hold=3.0, warmup=0.5, settle=0.5, budget=30)
    with known_server("once", every=150, stall_s=2.0) as server:
        result = run(server.url, sqlite_url, tmp_path, search, pass_mark=PassMark(p95_ms=100.0))
    probes = [(level["offered_rps"], level["passed"]) for level in result["levels"]]
    assert probes == [(100, False), (100, True), (200, True)], probes
    assert result["levels"][0]["p95_ms"] > 1000  # the stall's waits, up to 2 s
    assert result["ceiling_rps"] == 200 and result["search"]["stopped_because"] == "too fast"
    assert result["search"]["probed_again"] == [
        {"rate_rps": 100, "levels": [1, 2], "because": "the first probe", "failed_again": False}
    ]
    assert "ceiling_rests_on" not in result["search"]
    summary = terminal.summary(result)
    assert "100 req/s probed again (levels 1 and 2) after the first probe: held the second time" in summary


def test_a_saturation_in_the_first_probe_sets_the_ceiling_and_is_probed_only_once_more(sqlite_url, tmp_path):
    # A FIFO server of capacity 200 req/s (5 ms a request). 300 req/s fails by saturation, and
    # again when probed once more; 150 holds, and with a resolution of 100 % the bracket 150-300
    # is found. The settle pause (1.5 s) lets the 300's backlog (at most some 250 requests, 1.25
    # s of work) drain before 150 is probed.
    search = Search(start=300, hold=2.0, warmup=0.5, settle=1.5, resolution=1.0, budget=30)
    with known_server("fifo", service_ms=5.0) as server:
        result = run(server.url, sqlite_url, tmp_path, search)
    probes = [(level["offered_rps"], level["passed"]) for level in result["levels"]]
    assert probes == [(300, False), (300, False), (150, True)], probes
    assert result["ceiling_rps"] == 150 and result["search"]["stopped_because"] == "found"
    rests = result["search"]["ceiling_rests_on"]
    assert (rests["rate_rps"], rests["levels"], rests["failed_twice"]) == (300, [1, 2], True)
    assert rests["words"] == (
        "300 req/s failed twice (levels 1 and 2; probed again after the first probe): a failure that repeats"
    )
    assert result["search"]["probed_again"] == [
        {"rate_rps": 300, "levels": [1, 2], "because": "the first probe", "failed_again": True}
    ]
    assert f"rests on {rests['words']}" in terminal.summary(result)
