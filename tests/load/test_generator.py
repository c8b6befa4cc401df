"""The open-loop generator against a real HTTP server on loopback (test_http_client's ScriptedServer)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from test_http_client import HOST, ScriptedServer, free_port, run

from dbladder.histogram import Histogram
from dbladder.load import mix
from dbladder.load.clock import Clock, FakeClock, MonotonicClock
from dbladder.load.executors.open import Generator
from dbladder.load.live_view import LiveView
from dbladder.load.merge import merge_snapshots
from dbladder.load.recorder import fell_behind
from dbladder.load.targets.http import HttpTarget
from dbladder.outcomes import HISTOGRAMS, OUTCOMES
from dbladder.plans import Ladder
from dbladder.workloads import shop

MIX = shop.workload.mix(write_share=0.2)
NAMES = tuple(op.name for op in shop.workload.operations)


def outcomes(**counts: int) -> dict[str, int]:
    """A full outcomes dict: the given counts, zero for every other outcome."""
    return {cause: counts.get(cause, 0) for cause in OUTCOMES}


async def run_ladder(
    ladder: Ladder,
    port: int,
    clock: Clock | None = None,
    in_flight: int = 100,
    timeout: float = 2.0,
    part: int = 0,
    parts: int = 1,
) -> dict[str, Any]:
    generator = Generator(
        ladder, clock or MonotonicClock(), mix.requests(shop.workload, MIX, shop.workload.sizes, stream=part),
        HttpTarget(HOST, port, in_flight, timeout, shop.workload), part, parts, operation_names=NAMES,
    )  # fmt: skip
    await generator.run()
    return generator.recorder.snapshot()


def check_histograms(level: dict[str, Any]) -> None:
    for name in HISTOGRAMS:
        histogram = Histogram.from_dict(level[name])
        figures = [histogram.percentile(q) for q in (50, 90, 95, 99, 99.9, 100)]
        assert figures == sorted(figures)
        assert histogram.min <= figures[0] and figures[-1] == histogram.max


@pytest.mark.slow
@pytest.mark.serial
def test_each_level_sends_rate_times_hold_requests_on_time() -> None:
    async def main() -> dict[str, Any]:
        async with ScriptedServer() as server:
            return await run_ladder(Ladder(50, 50, 2, 1.0), server.port)

    snapshot = run(main)
    assert not snapshot["interrupted"]
    first, second = snapshot["levels"]
    assert (first["rate"], second["rate"]) == (50, 100)
    for level, requests in ((first, 50), (second, 100)):
        assert level["state"] == "finished"
        # The mix has 20 % writes: POST /orders answers 201, the reads 200.
        assert level["outcomes"]["2xx"] == requests
        assert level["outcomes"] == outcomes(**{"2xx": requests})
        assert Histogram.from_dict(level["schedule_lag"]).count == requests
        assert Histogram.from_dict(level["latency_from_due"]).count == requests
        check_histograms(level)
        # Latency from the due time includes the schedule lag, so it is never below the latency
        # from the send (up to a microsecond of rounding).
        from_due = Histogram.from_dict(level["latency_from_due"])
        from_send = Histogram.from_dict(level["latency_from_send"])
        assert from_due.max + 1 >= from_send.max
        assert level["cpu_seconds"] > 0
        assert level["wall_seconds"] == pytest.approx(1.0, abs=0.3)
    assert fell_behind(first, max_lag_p99_us=10**9) == []


def test_requests_due_in_the_warm_up_are_left_out_of_the_level() -> None:
    async def main() -> dict[str, Any]:
        async with ScriptedServer() as server:
            return await run_ladder(Ladder(100, 100, 2, 1.0, warmup=0.25), server.port, FakeClock())

    first, second = run(main)["levels"]
    assert (first["warmup_requests"], first["outcomes"]["2xx"]) == (25, 75)
    assert (second["warmup_requests"], second["outcomes"]["2xx"]) == (50, 150)


@pytest.mark.slow
@pytest.mark.serial
def test_a_slow_service_with_a_small_in_flight_limit_drops_requests() -> None:
    async def main() -> dict[str, Any]:
        async with ScriptedServer(delay=0.2) as server:
            return await run_ladder(Ladder(50, 0, 1, 1.0), server.port, in_flight=2)

    (level,) = run(main)["levels"]
    # Two connections answering in 0.2 s carry about 10 requests/s of the 50 due.
    assert level["outcomes"]["dropped"] >= 30
    assert level["outcomes"]["2xx"] + level["outcomes"]["dropped"] == 50
    assert Histogram.from_dict(level["latency_from_send"]).min >= 190_000  # the loop's timers round
    assert level["state"] == "finished"


def test_timeouts_and_refused_connections_are_counted_by_cause() -> None:
    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with ScriptedServer(delay=1.0) as server:
            slow = await run_ladder(Ladder(10, 0, 1, 1.0), server.port, FakeClock(), timeout=0.1)
        refused = await run_ladder(Ladder(10, 0, 1, 1.0), free_port(), FakeClock())
        return slow, refused

    slow, refused = run(main)
    assert slow["levels"][0]["outcomes"] == outcomes(timeout=10)
    assert refused["levels"][0]["outcomes"] == outcomes(connect=10)
    assert Histogram.from_dict(slow["levels"][0]["latency_from_due"]).count == 0


@pytest.mark.serial
def test_cancelling_mid_run_keeps_the_finished_levels() -> None:
    async def main() -> tuple[dict[str, Any], LiveView | None]:
        async with ScriptedServer() as server:
            generator = Generator(
                Ladder(40, 40, 3, 0.5),
                MonotonicClock(),
                mix.requests(shop.workload, shop.workload.mix(), shop.workload.sizes),
                HttpTarget(HOST, server.port, 50, 2.0, shop.workload),
                operation_names=NAMES,
            )
            task = asyncio.create_task(generator.run())
            await asyncio.sleep(0.75)
            live = generator.progress()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return generator.recorder.snapshot(), live

    snapshot, live = run(main)
    assert snapshot["interrupted"]
    first, second, third = snapshot["levels"]
    assert first["state"] == "finished"
    assert first["outcomes"] == outcomes(**{"2xx": 20})
    assert second["state"] == "interrupted"
    assert 0 < second["outcomes"]["2xx"] < 40
    assert third["state"] == "pending"
    assert third["outcomes"] == outcomes()
    assert live is not None
    assert (live.level, live.rate, live.warming_up, live.failures) == (1, 80, False, 0)
    assert live.offered_rate == pytest.approx(80, rel=0.25)
    assert 0 < live.p95_ms < 50


def test_parts_split_the_ladder_and_merge_back_into_the_whole() -> None:
    async def main() -> list[dict[str, Any]]:
        async with ScriptedServer() as server:
            return [
                await run_ladder(Ladder(90, 30, 2, 1.0), server.port, FakeClock(), part=k, parts=3)
                for k in range(3)
            ]

    parts = run(main)
    assert [part["levels"][0]["outcomes"]["2xx"] for part in parts] == [30, 30, 30]
    merged = merge_snapshots(parts)
    assert (merged["parts"], merged["processes"]) == (3, 3)
    assert [level["outcomes"]["2xx"] for level in merged["levels"]] == [90, 120]
    assert [level["state"] for level in merged["levels"]] == ["finished", "finished"]
    for level in merged["levels"]:
        assert Histogram.from_dict(level["latency_from_due"]).count == level["outcomes"]["2xx"]
        check_histograms(level)


@pytest.fixture
def threaded_server() -> Iterator[ScriptedServer]:
    """A ScriptedServer on its own thread and loop, for generators in other processes."""
    loop = asyncio.new_event_loop()
    server = ScriptedServer()
    ready = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.__aenter__())
        ready.set()
        loop.run_forever()
        loop.run_until_complete(server.__aexit__())
        for task in asyncio.all_tasks(loop):
            task.cancel()
        loop.run_until_complete(asyncio.sleep(0.01))
        loop.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    ready.wait(5)
    try:
        yield server
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)


def test_fell_behind_names_a_late_schedule_and_a_busy_process() -> None:
    lag = Histogram()
    lag.record_many([100] * 98 + [5000] * 2)
    level = {"schedule_lag": lag.to_dict(), "cpu_share": 0.99}
    assert fell_behind(level) == ["schedule lag p99 5.0 ms is above 2 ms"]
    assert fell_behind(level, max_cpu_share=0.95) == [
        "schedule lag p99 5.0 ms is above 2 ms",
        "a generator process used 99% of a CPU",
    ]
    assert fell_behind(level, max_lag_p99_us=10_000, max_cpu_share=1.0) == []
