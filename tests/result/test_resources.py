"""What ran out in a saturated level (result/resources.py), on figures worked out on paper: a role's
CPU, each of its event loops', and the machine's."""

from __future__ import annotations

import pytest

from dbladder.result.diagnosis import ProcessShare, Resources, RoleCpu, Second, diagnose
from dbladder.result.resources import findings

PASS_MS = 50.0


def saturated() -> list[Second]:
    # Offered 600 a second, answered 500, the backlog's wait growing 0.2 s a second.
    return [Second(600, 500, 0, 200 * (k + 0.95)) for k in range(10)]


def worker(used: float, busiest: float, busiest_waited: float = 0.0) -> ProcessShare:
    return ProcessShare("worker", used, busiest=busiest, loop=True, busiest_waited=busiest_waited)


SERVER = ProcessShare("server", 0.0, busiest=0.01)


def test_one_worker_at_its_limit_beside_an_idle_one_is_the_service_that_cannot_use_its_cores():
    # The issue's shape: the service at 1.00 core of its 2, its threads' waits summed to 0.67 of a
    # core besides, the machine 26 % idle. One worker's loop ran or waited to run 98 % of the time.
    service = RoleCpu(1.0, 2.0, 0.67, (SERVER, worker(0.92, 0.98, 0.05), worker(0.08, 0.10)))
    resources = Resources(cpu={"service": service, "host": RoleCpu(1.48, 2.0)})
    found = diagnose(saturated(), 600, PASS_MS, resources)
    assert (found.kind, found.resource) == ("saturation", "service worker")
    assert found.line.startswith(
        "one service worker at its limit: the service at 1.00 core of its 2 workers: worker 1 0.92 "
        "(busiest thread 98% of the time), worker 2 0.08 (busiest thread 10% of the time) (answered 500"
    )
    assert found.evidence["worker 1.busiest_thread"] == 0.98
    # The service as a whole is not at its limit: its waits do not count as cores it wanted.
    assert dict(findings(resources))["service CPU"] == pytest.approx(0.5 / 0.9)


def test_the_machine_s_cpus_are_named_with_each_role_s_share_when_a_role_only_waited_for_them():
    # Other work used the machine: the service's one worker ran 0.40 of a core and waited 0.55
    # more for one. It wanted its core, but the machine's CPUs are what ran out.
    service = RoleCpu(0.4, 1.0, 0.9, (SERVER, worker(0.4, 0.95, 0.55)))
    resources = Resources(
        cpu={"service": service, "generator": RoleCpu(0.3, 1.0), "host": RoleCpu(1.96, 2.0)}
    )
    found = diagnose(saturated(), 600, PASS_MS, resources)
    assert (found.kind, found.resource) == ("saturation", "host CPU")
    assert found.line.startswith(
        "the machine's CPUs at their limit: 1.96 of 2 cores busy: service 0.40 + generator 0.30 + "
        "other 1.26 (threads waiting for a CPU besides: service 0.90) (answered 500"
    )


def test_a_role_that_used_its_cores_is_named_before_the_machine_it_filled():
    service = RoleCpu(1.9, 2.0, 0.3, (SERVER, worker(0.95, 0.99, 0.04), worker(0.95, 0.99, 0.04)))
    resources = Resources(cpu={"service": service, "host": RoleCpu(1.98, 2.0)})
    found = diagnose(saturated(), 600, PASS_MS, resources)
    assert (found.kind, found.resource) == ("saturation", "service CPU")
    assert found.line.startswith("the service CPU at its limit: 1.90 of 2 cores, and 0.30 more waiting")


def test_every_loop_at_its_limit_is_the_role_s_limit_though_it_used_less_than_its_cores():
    # Each worker's loop ran most of the time and waited a little more: the service wanted its
    # two cores though it used 1.50 of them (the machine's CPUs were not at their limit).
    service = RoleCpu(1.5, 2.0, 0.4, (SERVER, worker(0.75, 0.95, 0.2), worker(0.75, 0.93, 0.2)))
    resources = Resources(cpu={"service": service, "host": RoleCpu(1.7, 2.0)})
    found = diagnose(saturated(), 600, PASS_MS, resources)
    assert found.resource == "service CPU"
    assert found.line.startswith(
        "the service CPU at its limit: 1.50 of 2 cores, every worker's busiest thread running or "
        "waiting to run: worker 1 0.75 (busiest thread 95% of the time), worker 2 0.75"
    )


def test_when_nothing_reached_its_bound_each_resource_says_how_far_it_stayed_under():
    # Two workers with time to spare, the machine a quarter idle, the disk's syncs to spare.
    service = RoleCpu(1.0, 2.0, 0.67, (SERVER, worker(0.5, 0.6, 0.1), worker(0.5, 0.55, 0.1)))
    resources = Resources(
        cpu={"service": service, "host": RoleCpu(1.48, 2.0)},
        commits_per_second=1150,
        fsyncs_per_second=3400,
        iowait=0.07,
    )
    found = diagnose(saturated(), 600, PASS_MS, resources)
    assert (found.kind, found.resource) == ("saturation", None)
    assert found.line.endswith(
        "which resource ran out cannot be told: none reached its bound: the machine's CPUs 1.48 of 2 "
        "cores busy (0.82 of its bound); service CPU 1.00 of 2 cores, its busiest worker's thread "
        "running or waiting 60% of the time (0.61 of its bound); writer: 1,150 commits/s against the "
        "disk's 3,400 fsyncs/s (0.42 of its bound); disk: iowait 7% of the host's CPU (0.35 of its bound)"
    )


