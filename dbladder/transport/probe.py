"""The price of one round trip: `SELECT 1` on one pooled connection, timed one at a time.

A run measures it before its load over the transport its load will use (and, with added latency,
through the relay as well), so a report can put a figure on "a round trip over this transport"
beside the latencies it explains. SQLite's is a function call in this process.
"""

from __future__ import annotations

import statistics
import time

from ..engines import EngineOptions, opened
from ..urls import DatabaseURL

WARM_UP = 20
ROUND_TRIPS = 200


async def round_trip_seconds(url: DatabaseURL | str, count: int = ROUND_TRIPS) -> list[float]:
    """The time of each of `count` `SELECT 1` round trips on one connection, after a warm-up."""
    async with opened(url, EngineOptions(pool_size=1)) as engine, engine.read() as session:
        for _ in range(WARM_UP):
            await session.fetch_one("SELECT 1")
        times = []
        for _ in range(count):
            started = time.perf_counter()
            await session.fetch_one("SELECT 1")
            times.append(time.perf_counter() - started)
    return times


async def round_trip_us(url: DatabaseURL | str, count: int = ROUND_TRIPS) -> dict[str, float]:
    """The median and 10th/90th percentiles of `count` round trips, in microseconds."""
    times = sorted(await round_trip_seconds(url, count))
    deciles = statistics.quantiles(times, n=10)
    return {
        "median": round(statistics.median(times) * 1e6, 1),
        "p10": round(deciles[0] * 1e6, 1),
        "p90": round(deciles[-1] * 1e6, 1),
        "count": count,
    }
