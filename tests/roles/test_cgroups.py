"""dbladder's own memory cgroups: made with their cap, joined before exec, removed after, and the
leftovers of a killed run removed by the next one. They need root (or a delegated cgroup): the
tests skip, saying why, where no cgroup can be made."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from privilege_support import as_nobody

from dbladder.roles import (
    MemoryCgroup,
    RoleLimits,
    confiner,
    cpus_of,
    leftovers,
    memory_problem,
    parse_placement,
    remove_leftovers,
)

CAP = 256 << 20


@pytest.fixture
def cgroups() -> None:
    problem = memory_problem()
    if problem is not None:
        pytest.skip(problem)


def test_a_group_has_its_cap_and_is_removed(cgroups) -> None:
    group = MemoryCgroup.create("database", CAP)
    try:
        limit_file = "memory.max" if group.version == 2 else "memory.limit_in_bytes"
        assert int((group.folder / limit_file).read_text()) == CAP
        assert group.folder.name.startswith(f"dbladder-{os.getpid()}-database-")
    finally:
        assert group.remove()
    assert not group.folder.exists()


def test_a_child_and_its_children_are_born_in_the_group_on_their_cpus(cgroups) -> None:
    cpu = min(os.sched_getaffinity(0))
    group = MemoryCgroup.create("service", CAP)
    # The child forks a grandchild after it started: both must be inside, on the role's CPU.
    script = (
        "import os, time, sys\nif os.fork() == 0:\n    time.sleep(30)\n"
        "print(os.getpid(), flush=True)\ntime.sleep(30)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=confiner(RoleLimits(cpus=(cpu,)), group),
    )
    try:
        assert child.stdout is not None
        assert int(child.stdout.readline()) == child.pid
        deadline = time.monotonic() + 5
        while len(group.members()) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        members = group.members()
        assert child.pid in members and len(members) == 2
        for pid in members:
            assert cpus_of(pid) == (cpu,)
            status = Path(f"/proc/{pid}/status").read_text()
            assert f"Cpus_allowed_list:\t{cpu}\n" in status
    finally:
        for pid in group.members():
            os.kill(pid, signal.SIGKILL)
        child.wait()
        deadline = time.monotonic() + 5
        while group.members() and time.monotonic() < deadline:
            time.sleep(0.02)
        child.stdout.close()
        assert group.remove()


def test_the_group_of_a_killed_run_is_removed_by_the_next(cgroups) -> None:
    # A run that is killed never removes its group: the next create finds it by its maker's PID.
    made = subprocess.run(
        [
            sys.executable,
            "-c",
            "from dbladder.roles import MemoryCgroup\nprint(MemoryCgroup.create('database', 1 << 28).folder)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    folder = made.stdout.strip()
    assert os.path.isdir(folder)
    assert folder in [str(p) for p in leftovers()]
    group = MemoryCgroup.create("database", CAP)
    try:
        assert not os.path.isdir(folder)
    finally:
        group.remove()
    assert remove_leftovers() == []


def test_memory_without_permission_is_one_line() -> None:
    # As an unprivileged user no cgroup can be made: refused before anything starts. The check runs
    # in a fork that has given up root (the user may not be able to read this Python's files).
    if os.geteuid() != 0:
        pytest.skip("needs root to run the check as another user")
    message = as_nobody(lambda: parse_placement(memory=["database=512M"]))
    assert message.startswith("--memory: user 65534 may not make cgroups in ")
    assert "\n" not in message


def test_memory_caps_are_checked_with_the_options(cgroups) -> None:
    assert parse_placement(memory=["database=256M"]).database.memory == CAP