def test_a_result_without_its_processes_adds_the_waits_as_before():
    # No processes sampled (an older result): the role's share is what it used plus what it waited.
    resources = Resources(cpu={"service": RoleCpu(0.6, 1.0, 0.38), "host": RoleCpu(2.0, 2.0)})
    found = diagnose(saturated(), 600, PASS_MS, resources)
    assert found.resource == "service CPU"


def loop(used: float, busiest: float, busiest_waited: float = 0.0, **states: float) -> ProcessShare:
    shares = {"running": 0.0, "idle": 0.0, "sleep": 0.0, "disk": 0.0, "lock": 0.0, "other": 0.0} | states
    return ProcessShare(
        "worker", used, busiest=busiest, loop=True, busiest_waited=busiest_waited, states=shares
    )


def test_loops_busy_all_level_on_half_a_core_are_named_with_what_held_them():
    # The shape measured at the README's failing rate: each loop running 57 %, asleep in SQLite's
    # busy handler 20 %, waiting for the disk 22 %, idle 1 %: busy all level, CPU to spare.
    service = RoleCpu(
        0.42,
        2.0,
        1.7,
        (
            SERVER,
            loop(0.21, 0.55, 0.05, running=0.57, sleep=0.20, disk=0.22, idle=0.01),
            loop(0.21, 0.57, 0.05, running=0.60, sleep=0.15, disk=0.24, idle=0.01),
        ),
    )
    resources = Resources(cpu={"service": service, "host": RoleCpu(1.4, 2.0)}, iowait=0.12)
    found = diagnose(saturated(), 600, PASS_MS, resources)
    assert (found.kind, found.resource) == ("saturation", "service loops"), found.line
    assert found.line.startswith(
        "the service's event loops at their limit, held by the disk and timed sleeps (SQLite's busy "
        "handler, waiting for the write lock): worker 1 busy 99% of the time (running 52%, waiting for "
        "a CPU 5%, asleep 20%, waiting for the disk 22%), worker 2 busy 99% of the time"
    ), found.line
    assert found.evidence["worker 2.disk"] == 0.24


def test_loops_asleep_on_the_write_lock_most_of_the_level_are_the_write_lock():
    service = RoleCpu(
        0.02, 2.0, 0.0, (SERVER, loop(0.01, 0.01, sleep=0.8, idle=0.2), loop(0.01, 0.01, sleep=0.7, idle=0.3))
    )
    found = diagnose(saturated(), 600, PASS_MS, Resources(cpu={"service": service}))
    assert (found.kind, found.resource) == ("saturation", "write lock"), found.line
    assert found.line.startswith(
        "the database's write lock: the service's loops asleep waiting for it (SQLite's busy handler) "
        "80% and 70% of the time"
    )


def test_loops_busy_running_are_the_service_s_cpu_not_its_loops():
    # Every loop busy all level, and busy running: its CPU is the finding.
    service = RoleCpu(
        1.9,
        2.0,
        0.1,
        (SERVER, loop(0.95, 0.97, running=0.97, idle=0.03), loop(0.95, 0.97, running=0.97, idle=0.03)),
    )
    found = diagnose(saturated(), 600, PASS_MS, Resources(cpu={"service": service}))
    assert found.resource == "service CPU", found.line


def test_the_host_s_iowait_is_not_named_when_the_service_s_loops_did_not_wait_for_the_disk():
    # Another program kept the disk busy (iowait 63 % of the host): the service's loops, asleep on
    # the write lock, never waited for it. The lock is the finding; the iowait stays in the evidence.
    service = RoleCpu(
        0.02, 2.0, 0.0, (SERVER, loop(0.01, 0.01, sleep=0.95, disk=0.01), loop(0.01, 0.01, sleep=0.9))
    )
    found = diagnose(saturated(), 600, PASS_MS, Resources(cpu={"service": service}, iowait=0.63))
    assert found.resource == "write lock", found.line
    assert found.evidence["disk"] == pytest.approx(0.63 / 0.2)


def test_loops_busy_all_level_mostly_waiting_for_a_cpu_on_a_full_machine_are_the_machine_s_cpus():
    # Measured on this shared machine at 4,000 req/s: each loop busy all level, running about
    # 20 %, waiting for a CPU 45 %, asleep on the write lock 30 %; the machine 98 % busy, other
    # programs using 1.29 cores of it. The loops wanted CPUs that other work had.
    service = RoleCpu(
        0.51,
        2.0,
        1.85,
        (
            SERVER,
            loop(0.23, 0.62, 0.45, running=0.63, sleep=0.34, disk=0.02, other=0.01),
            loop(0.28, 0.68, 0.48, running=0.73, sleep=0.22, disk=0.02, lock=0.02, other=0.01),
        ),
    )
    resources = Resources(
        cpu={"service": service, "generator": RoleCpu(0.16, 1.0, 0.44), "host": RoleCpu(1.96, 2.0)}
    )
    found = diagnose(saturated(), 600, PASS_MS, resources)
    assert found.resource == "host CPU", found.line
    assert found.line.startswith(
        "the machine's CPUs at their limit: 1.96 of 2 cores busy: service 0.51 + generator 0.16 + other "
        "1.29 (threads waiting for a CPU besides: service 1.85, generator 0.44); the service's event "
        "loops waited for a CPU 45% and 48% of the time"
    ), found.line
