"""Where a ceiling search starts when the user gives no `--start`: calibrated on the app itself.

A search that starts far above the app's capacity spends its first probes coming down, on an app
buried in a backlog; one that starts far below spends them climbing. So, after the warm-up and
before the first probe, two short measurements on the warm app:

  1. requests of the mix one after another on one connection, for `sequential_s` seconds (at most
     `sequential_max` of them): the app's service time per request, with nothing queued;
  2. closed loops of `loop_s` seconds on 2, 4, 8, ... connections, each sending its next request
     as soon as its last is answered, until doubling the connections no longer adds `gain` (15 %)
     to the answers per second: the app is then as busy as its workers can be, and the most
     answers per second any loop had (the sequential run counting as the loop of one) is a first
     estimate of its capacity. A FIFO app of one worker at 10 ms reads 100 req/s on 2 connections.

The first probe starts at `share` (0.7) x the estimate, to three significant figures, within the
search's [min_rate, max_rate]: below the capacity, so the first probe holds and the search climbs
from a rate the app can take. Only answers with the request's success status count; an app that
gives none keeps the search's own start, and the calibration says so.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .mix import Request
from .targets.http import ConnectionPool

SEQUENTIAL_S = 2.0
SEQUENTIAL_MAX = 200
LOOP_S = 1.5
GAIN = 1.15
SHARE = 0.7
MAX_CONNECTIONS = 64


@dataclass(frozen=True)
class CalibrationRule:
    """How long each measurement takes, and where the first probe goes from the estimate."""

    sequential_s: float = SEQUENTIAL_S
    sequential_max: int = SEQUENTIAL_MAX
    loop_s: float = LOOP_S
    gain: float = GAIN
    share: float = SHARE
    max_connections: int = MAX_CONNECTIONS
    timeout_s: float = 5.0


@dataclass(frozen=True)
class Calibration:
    """What the calibration measured and the start it chose."""

    service_ms: float | None
    sequential: int
    loops: tuple[tuple[int, float], ...]  # (connections, answers/s), the sequential run first
    estimate_rps: float | None
    connections: int
    start_rps: float
    share: float
    failed: int
    seconds: float
    gain: float = GAIN  # the rule's: doubling the connections had to add this factor to go on

    def how(self) -> str:
        """How it was measured, in words."""
        if self.estimate_rps is None:
            return (
                f"no answer with a request's success status in {self.sequential} request(s) on one "
                "connection: nothing to estimate from, the search keeps its own start"
            )
        loops = ", ".join(f"{rps:,.1f} on {connections}" for connections, rps in self.loops[1:])
        return (
            f"{self.sequential} requests of the mix one after another on one connection (mean "
            f"{self.service_ms:.1f} ms, {self.loops[0][1]:,.1f} req/s); closed loops of each connection "
            f"sending its next request when its last is answered, answers/s: {loops or 'none'}; "
            f"the estimate is the most of them, where doubling the connections stopped adding "
            f"{100 * (self.gain - 1):.0f} %; the first probe at {self.share:g} x it"
        )

    def to_json(self) -> dict[str, Any]:
        """The result's `search.calibration` block."""
        return {
            "service_ms": None if self.service_ms is None else round(self.service_ms, 3),
            "estimate_rps": None if self.estimate_rps is None else round(self.estimate_rps, 1),
            "connections": self.connections,
            "start_rps": self.start_rps,
            "share": self.share,
            "sequential_requests": self.sequential,
            "loops": [{"connections": c, "rps": round(rps, 1)} for c, rps in self.loops],
            "failed": self.failed,
            "seconds": round(self.seconds, 2),
            "how": self.how(),
        }


def three_figures(rate: float) -> float:
    """A rate to three significant figures (70.35 -> 70.4): a probe's rate reads as a round number."""
    value = float(f"{rate:.3g}")
    return float(int(value)) if value == int(value) else value


Judge = Callable[[int, int], bool]


async def _loop(
    host: str,
    port: int,
    connections: int,
    seconds: float,
    stream: Iterator[Request],
    render: Callable[[Request], bytes],
    judge: Judge,
    timeout: float,
) -> tuple[list[float], int]:
    """`connections` closed loops for `seconds`: the latency (ms) of each success answered within
    the time, and the failures. Requests still out at the end are abandoned."""
    pool = ConnectionPool(host, port, connections, timeout)
    end = time.monotonic() + seconds
    latencies: list[float] = []
    failed = 0

    async def one() -> None:
        nonlocal failed
        while time.monotonic() < end:
            request = next(stream)
            at = time.perf_counter()
            answer = await pool.request(render(request), keep_body=False)
            if time.monotonic() > end:
                return
            if answer.cause is None and judge(request[0], answer.status):
                latencies.append(1000 * (time.perf_counter() - at))
            else:
                failed += 1

    tasks = [asyncio.ensure_future(one()) for _ in range(connections)]
    try:
        await asyncio.wait(tasks, timeout=seconds + 0.05)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        pool.close()
    return latencies, failed


async def calibrate(
    host: str,
    port: int,
    stream: Iterator[Request],
    render: Callable[[Request], bytes],
    judge: Judge,
    fallback_start: float,
    min_rate: float,
    max_rate: float,
    rule: CalibrationRule = CalibrationRule(),
) -> Calibration:
    """Measure the service at host:port with the mix's requests (`stream`) and choose the search's
    first rate (see the module notes); `fallback_start` when nothing answers with its success."""
    began = time.monotonic()
    latencies: list[float] = []
    failed = 0
    pool = ConnectionPool(host, port, 1, rule.timeout_s)
    sequential = 0
    try:
        while sequential < rule.sequential_max and time.monotonic() - began < rule.sequential_s:
            request = next(stream)
            at = time.perf_counter()
            answer = await pool.request(render(request), keep_body=False)
            sequential += 1
            if answer.cause is None and judge(request[0], answer.status):
                latencies.append(1000 * (time.perf_counter() - at))
            else:
                failed += 1
    finally:
        pool.close()
    if not latencies:
        return Calibration(
            None, sequential, (), None, 1, fallback_start, rule.share, failed,
            time.monotonic() - began, rule.gain,
        )  # fmt: skip
    service_ms = statistics.fmean(latencies)
    loops = [(1, len(latencies) / (time.monotonic() - began))]
    connections = 2
    while connections <= rule.max_connections:
        answered, lost = await _loop(
            host, port, connections, rule.loop_s, stream, render, judge, rule.timeout_s
        )
        failed += lost
        best = max(rps for _, rps in loops)
        loops.append((connections, len(answered) / rule.loop_s))
        if loops[-1][1] < rule.gain * best:
            break
        connections *= 2
    at_best = max(loops, key=lambda loop: loop[1])
    estimate = at_best[1]
    start = min(max(three_figures(rule.share * estimate), min_rate), max_rate)
    return Calibration(
        service_ms,
        sequential,
        tuple(loops),
        estimate,
        at_best[0],
        start,
        rule.share,
        failed,
        time.monotonic() - began,
        rule.gain,
    )
