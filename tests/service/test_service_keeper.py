"""The single SQLite writer's keeper: a writer that dies is noticed, reported and replaced."""

from __future__ import annotations

import os
import signal
import time

from service_support import Client, seed

from dbladder.service import ServiceConfig, running_service
from dbladder.service.server import service_process_role, session_members

ORDER = {"customer_id": 1, "items": [{"product_id": 7, "qty": 1}]}


def writer_pid(stats: dict) -> int:
    (pid,) = [p["pid"] for p in stats["processes"] if p["role"] == "writer" and p["alive"]]
    return pid


def test_a_killed_writer_shows_in_healthz_and_stats_and_is_replaced(sqlite_url):
    seed(sqlite_url)
    config = ServiceConfig(sqlite_url, port=0, workers=1, engine_settings={"sqlite_writers": 1})
    with running_service(config) as service:
        client = Client(service.config.port)
        assert client.post("/orders", ORDER)[0] == 201
        assert client.get("/healthz") == (200, {"status": "ok", "writer": {"alive": True, "restarts": 0}})
        first = writer_pid(service.stats())
        os.kill(first, signal.SIGKILL)
        seen_down = False
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            status, body = client.get("/healthz")
            if status == 503:
                assert body["writer"]["alive"] is False
                seen_down = True
            elif body["writer"]["restarts"] == 1:
                break
            time.sleep(0.005)
        else:
            raise AssertionError("the writer was not replaced within 30 s")
        stats = service.stats()
        assert stats["writer"] == {"alive": True, "restarts": 1}
        assert stats["totals"]["writer_restarts"] == 1
        second = writer_pid(stats)
        assert second != first
        # Writes work again, through the new writer; the first order's count survived in its slot.
        assert client.post("/orders", ORDER)[0] == 201
        assert service.stats()["totals"]["writes"] == 2
        client.close()
        assert f"the SQLite writer (PID {first}) ended with exit code -9; starting another" in service.log()
    print("503 seen while the writer was down:", seen_down)  # timing: the keeper is quick


def test_each_process_of_the_service_is_named_by_its_role(sqlite_url):
    # The run's sampler names them so (observe/processes.py): its workers and writer each run one
    # event loop, which the diagnosis judges on its own.
    seed(sqlite_url)
    config = ServiceConfig(sqlite_url, port=0, workers=2, engine_settings={"sqlite_writers": 1})
    with running_service(config) as service:
        stats = service.stats()
        roles = {pid: service_process_role(pid) for pid in session_members(service.pid)}
        assert roles[service.pid] == "server"
        workers = sorted(p["pid"] for p in stats["processes"] if p["role"] == "worker")
        assert sorted(pid for pid, role in roles.items() if role == "worker") == workers
        assert len(workers) == 2
        assert [pid for pid, role in roles.items() if role == "writer"] == [writer_pid(stats)]
        assert set(roles.values()) <= {"server", "worker", "writer", "tracker"}
    assert service_process_role(service.pid) == "?"  # gone
