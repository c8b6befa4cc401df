"""Process groups: which processes make up the generator, the service and the database, and what they did.

A group is a name and a resolver, a function returning the ids of the group's processes now.
Resolvers are called again at every sample, because processes come and go (PostgreSQL forks a
backend per connection; granian replaces a dead worker). The resolvers here cover the usual
shapes: a process and its descendants (`process_tree`), a session (`session`, the service runs in
its own), a fixed list (`fixed`).

Per process the counters are cumulative (CPU seconds of every thread, context switches of every
thread, bytes read from and written to storage), and `GroupTracker` turns two readings into what
the group did in between. A process is identified by its id and start time, so a reused id is a
new process. A process that started during the interval counts in full; one that ended during it
is missing from the end reading, so what it did in its last interval is lost (the kernel keeps
no counters for a process that has gone, short of its parent's wait).

Context switches are summed over the process's threads (/proc/PID/task/*/status): psutil reads
the main thread's only, which for mariadbd (a thread per connection) would count almost nothing.
Voluntary ones are sleeps (on a lock, on I/O, on an empty socket); involuntary ones are
preemptions, a sign of more runnable threads than CPUs. Beside them, from each thread's
/proc/PID/task/TID/schedstat, the time the threads were runnable but waited for a CPU (the
scheduler's run queue): on a machine busy with other work a process that wants a whole core gets
less, and its CPU used alone would not show that it wanted more; used + waited does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import psutil

from ..service.server import session_members

Resolver = Callable[[], list[int]]
"""Returns the ids of a group's processes now."""

# psutil derives a start time from the boot time, which /proc/stat gives in whole seconds: a start
# time can read up to a second early, so "started after the last sample" allows that much.
BIRTH_MARGIN_SECONDS = 1.0


@dataclass(frozen=True)
class ProcessReading:
    """One process's cumulative counters at one instant."""

    pid: int
    started: float  # psutil create_time(): seconds since the epoch, with the pid its identity
    cpu_seconds: float  # user + system, every thread, the process itself (not its children)
    vcsw: int  # voluntary context switches, every live thread
    ivcsw: int  # involuntary context switches, every live thread
    read_bytes: int  # from storage; 0 when the kernel does not tell us (no permission)
    write_bytes: int
    runqueue_seconds: float = 0.0  # runnable, waiting for a CPU, every live thread (0 without schedstat)


@dataclass(frozen=True)
class GroupSample:
    """What one group's processes did during one interval."""

    cpu_pct: float  # % of one CPU, summed over the processes: two busy processes read 200
    cpu_seconds: float
    vcsw: int
    ivcsw: int
    read_bytes: int
    write_bytes: int
    processes: int  # how many were alive at the end of the interval
    cpu_wait_seconds: float = 0.0  # runnable but waiting for a CPU, summed over the processes' threads


def read_process(pid: int) -> ProcessReading | None:
    """A process's counters now; None if it has gone or may not be read."""
    try:
        process = psutil.Process(pid)
        with process.oneshot():
            started = process.create_time()
            times = process.cpu_times()
            try:
                io = process.io_counters()
                read_bytes, write_bytes = io.read_bytes, io.write_bytes
            except (psutil.AccessDenied, AttributeError):
                read_bytes = write_bytes = 0
            threads = _thread_counters(pid)
            if threads is None:
                counted = process.num_ctx_switches()
                threads = (counted.voluntary, counted.involuntary, 0.0)
    except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
        return None
    return ProcessReading(
        pid=pid,
        started=started,
        cpu_seconds=times.user + times.system,
        vcsw=threads[0],
        ivcsw=threads[1],
        read_bytes=read_bytes,
        write_bytes=write_bytes,
        runqueue_seconds=threads[2],
    )


