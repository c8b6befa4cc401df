"""dbladder's figures against servers whose right answers are worked out in advance (tests/known_servers.py).

Each test drives a known server through the whole pipeline (`run_round` with `service_url`: real
generator processes, real HTTP over loopback, the real recorder and level rows) and checks the
figures against the analytic answer, within a stated tolerance. The tolerances allow for the
event loops' timer resolution (about a millisecond on both sides) and a busy 2-core machine.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from known_servers import known_server

from dbladder.plans import Ladder, Plan, Search
from dbladder.run.config import RunConfig
from dbladder.run.round import run_round

pytestmark = pytest.mark.serial

SMALL = {"products": 2000, "orders": 5000}


def run(url: str, sqlite_url: str, out: Path, plan: Plan, **changes) -> dict:
    config = RunConfig(
        db_url=sqlite_url,
        plan=plan,
        sizes=SMALL,
        service_url=url,
        out_dir=out,
        continue_after_fail=True,
    )
    return run_round(dataclasses.replace(config, **changes)).to_json()


@pytest.mark.slow
def test_a_fifo_server_of_capacity_500_answers_at_most_500_a_second(sqlite_url, tmp_path):
    # One request at a time, 2 ms each: capacity exactly 500/s. Below it, evenly spaced requests
    # never queue (latency 2 ms); above it the queue grows by (rate - 500) a second, and the
    # server answers exactly 500 a second, however many are due. Levels of 2 s (1.5 measured, 375
    # to 1,050 requests) decide every figure below as 3 s did: at 550 the queue is 25 deep by the
    # end of the warm-up, so the server is at its capacity for the whole measured part.
    with known_server("fifo", service_ms=2.0) as server:
        result = run(server.url, sqlite_url, tmp_path, Ladder(250, 150, 4, 2.0, warmup=0.5))
    levels = {level["offered_rps"]: level for level in result["levels"]}
    assert list(levels) == [250, 400, 550, 700]
    for rate in (250, 400):
        level = levels[rate]
        assert level["passed"], level["reasons"]
        assert abs(level["achieved_rps"] - rate) <= 0.03 * rate
        assert abs(level["sent_rps"] - rate) <= 0.03 * rate
        assert 1.9 <= level["p50_ms"] <= 6
    for rate in (550, 700):
        level = levels[rate]
        assert not level["passed"]
        assert 0.9 * server.capacity <= level["achieved_rps"] <= 1.02 * server.capacity, level["achieved_rps"]
        assert abs(level["sent_rps"] - rate) <= 0.03 * rate  # sent as offered: the server is what lags
    assert result["ceiling_rps"] == 400
    assert result["peak_rps"] <= 1.02 * server.capacity


@pytest.mark.slow
def test_a_server_failing_one_request_in_50_shows_the_timeout_in_its_p99(sqlite_url, tmp_path):
    # Every 50th request gets a 503 at once: exactly 2 % fail. Failures rank at the timeout (1 s),
    # so with 2 % of requests there, p99 and max are the timeout; the answered-only p99 is fast.
    with known_server("errors", every=50) as server:
        result = run(server.url, sqlite_url, tmp_path, Ladder(300, 0, 1, 3.0, warmup=1.0), timeout=1.0)
    (level,) = result["levels"]
    assert abs(level["fail_pct"] - 2.0) <= 0.1
    assert level["failures"] == {"5xx": level["failures"]["5xx"]}
    assert not level["passed"]
    assert 990 <= level["p99_ms"] <= 1010 and 990 <= level["max_ms"] <= 1010
    assert level["p95_ms"] < 20  # 95 % is below the 98 % that were answered at once
    assert level["answered"]["p99_ms"] < 20
    assert level["failed_after"]["max_ms"] < 20  # the 503s themselves came at once
    assert abs(level["achieved_rps"] - 0.98 * 300) <= 0.03 * 300


@pytest.mark.slow
def test_a_server_that_stalls_100_ms_every_second_has_the_p95_and_p99_of_a_uniform_wait(sqlite_url, tmp_path):
    # A tenth of the requests arrive in a stall and wait uniformly 0-100 ms for its end: the
    # latency quantile q is 100 * (1 - (1 - q) / 0.1) ms, so p95 50 ms, p99 90 ms, max 100 ms.
    # 200 req/s, not more a second: the requests of a stall are all answered at its end, and the
    # generator reads them one after another, so each one of a stall adds its reading time to the
    # rest (at 400 req/s that put p95 8 ms late on a busy machine). The window is 4 whole periods,
    # so it holds 4 whole stalls' worth of due times wherever the stalls fall in it: 80 requests
    # waiting 5, 10, ... 100 ms, of 800, which gives the same quantiles as the 7 periods it was.
    with known_server("stall", period_s=1.0, stall_s=0.1) as server:
        result = run(server.url, sqlite_url, tmp_path, Ladder(200, 0, 1, 5.0, warmup=1.0))
    (level,) = result["levels"]
    assert level["fail_pct"] == 0
    assert 44 <= level["p95_ms"] <= 56, level["p95_ms"]
    assert 84 <= level["p99_ms"] <= 96, level["p99_ms"]
    assert 95 <= level["max_ms"] <= 110, level["max_ms"]
    assert level["answered"]["p95_ms"] == level["p95_ms"]


@pytest.mark.slow
def test_timeouts_in_stalls_push_the_percentiles_to_the_timeout(sqlite_url, tmp_path):
    # Stalls of 500 ms every 2 s and a 250 ms timeout: a request arriving in the first 250 ms of a
    # stall times out, a share of 0.25 / 2 = 12.5 %. More than 5 % fail, so p95 and p99 are the
    # timeout; the answered-only p99 is that of the rest: those that waited under 250 ms.
    with known_server("stall", period_s=2.0, stall_s=0.5) as server:
        result = run(server.url, sqlite_url, tmp_path, Ladder(200, 0, 1, 5.0, warmup=1.0), timeout=0.25)
    (level,) = result["levels"]
    assert abs(level["fail_pct"] - 12.5) <= 1.5, level["fail_pct"]
    assert set(level["failures"]) == {"timeout"}
    assert 245 <= level["p95_ms"] <= 255 and 245 <= level["p99_ms"] <= 255
    assert level["answered"]["p99_ms"] < 250
    assert 245 <= level["failed_after"]["p50_ms"] <= 300  # a timeout fails at the timeout
    assert not level["passed"]


@pytest.mark.slow
def test_the_ceiling_search_ends_within_5_percent_of_a_fifo_servers_capacity(sqlite_url, tmp_path):
    # Capacity 400/s (2.5 ms a request). The search climbs 150, 300, 600 (fails), then bisects the
    # gap down to 5 %; a probe a little over 400 may hold (its queue grows by only a few requests
    # a second), so the ceiling is within 5 % of 400 either side, and no probe reports more
    # answers a second than the server can give. Probes of 2 s still decide it: offered 5 % over
    # the capacity, the queue grows 20 a second and the last of the 1.5 measured seconds waits
    # about 100 ms, twice the 50 ms mark; 5 % under it nothing queues (they were 2.5 s).
    search = Search(start=150, hold=2.0, warmup=0.5, settle=0.5, budget=60)
    with known_server("fifo", service_ms=2.5) as server:
        result = run(server.url, sqlite_url, tmp_path, search, continue_after_fail=False)
    capacity = server.capacity
    probes = result["levels"]
    assert [level["offered_rps"] for level in probes[:3]] == [150, 300, 600]
    assert result["search"]["stopped_because"] == "found"
    assert result["search"]["failed_rps"] <= 1.05 * result["search"]["held_rps"]
    assert abs(result["ceiling_rps"] - capacity) <= 0.05 * capacity, [
        (level["offered_rps"], level["passed"]) for level in probes
    ]
    for level in probes:
        assert level["achieved_rps"] <= 1.02 * capacity
        if level["offered_rps"] > 1.05 * capacity:
            assert not level["passed"]
        if level["offered_rps"] < 0.95 * capacity:
            assert level["passed"], level["reasons"]
    # Every probe is a level of the result, in the order run, each on its own window of the run.
    starts = [level["start_s"] for level in probes]
    assert starts == sorted(starts) and len(probes) == result["search"]["probes"]
