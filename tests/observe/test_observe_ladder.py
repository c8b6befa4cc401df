"""A real SQLite ladder, observed as the orchestrator observes one: every level row has the host and
per-group columns and the service's time breakdown."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest
from service_support import ORDERS, PRODUCTS, seed

from dbladder.load.fleet import ProcessSpec, run_process
from dbladder.observe import (
    Sampler,
    database_processes,
    level_flags,
    process_tree,
    service_breakdown,
    session,
    summarise,
)
from dbladder.observe.summary import HOST_KEYS
from dbladder.plans import Ladder
from dbladder.service import ServiceConfig, running_service
from dbladder.workloads import shop

RESPONSES = ("2xx", "3xx", "4xx", "5xx")


def _snapshot_at(service, times: list[float], into: dict[float, dict]) -> threading.Thread:
    """GET /stats at each of `times` (perf_counter), as the orchestrator does around each hold."""

    def run() -> None:
        for due in times:
            time.sleep(max(due - time.perf_counter(), 0.0))
            into[due] = service.stats()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.slow
def test_every_level_row_has_the_machine_and_the_time_breakdown(sqlite_url):
    seed(sqlite_url)
    ladder = Ladder(start=100, step=100, steps=2, hold=2.0, warmup=0.5)
    mix = shop.workload.mix(write_share=0.2)
    with running_service(ServiceConfig(sqlite_url, port=0)) as service:
        database = database_processes(sqlite_url)
        service_group = session(service.pid)
        sampler = Sampler(
            {
                # The generator runs in this process here; the service is its child, in its own session.
                "generator": process_tree(os.getpid(), exclude=service_group),
                "service": service_group,
                "database": database,
            },
            interval=0.5,
        )
        origin = time.perf_counter() + 0.3
        levels = ladder.levels()
        windows = [(origin + level.measured_from, origin + level.end) for level in levels]
        snapshots: dict[float, dict] = {}
        snapshotter = _snapshot_at(service, [t for window in windows for t in window], snapshots)
        sampler.start()
        spec = ProcessSpec(
            ladder,
            mix=mix,
            sizes={"products": PRODUCTS, "orders": ORDERS},
            port=service.config.port,
            timeout=5.0,
        )
        generated = run_process(spec, origin=origin)
        snapshotter.join()
        samples = sampler.stop()

    rows = []
    for (start, end), level in zip(windows, generated["levels"], strict=True):
        answered = sum(level["outcomes"][outcome] for outcome in RESPONSES)
        row = summarise(samples, start, end, answered) | service_breakdown(snapshots[start], snapshots[end])
        row["flags"] = level_flags(row, level)
        rows.append(row)
    json.dumps(rows)  # plain data, ready for result.json

    for row, level in zip(rows, levels, strict=True):
        assert row["coverage"] > 0.9
        assert all(row[key] is not None for key in HOST_KEYS)
        assert row["service_cpu_pct"] > 0 and row["service_cpu_ms_per_1k"] > 0
        assert row["service_vcsw_per_request"] is not None and row["service_processes"] >= 2
        assert row["generator_cpu_pct"] > 0 and row["generator_cpu_ms_per_1k"] > 0
        # SQLite runs inside the service: no database processes, no database figures.
        assert row["database_processes"] == 0 and row["database_cpu_ms_per_1k"] is None
        # The service timed about the requests of the hold. Not exactly the generator's count:
        # the /stats snapshots are taken when a thread of this busy process gets to them, and
        # a request sent late (the generator behind on a loaded machine) is timed late too.
        expected = level.rate * (level.hold - level.warmup)
        assert 0.5 * expected < row["timed_requests"] < 2 * expected
        assert 0.5 * expected < row["requests"] <= expected + 1
        for part in ("pool_wait", "database", "other"):
            assert row[f"{part}_p50_ms"] is not None and row[f"{part}_p95_ms"] >= row[f"{part}_p50_ms"]
        assert row["database_p50_ms"] > 0 and row["other_p50_ms"] > 0
        assert isinstance(row["flags"], list)
    assert database.warning is None
    assert sampler.warnings == []
