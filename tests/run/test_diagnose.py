"""The round's diagnosis step (run/diagnose.py): a level's resources from its own figures, and its cause."""

from __future__ import annotations

import os

from dbladder.result.diagnosis import Resources
from dbladder.result.passmark import PassMark
from dbladder.roles.placement import Placement, RoleLimits
from dbladder.run.diagnose import level_diagnosis, level_resources, needs_diagnosis, role_cores

MARK = PassMark(p95_ms=50.0, max_fail_pct=1.0)


def second(t: int, p95: float, sent: int = 100, answered: int = 100) -> dict:
    return {
        "t": t,
        "sent": sent,
        "answered": answered,
        "failed": 0,
        "p50_ms": 1.0,
        "p95_ms": p95,
        "p99_ms": p95,
        "max_ms": p95,
    }


def row(seconds: list[dict], passed: bool, p95: float, **more) -> dict:
    return {
        "offered_rps": 100,
        "passed": passed,
        "reasons": [] if passed else [f"p95 {p95} ms is not under 50 ms"],
        "p95_ms": p95,
        "seconds": seconds,
        "start_s": 0.0,
        "hold_s": 11.0,
        "warmup_s": 1.0,
        "lag_p99_ms": 0.5,
        "dropped": 0,
    } | more


def test_a_level_is_diagnosed_when_it_failed_or_came_within_a_fifth_of_the_mark():
    assert needs_diagnosis(row([], False, 60.0), MARK)
    assert needs_diagnosis(row([], True, 41.0), MARK)
    assert not needs_diagnosis(row([], True, 39.0), MARK)


def test_a_failed_level_whose_every_second_passed_cannot_be_told_and_says_why():
    found = level_diagnosis(row([second(t, 5.0) for t in range(10)], False, 60.0), MARK, Resources())
    assert found.kind == "cannot tell"
    assert "every second passed on its own" in found.line and "p95 60.0 ms" in found.line


def test_a_passing_level_that_came_close_says_so():
    found = level_diagnosis(row([second(t, 45.0) for t in range(10)], True, 45.0), MARK, Resources())
    assert found.kind == "passed" and "close to the mark: p95 45.0 ms of 50 ms" in found.line


def test_the_resources_come_from_the_levels_machine_breakdown_activity_and_writes():
    cores = float(os.cpu_count() or 1)
    level = row(
        [],
        False,
        80.0,
        machine={
            "service_cpu_pct": 150.0,
            "service_processes": 2,
            "database_cpu_pct": None,
            "database_processes": 0,
            "generator_cpu_pct": 95.0,
            "generator_processes": 1,
            "host_busy": 90.0,
            "host_iowait": 5.0,
        },
        service_breakdown={"pool_wait_share": 0.7, "writer_queue_share": 0.6, "writer_queue_mean_ms": 3.0},
        achieved_rps=100.0,
        activity={
            "lock_wait_share": 0.6,
            "share.event.Lock:transactionid": 0.55,
            "share.event.Lock:tuple": 0.05,
        },
        operations={
            "create": {"requests": 500, "fail_pct": 0.0},
            "product": {"requests": 500, "fail_pct": 0.0},
        },
    )
    found = level_resources(level, writes=("create",), fsync={"per_second": 40.0})
    assert found.cpu["service"].used == 1.5 and found.cpu["service"].allowed == cores
    assert found.cpu["service"].waited == 0.0  # no run-queue figure in the row
    # What a role may use: its --cpus, and a service's event loops.
    limited = level_resources(level | {"machine": level["machine"] | {"service_cpu_wait_pct": 40.0}},
                              cores={"service": 1.0})  # fmt: skip
    assert limited.cpu["service"].allowed == 1.0 and limited.cpu["service"].waited == 0.4
    assert "database" not in found.cpu  # SQLite: no process of its own
    assert found.cpu["generator"].allowed == 1.0 and found.cpu["host"].used == 0.9 * cores
    assert found.pool_wait_share == 0.7 and found.iowait == 0.05
    assert found.lock_wait_share == 0.6 and found.lock_event == ("Lock:transactionid", 0.55)
    # Half the successful answers are writes, 100 answered a second: 50 commits a second.
    assert found.commits_per_second == 50.0 and found.fsyncs_per_second == 40.0
    assert found.writer_queue_share == 0.6 and found.writer_queue_mean_ms == 3.0
    assert found.sent_p95_ms is None  # the row has no latency from the send
    # A clock that busy-waits keeps the generator near a full core at any rate: left out then.
    assert "generator" not in level_resources(level, generator_cpu=False).cpu


def test_a_role_may_use_its_cpus_and_the_service_its_event_loops():
    two = Placement(service=RoleLimits(cpus=(0, 1)), database=RoleLimits(cpus=(1,)))
    assert role_cores(two, service_loops=3, host=4) == {"generator": 4.0, "service": 2.0, "database": 1.0}
    assert role_cores(Placement(), service_loops=1, host=2)["service"] == 1.0
    assert role_cores(Placement(), host=2) == {"generator": 2.0, "service": 2.0, "database": 2.0}
