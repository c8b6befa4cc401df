"""The service in its role's place: its main process, every worker and the single SQLite writer on
the service's CPUs and in its memory cgroup from the start, and again after a restart."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
from service_support import seed

from dbladder.roles import MemoryCgroup, RoleLimits, confiner, memory_problem
from dbladder.service import ServiceConfig, running_service

CPU = min(os.sched_getaffinity(0))


def allowed(pid: int) -> set[str]:
    """Cpus_allowed_list of every thread of `pid`."""
    found = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        for line in Path(f"/proc/{pid}/task/{tid}/status").read_text().splitlines():
            if line.startswith("Cpus_allowed_list:"):
                found.add(line.split(":", 1)[1].strip())
    return found


def family(pid: int) -> list[int]:
    root = psutil.Process(pid)
    return [root.pid, *(child.pid for child in root.children(recursive=True))]


def test_the_service_and_everything_it_starts_run_in_its_place(sqlite_url: str) -> None:
    seed(sqlite_url)
    group = MemoryCgroup.create("service", 512 << 20) if memory_problem() is None else None
    place = confiner(RoleLimits(cpus=(CPU,)), group)
    config = ServiceConfig(sqlite_url, port=0, workers=2, engine_settings={"sqlite_writers": 1})
    try:
        with running_service(config, place=place) as service:
            for start in range(2):
                processes = family(service.pid)
                # granian's main process, two workers and the writer at least
                assert len(processes) >= 4, processes
                for pid in processes:
                    assert allowed(pid) == {str(CPU)}, (pid, psutil.Process(pid).cmdline())
                if group is not None:
                    assert set(processes) <= set(group.members())
                if start == 0:
                    service.kill()
                    service.start_again()
    finally:
        if group is not None:
            assert group.remove()
