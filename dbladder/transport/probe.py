"""The price of one round trip: `SELECT 1` on one pooled connection, timed one at a time.

A run measures it before its load over the transport its load will use (and, with added latency,
through the relay as well), so a report can put a figure on "a round trip over this transport"
beside the latencies it explains. SQLite's is a function call in this process.

The probe is bounded in time as well as in count: 200 round trips take a few milliseconds over a
socket on this machine, but the 120 of a relay's probe (its warm-up included) took 36 s through a
relay adding 150 ms each way, which a run paid before its load. Past SECONDS it stops once it has
MIN_ROUND_TRIPS: at that distance each round trip is the added latency to within a millisecond, so
a dozen say as much as two hundred.
"""

from __future__ import annotations

import statistics
import time

from ..engines import EngineOptions, opened
from ..urls import DatabaseURL

WARM_UP = 20
ROUND_TRIPS = 200
SECONDS = 2.0  # the probe's time, past which it stops once it has MIN_ROUND_TRIPS
MIN_ROUND_TRIPS = 12
WARM_UP_SECONDS = 0.5  # the warm-up's, past which it stops after one round trip


async def round_trip_seconds(
    url: DatabaseURL | str, count: int = ROUND_TRIPS, seconds: float = SECONDS
) -> list[float]:
    """The time of each of up to `count` `SELECT 1` round trips on one connection, after a warm-up;
    fewer (MIN_ROUND_TRIPS at least) where they would take over `seconds`."""
    async with opened(url, EngineOptions(pool_size=1)) as engine, engine.read() as session:
        began = time.perf_counter()
        for _ in range(WARM_UP):
            await session.fetch_one("SELECT 1")
            if time.perf_counter() - began > WARM_UP_SECONDS:
                break
        times: list[float] = []
        began = time.perf_counter()
        while len(times) < count:
            started = time.perf_counter()
            await session.fetch_one("SELECT 1")
            times.append(time.perf_counter() - started)
            if len(times) >= min(MIN_ROUND_TRIPS, count) and time.perf_counter() - began > seconds:
                break
    return times


async def round_trip_us(url: DatabaseURL | str, count: int = ROUND_TRIPS) -> dict[str, float]:
    """The median and 10th/90th percentiles of the round trips (`count` at most), in microseconds,
    and how many were timed."""
    times = sorted(await round_trip_seconds(url, count))
    deciles = statistics.quantiles(times, n=10)
    return {
        "median": round(statistics.median(times) * 1e6, 1),
        "p10": round(deciles[0] * 1e6, 1),
        "p90": round(deciles[-1] * 1e6, 1),
        "count": len(times),
    }
