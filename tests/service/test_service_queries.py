"""Queries per operation, counted in every process of the service and summed by /stats."""

from __future__ import annotations

import asyncio
import json
import os
import time

import pytest
from service_support import seed as seed_shop

from dbladder.engines import opened
from dbladder.service import ServiceConfig, queries, running_service
from dbladder.workloads.orm import data

SIZES = {"users": 12, "controls": 30, "assets": 60, "assessments": 8, "findings": 400}


def test_each_process_publishes_its_own_and_the_reader_sums_them(tmp_path):
    stats_path = tmp_path / "stats"
    first, second = queries.Publisher(stats_path, pid=101), queries.Publisher(stats_path, pid=102)
    assert queries.read(stats_path) is None  # nobody counts
    first.publish({"a": {"requests": 2, "statements": 8}})
    second.publish({"a": {"requests": 1, "statements": 4}, "b": {"requests": 1, "statements": 1}})
    first.publish(None)  # a workload that does not count: nothing written
    assert queries.read(stats_path) == {
        "a": {"requests": 3, "statements": 12},
        "b": {"requests": 1, "statements": 1},
    }
    # Unchanged counts are not written again.
    written = os.stat(first.path).st_mtime_ns
    first.publish({"a": {"requests": 2, "statements": 8}})
    assert os.stat(first.path).st_mtime_ns == written
    assert json.loads(first.path.read_text()) == {"a": {"requests": 2, "statements": 8}}


@pytest.mark.slow
def test_stats_sums_the_workers_and_the_single_writer(sqlite_url):
    async def seed() -> None:
        async with opened(sqlite_url) as engine:
            await data.load(engine, 1, SIZES)

    asyncio.run(seed())
    config = ServiceConfig(
        sqlite_url, workload="orm", port=0, workers=2, pool_size=4, engine_settings={"sqlite_writers": 1}
    )
    with running_service(config) as service:
        for _ in range(6):
            assert service.request("GET", f"/dashboard?user={data.ADMIN_USER_ID}").status == 200
        for number in range(2):
            body = {"user_id": data.ADMIN_USER_ID, "name": f"a{number}", "kind": "primary", "criticality": 2}
            assert service.request("POST", "/assets", body).status == 201
        # Every process publishes its counts within 0.2 s; the worker answering /stats, at once.
        deadline = time.monotonic() + 3
        while True:
            counted = service.stats()["queries"]
            done = counted.get("dashboard", {}).get("requests") == 6
            if (done and counted.get("create_asset", {}).get("requests") == 2) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    # Known answers: the dashboard loads its user and runs three aggregates; the administrator's
    # new asset is its user and one INSERT (an administrator needs no grant), made in the writer.
    assert (counted["dashboard"]["requests"], counted["dashboard"]["statements"]) == (6, 24)
    assert (counted["create_asset"]["requests"], counted["create_asset"]["statements"]) == (2, 4)
    assert counted["dashboard"]["round_trips"] == counted["create_asset"]["round_trips"] == 0  # in-process


def test_a_service_whose_workload_does_not_count_serves_none(sqlite_url):
    # The shop sends exactly its declared statements: nothing to count, and /stats says so.
    seed_shop(sqlite_url)
    with running_service(ServiceConfig(sqlite_url, port=0, pool_size=2)) as service:
        assert service.stats()["queries"] is None