def _thread_counters(pid: int) -> tuple[int, int, float] | None:
    """(voluntary, involuntary) context switches and seconds waited on the run queue, summed over
    the process's threads; None without /proc."""
    tasks = Path(f"/proc/{pid}/task")
    try:
        threads = list(tasks.iterdir())
    except OSError:
        return None
    voluntary = involuntary = 0
    waited_ns = 0
    for thread in threads:
        try:
            text = (thread / "status").read_text()
        except OSError:
            continue  # the thread ended while we looked
        # "on-CPU ns, run-queue wait ns, timeslices"; absent on a kernel without schedstats.
        with contextlib.suppress(OSError, IndexError, ValueError):
            waited_ns += int((thread / "schedstat").read_text().split()[1])
        for line in text.splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                voluntary += int(line.split()[1])
            elif line.startswith("nonvoluntary_ctxt_switches:"):
                involuntary += int(line.split()[1])
    return voluntary, involuntary, waited_ns / 1e9


class GroupTracker:
    """Turns successive readings of one group's processes into GroupSamples."""

    def __init__(self) -> None:
        self._last: dict[tuple[int, float], ProcessReading] = {}
        self._last_wall = 0.0

    def sample(self, pids: Iterable[int], interval: float, wall: float) -> GroupSample:
        """Read the processes now; what they did since the previous call (`wall`: time.time() now).

        The first call only takes the baseline, with every figure 0, except for processes that
        are reported in full because they started after the previous call.
        """
        readings: dict[tuple[int, float], ProcessReading] = {}
        for pid in pids:
            reading = read_process(pid)
            if reading is not None:
                readings[(reading.pid, reading.started)] = reading
        cpu = waited = 0.0
        vcsw = ivcsw = read_bytes = write_bytes = 0
        first = self._last_wall == 0.0
        for key, now in readings.items():
            before = self._last.get(key)
            if before is None:
                if first or now.started < self._last_wall - BIRTH_MARGIN_SECONDS:
                    continue  # it existed before but was not ours: a baseline only
                # Born in this interval: everything it did so far happened in the interval.
                before = ProcessReading(now.pid, now.started, 0.0, 0, 0, 0, 0)
            cpu += max(now.cpu_seconds - before.cpu_seconds, 0.0)
            waited += max(now.runqueue_seconds - before.runqueue_seconds, 0.0)
            # Thread counts can fall when a thread ends: never a negative switch count.
            vcsw += max(now.vcsw - before.vcsw, 0)
            ivcsw += max(now.ivcsw - before.ivcsw, 0)
            read_bytes += max(now.read_bytes - before.read_bytes, 0)
            write_bytes += max(now.write_bytes - before.write_bytes, 0)
        self._last = readings
        self._last_wall = wall
        return GroupSample(
            cpu_pct=100.0 * cpu / interval if interval > 0 else 0.0,
            cpu_seconds=cpu,
            vcsw=vcsw,
            ivcsw=ivcsw,
            read_bytes=read_bytes,
            write_bytes=write_bytes,
            processes=len(readings),
            cpu_wait_seconds=waited,
        )


# ---------------------------------------------------------------------------------------------
# Resolvers


def process_tree(pid: int, *, exclude: Resolver | None = None) -> Resolver:
    """A process and all its descendants, less those `exclude` returns (e.g. the service's session)."""

    def resolve() -> list[int]:
        try:
            root = psutil.Process(pid)
            members = [pid, *(child.pid for child in root.children(recursive=True))]
        except psutil.NoSuchProcess:
            return []
        if exclude is not None:
            left_out = set(exclude())
            members = [member for member in members if member not in left_out]
        return members

    return resolve


def session(session_id: int) -> Resolver:
    """Every live process of a session: `running_service` starts the service in its own."""

    def resolve() -> list[int]:
        return session_members(session_id)

    return resolve


def fixed(pids: Iterable[int]) -> Resolver:
    """The same processes every time (those that have ended simply stop counting)."""
    members = list(pids)

    def resolve() -> list[int]:
        return list(members)

    return resolve


def nothing() -> list[int]:
    """A group with no processes of its own (SQLite's database runs inside the service)."""
    return []
