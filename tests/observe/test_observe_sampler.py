"""The sampler on real processes: a child burning CPU reads about 100 %, a sleeping one about 0 %."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from dbladder.observe import Sampler, fixed, process_tree, summarise
from dbladder.observe.sampler import GROUP_FIELDS, HOST_FIELDS
from dbladder.observe.summary import GROUP_KEYS, HOST_KEYS

BURN = "while True: pass"
SLEEP = "import time; time.sleep(60)"
# A busy loop that also says, on stdout, how much CPU it got: perf_counter (CLOCK_MONOTONIC, one
# clock for every process) and its own process_time (CLOCK_PROCESS_CPUTIME_ID, not /proc).
ACCOUNTED_BURN = """
import sys, time
mark = time.perf_counter()
while True:
    now = time.perf_counter()
    if now - mark > 0.05:
        print(now, time.process_time(), flush=True)
        mark = now
"""


@pytest.fixture
def child() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Start children with child.append(...); each is killed (by its own PID) after the test."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        # Their own children first (started through ours), while they can still be found.
        for pid in process_tree(process.pid)()[1:]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.kill()
        process.wait()


def start(code: str, **options: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code], **options)  # type: ignore[call-overload]


def cpu_got(lines: list[str], start: float, end: float) -> float:
    """The share of one CPU a process reported getting over [start, end], from its own lines."""
    points = [tuple(map(float, line.split())) for line in lines if line.strip()]
    inside = [(t, cpu) for t, cpu in points if start <= t <= end]
    (t0, cpu0), (t1, cpu1) = inside[0], inside[-1]
    return (cpu1 - cpu0) / (t1 - t0)


@pytest.mark.slow
def test_a_burning_child_reads_about_one_cpu_and_a_sleeping_one_about_none(child):
    burner, sleeper = start(ACCOUNTED_BURN, stdout=subprocess.PIPE, text=True), start(SLEEP)
    child.extend([burner, sleeper])
    sampler = Sampler({"burn": fixed([burner.pid]), "sleep": fixed([sleeper.pid])}, interval=0.5)
    sampler.start()
    began = time.perf_counter()
    time.sleep(2.6)
    ended = time.perf_counter()
    samples = sampler.stop()
    burner.kill()
    assert len(samples) >= 5
    # From 0.5 s on, after the interpreters' start-up, to a bit before the end of its report.
    start_at, end_at = began + 0.5, ended - 0.1
    summary = summarise(samples, start_at, end_at, requests=1000)
    got = cpu_got(burner.communicate()[0].splitlines(), start_at, end_at)
    # On an idle CPU a busy loop gets all of it; on this shared machine it may get less, and the
    # sampler must read what it got (ticks of 10 ms: a few points either way over 2 s).
    assert summary["burn_cpu_pct"] == pytest.approx(100 * got, abs=8)
    if got > 0.95:
        assert 90 <= summary["burn_cpu_pct"] <= 105
    assert summary["sleep_cpu_pct"] < 3
    assert summary["burn_processes"] == summary["sleep_processes"] == 1
    seconds = end_at - start_at
    # 1,000 requests: CPU ms per 1,000 requests is the CPU milliseconds themselves.
    assert summary["burn_cpu_ms_per_1k"] == pytest.approx(summary["burn_cpu_pct"] / 100 * seconds * 1000)
    # A sleeper barely wakes; a busy loop never sleeps, it is only preempted.
    assert summary["sleep_vcsw_per_s"] < 5
    assert summary["burn_vcsw_per_s"] < 20
    for sample in samples:
        total = sample.host.usr + sample.host.sys + sample.host.iowait + sample.host.idle + sample.host.steal
        assert total == pytest.approx(100, abs=0.01)
    assert sampler.warnings == []


@pytest.mark.slow
@pytest.mark.serial
def test_each_process_reads_its_own_cpu_and_how_much_of_the_time_its_busiest_thread_wanted_one(child):
    # A group of a burner and a sleeper, as a service of a busy worker and an idle one. A busy
    # loop is always running or runnable: its thread reads about the whole window, used or waited
    # for, however busy this shared machine is; its CPU used alone is what it got.
    burner, sleeper = start(ACCOUNTED_BURN, stdout=subprocess.PIPE, text=True), start(SLEEP)
    child.extend([burner, sleeper])
    roles = {burner.pid: "burner", sleeper.pid: "sleeper"}
    sampler = Sampler({"pair": fixed([burner.pid, sleeper.pid])}, interval=0.5, labelers={"pair": roles.get})
    sampler.start()
    began = time.perf_counter()
    time.sleep(2.1)
    ended = time.perf_counter()
    samples = sampler.stop()
    burner.kill()
    start_at, end_at = began + 0.5, ended - 0.1
    summary = summarise(samples, start_at, end_at, requests=1000)
    got = cpu_got(burner.communicate()[0].splitlines(), start_at, end_at)
    by_role = {entry["role"]: entry for entry in summary["pair_by_process"]}
    assert [entry["pid"] for entry in summary["pair_by_process"]] == sorted([burner.pid, sleeper.pid])
    busy, idle = by_role["burner"], by_role["sleeper"]
    # Ticks of 10 ms, and schedstat's nanoseconds: a few points either way over 1.5 s.
    assert busy["cpu_pct"] == pytest.approx(100 * got, abs=8)
    assert busy["busiest_thread_pct"] == pytest.approx(100, abs=8)
    assert busy["busiest_thread_wait_pct"] == pytest.approx(
        busy["busiest_thread_pct"] - busy["cpu_pct"], abs=8
    )
    assert idle["cpu_pct"] < 3 and idle["busiest_thread_pct"] < 3
    assert summary["pair_cpu_pct"] == pytest.approx(busy["cpu_pct"] + idle["cpu_pct"], abs=0.01)


@pytest.mark.slow
def test_groups_are_resolved_again_at_every_sample(child):
    """A process born after the start (a PostgreSQL backend) joins its group and counts in full."""
    parent = start(
        "import subprocess, sys, time\n"
        "time.sleep(0.8)\n"
        f"burner = subprocess.Popen([sys.executable, '-c', {BURN!r}])\n"
        "try:\n    time.sleep(60)\nfinally:\n    burner.kill()\n"
    )
    child.append(parent)
    sampler = Sampler({"family": process_tree(parent.pid)}, interval=0.4)
    sampler.start()
    time.sleep(2.5)
    samples = sampler.stop()
    counts = [sample.groups["family"].processes for sample in samples]
    assert counts[0] == 1 and counts[-1] == 2
    # The parent sleeps: the group's CPU is the newcomer's, counted from the sample it joined in
    # (how much it gets depends on what else runs on this machine).
    joined = counts.index(2)
    assert samples[joined].groups["family"].cpu_seconds > 0


def test_a_process_counts_in_the_first_group_that_lists_it(child):
    burner = start(BURN)
    child.append(burner)
    sampler = Sampler({"first": fixed([burner.pid]), "second": fixed([burner.pid, os.getpid()])}, 0.3)
    sampler.start()
    time.sleep(0.7)
    samples = sampler.stop()
    assert all(sample.groups["second"].processes == 1 for sample in samples)
    assert sum(sample.groups["first"].cpu_seconds for sample in samples) > 0
    assert any("belong to an earlier group" in warning for warning in sampler.warnings)


def test_rows_are_flat_with_host_and_group_columns(child):
    sleeper = start(SLEEP)
    child.append(sleeper)
    sampler = Sampler({"service": fixed([sleeper.pid]), "database": lambda: []}, interval=0.2)
    origin = time.perf_counter()
    sampler.start()
    time.sleep(0.5)
    assert sampler.samples()  # readable while sampling
    sampler.stop()
    rows = sampler.to_rows(origin)
    expected = {"t", "interval"} | {f"host_{name}" for name in HOST_FIELDS}
    expected |= {f"{group}_{name}" for group in ("service", "database") for name in GROUP_FIELDS}
    assert all(set(row) == expected for row in rows)
    assert 0 < rows[0]["t"] < rows[-1]["t"] < 2
    summary = summarise(sampler.samples(), origin, time.perf_counter(), requests=0)
    assert set(HOST_KEYS) <= set(summary)
    assert {f"{group}_{key}" for group in ("service", "database") for key in GROUP_KEYS} <= set(summary)
    # The database group had no process: its figures are missing, not zero.
    assert summary["database_processes"] == 0 and summary["database_cpu_pct"] is None
    assert summary["service_cpu_ms_per_1k"] is None  # no requests: nothing per request


def test_a_failing_resolver_is_a_warning_not_a_crash():
    def broken() -> list[int]:
        raise PermissionError("not allowed")

    sampler = Sampler({"broken": broken}, interval=0.1)
    sampler.start()
    time.sleep(0.25)
    samples = sampler.stop()
    assert samples and all(sample.groups["broken"].processes == 0 for sample in samples)
    assert sampler.warnings == ["cannot list the broken processes: PermissionError: not allowed"]
