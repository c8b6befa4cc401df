"""A process placed from outside after it started: every thread and every child of it on the
role's CPUs and in its cgroup (read back from /proc)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dbladder.roles import MemoryCgroup, RoleLimits, memory_problem, place_tree
from dbladder.roles.confine import threads_of

CPU = max(os.sched_getaffinity(0))
# Three threads and a child (with a thread of its own), all started before the placement (the
# child says when its thread is running: on a busy machine it once was not, yet).
BUSY = """
import os, threading, time
def wait():
    time.sleep(30)
for _ in range(3):
    threading.Thread(target=wait, daemon=True).start()
started, child_ready = os.pipe()
if os.fork() == 0:
    threading.Thread(target=wait, daemon=True).start()
    os.write(child_ready, b"x")
    time.sleep(30)
    os._exit(0)
os.read(started, 1)  # the child's thread too is running before the placement
print("ready", flush=True)
time.sleep(30)
"""


def allowed(pid: int, tid: int) -> str:
    for line in Path(f"/proc/{pid}/task/{tid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError("no Cpus_allowed_list")


def test_every_thread_and_child_is_placed() -> None:
    problem = memory_problem()
    group = MemoryCgroup.create("service", 256 << 20) if problem is None else None
    process = subprocess.Popen([sys.executable, "-c", BUSY], stdout=subprocess.PIPE, text=True)
    placed: list[int] = []
    try:
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        placed = place_tree(process.pid, RoleLimits(cpus=(CPU,)), group)
        assert process.pid in placed and len(placed) == 2
        threads = [(pid, tid) for pid in placed for tid in threads_of(pid)]
        assert len(threads) >= 4 + 2
        for pid, tid in threads:
            assert allowed(pid, tid) == str(CPU)
        if group is not None:
            assert sorted(group.members()) == placed
    finally:
        for pid in {*placed, process.pid}:
            os.kill(pid, signal.SIGKILL)
        process.wait()
        assert process.stdout is not None
        process.stdout.close()
        if group is not None:
            deadline = time.monotonic() + 5
            while group.members() and time.monotonic() < deadline:
                time.sleep(0.02)
            assert group.remove()
    if problem is not None:
        pytest.skip(f"CPUs checked; the cgroup part needs one: {problem}")
