"""Where each event loop's time went (observe/loops.py): its thread's state, sampled, on processes
that run, sleep and wait for work in shares known in advance."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from dbladder.observe.loops import LoopSampler, state_of

# Half of every 20 ms spinning, half in a timed sleep (as SQLite's busy handler sleeps).
SPIN_AND_SLEEP = """
import time
while True:
    until = time.monotonic() + 0.01
    while time.monotonic() < until:
        pass
    time.sleep(0.01)
"""
# Waiting for work in epoll, as an idle event loop does.
IDLE_LOOP = "import select\nselect.epoll().poll(60)"


@pytest.fixture
def loops() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGKILL)
        process.wait()


def test_a_thread_s_state_is_read_from_its_state_letter_and_where_it_sleeps():
    assert state_of("R", "") == "running"
    assert state_of("D", "folio_wait_bit_common") == "disk"
    assert state_of("S", "do_epoll_wait") == "idle"
    assert state_of("S", "hrtimer_nanosleep") == "sleep"
    assert state_of("S", "futex_do_wait") == "lock"
    assert state_of("S", "do_wait") == "other"


@pytest.mark.slow
@pytest.mark.serial
def test_a_loop_that_spins_half_the_time_and_sleeps_the_rest_reads_so_and_an_idle_one_idle(loops):
    busy = subprocess.Popen([sys.executable, "-c", SPIN_AND_SLEEP])
    idle = subprocess.Popen([sys.executable, "-c", IDLE_LOOP])
    loops.extend([busy, idle])
    sampler = LoopSampler(lambda: [busy.pid, idle.pid], lambda pid: "worker")
    time.sleep(0.5)  # the interpreters' start
    sampler.start()
    began = time.perf_counter()
    time.sleep(2.0)
    shares = {entry["pid"]: entry for entry in sampler.shares(began + 0.2, time.perf_counter())}
    sampler.stop()
    spinning, waiting = shares[busy.pid], shares[idle.pid]
    assert spinning["readings"] >= 100 and waiting["readings"] >= 100
    # Half and half, read at random moments: within 15 points over 100-180 readings, and a
    # busy machine only makes the spin's half wait longer to run, which still reads "running".
    assert spinning["sleep"] == pytest.approx(0.5, abs=0.15), spinning
    assert spinning["running"] == pytest.approx(0.5, abs=0.15), spinning
    assert spinning["idle"] == 0
    assert waiting["idle"] >= 0.95, waiting
    assert sampler.shares(0.0, 1.0) == []  # a window before any reading
