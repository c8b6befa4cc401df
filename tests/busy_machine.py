"""A test that asserts a time, a rate or a share of a resource (marked `serial`) needs the machine
to itself: this plugin measures, over each such test's call, how much of the machine's CPU went to
work that was not the test's, and when the test fails while that was more than a test of this kind
can stand, reports it as skipped with the figures instead of failed.

What counts as the test's own work: this process and every process it started (reaped ones through
`os.times`, live ones through psutil), and the local PostgreSQL and MariaDB servers (a serial test
runs alone, so their work is the test's queries). Everything else busy on the machine, and the CPU
time the hypervisor took from it (steal), is other work.

Why a failure and not every test: the figures of a known-answer test decide whether it passes, and
on a quiet machine they do (the serial part runs alone, after the parallel part). A test that
fails on a machine that was busy with other work says nothing about the code, and a red suite for
it sends a whole change back; a test that passes on a busy machine has shown what it shows. The
skip says how busy the machine was and what the test's failure was, so it is never silent
(`-ra` lists it at the end of the run).

The bound, `OTHER_WORK_LIMIT_CORES`: on this project's 2-core machines the serial part alone reads
0.02-0.10 of a core of other work (a few daemons) and up to 0.25 of steal on a bad hour; the
known-answer tests whose figures moved on a busy machine (a uniform stall's p95, a spike's
recovery, a machine's CPU shares) failed with 1 to 3 cores of other work beside them (a second
suite or a package install running). Half a core is between the two.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import psutil
import pytest

OTHER_WORK_LIMIT_CORES = 0.5
DATABASE_SERVERS = frozenset({"postgres", "mariadbd", "mysqld"})


@dataclass(frozen=True)
class CpuReading:
    """The machine's and the test's own CPU seconds at one moment."""

    at: float
    machine_busy_s: float  # every CPU's user, nice, system, irq and softirq time, steal apart
    steal_s: float
    own_s: float  # this process, its live descendants and the children it reaped
    databases: dict[tuple[int, float], float]  # CPU seconds by (pid, start time) of each server process


def machine_seconds() -> tuple[float, float]:
    """Busy seconds (steal apart) and steal seconds of all CPUs since boot, from /proc/stat."""
    with open("/proc/stat") as stat:
        fields = stat.readline().split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(value) for value in fields[:8])
    ticks = os.sysconf("SC_CLK_TCK")
    return (user + nice + system + irq + softirq) / ticks, steal / ticks


def process_seconds(process: psutil.Process) -> float:
    try:
        times = process.cpu_times()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return 0.0
    return times.user + times.system


def own_seconds() -> float:
    """This process, its reaped children (os.times) and its live descendants, in CPU seconds.
    A descendant alive at one reading and reaped by the next is counted both in the children's
    times and (at the first reading) alive: its CPU up to the first reading appears in both readings'
    terms, so the difference stays right."""
    times = os.times()
    live = sum(process_seconds(child) for child in psutil.Process().children(recursive=True))
    return times.user + times.system + times.children_user + times.children_system + live


def databases_seconds() -> dict[tuple[int, float], float]:
    """Each database server process's CPU seconds, by its pid and start time: a backend that ends
    between two readings takes its seconds with it, so only differences of one process count."""
    seconds = {}
    for process in psutil.process_iter(["name", "create_time"]):
        if process.info["name"] in DATABASE_SERVERS:
            seconds[(process.pid, process.info["create_time"])] = process_seconds(process)
    return seconds


def databases_between(start: CpuReading, end: CpuReading) -> float:
    """The servers' CPU seconds between two readings: a process at both counts its difference, one
    started since counts all of its own; one that ended since is lost (so its last moments count as
    other work: the rule errs towards a skip, never towards a failure)."""
    return sum(seconds - start.databases.get(key, 0.0) for key, seconds in end.databases.items())


def read_cpu() -> CpuReading:
    busy, steal = machine_seconds()
    return CpuReading(time.monotonic(), busy, steal, own_seconds(), databases_seconds())


@dataclass(frozen=True)
class OtherWork:
    """How much of the machine went to work that was not the test's, in cores on average."""

    seconds: float
    cores: int
    machine_busy: float
    own: float
    databases: float
    others: float  # other processes
    steal: float

    @property
    def total(self) -> float:
        return self.others + self.steal

    def words(self) -> str:
        return (
            f"the machine was busy with other work during this test: {self.total:.2f} of "
            f"{self.cores} cores on average over {self.seconds:.0f} s (other processes "
            f"{self.others:.2f}, steal {self.steal:.2f}; the test's own processes {self.own:.2f}, "
            f"the database servers {self.databases:.2f}); its figures need under "
            f"{OTHER_WORK_LIMIT_CORES} of a core of other work"
        )


def other_work(start: CpuReading, end: CpuReading) -> OtherWork:
    seconds = max(end.at - start.at, 1e-6)
    own = (end.own_s - start.own_s) / seconds
    databases = databases_between(start, end) / seconds
    busy = (end.machine_busy_s - start.machine_busy_s) / seconds
    return OtherWork(
        seconds=seconds,
        cores=psutil.cpu_count() or 1,
        machine_busy=busy,
        own=own,
        databases=databases,
        others=max(0.0, busy - own - databases),
        steal=max(0.0, (end.steal_s - start.steal_s) / seconds),
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    if item.get_closest_marker("serial") is None:
        return (yield)
    start = read_cpu()
    try:
        return (yield)
    finally:
        item.stash[OTHER_WORK] = other_work(start, read_cpu())


OTHER_WORK = pytest.StashKey[OtherWork]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    busy = item.stash.get(OTHER_WORK, None)
    if (
        call.when == "call"
        and report.failed
        and busy is not None
        and busy.total > OTHER_WORK_LIMIT_CORES
        and call.excinfo is not None
        and call.excinfo.errisinstance(AssertionError)
    ):
        failure = call.excinfo.exconly().splitlines()[0][:300]
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"{busy.words()}. It failed: {failure}")
    return report
