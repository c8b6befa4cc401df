"""The search's calibrated start (dbladder.load.calibration) against known servers: a FIFO of one
worker at 10 ms a request can answer exactly 100 a second, so one connection reads a service time
of 10 ms and a little under 100 req/s, 2 connections 100 req/s, and 4 add nothing: the estimate
is 100 req/s and the start 70. A server that answers nothing with a success keeps the fallback."""

from __future__ import annotations

import asyncio

import pytest
from known_servers import known_server

from dbladder.load.calibration import CalibrationRule, calibrate, three_figures
from dbladder.load.targets.http import render_get


def stream():
    while True:
        yield (0, ())


def render(request) -> bytes:
    return render_get("/", "127.0.0.1")


def ok(index: int, status: int) -> bool:
    return status == 200


@pytest.mark.serial
def test_a_fifo_of_one_worker_reads_its_service_time_and_capacity_and_starts_below_it():
    rule = CalibrationRule(sequential_s=1.0, loop_s=1.0)
    with known_server("fifo", service_ms=10.0) as server:
        found = asyncio.run(calibrate("127.0.0.1", server.port, stream(), render, ok, 500, 1, 1e6, rule))
    assert 9.9 <= found.service_ms <= 14, found  # 10 ms and the round trip, on a busy machine
    assert abs(found.estimate_rps - 100) <= 25, found  # within 25 % of the capacity
    assert found.estimate_rps <= 102  # no more than the server can answer
    assert found.start_rps == three_figures(0.7 * found.estimate_rps) < 100
    assert [connections for connections, _ in found.loops][:2] == [1, 2]
    assert found.failed == 0
    record = found.to_json()
    assert record["start_rps"] == found.start_rps and "one after another on one connection" in record["how"]


@pytest.mark.serial
def test_a_server_with_no_success_keeps_the_searchs_own_start():
    rule = CalibrationRule(sequential_s=0.3, loop_s=0.3)
    with known_server("errors", every=1) as server:  # every answer a 503
        found = asyncio.run(calibrate("127.0.0.1", server.port, stream(), render, ok, 500, 1, 1e6, rule))
    assert found.estimate_rps is None and found.start_rps == 500 and found.loops == ()
    assert found.failed == found.sequential > 0
    assert "nothing to estimate from" in found.to_json()["how"]


def test_a_start_reads_as_three_significant_figures():
    assert [three_figures(rate) for rate in (69.37, 700.4, 1234.0, 0.5)] == [69.4, 700.0, 1230.0, 0.5]
