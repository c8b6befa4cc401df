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

Each group's sample also keeps every process's own CPU and wait (`ProcessCpu`), with a role a
`Labeler` gives it once (the service's: its server process, each worker, the SQLite writer;
`service_process_role`); without one, the process's name. A service of two workers at one core
in all may be one worker at its core and the other idle: only the processes' own figures tell.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from ..service.server import session_members

Resolver = Callable[[], list[int]]
"""Returns the ids of a group's processes now."""
Labeler = Callable[[int], str]
"""Names a process's role in its group (e.g. "worker"), from its id: asked once per process."""

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
    # thread id -> (seconds on a CPU, seconds runnable and waiting for one), from schedstat
    threads: Mapping[int, tuple[float, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class ProcessCpu:
    """One process's CPU during one interval: seconds used, seconds its threads waited for a CPU,
    and the seconds its busiest thread was running or runnable (used + waited of that thread).

    One thread cannot use more than one core, so a thread runnable the whole interval is at its
    limit: a worker's event loop, which runs its requests' Python one at a time, is such a
    thread. The waits of several threads do not add up to a core's worth wanted: threads that hand
    a request to each other (granian's I/O threads and the loop) each wait a moment at every
    handoff, on an idle machine too (two processes handing a byte back and forth, which can never
    use more than a core between them, read 0.5-0.8 of a core used and 0.75-0.93 waited)."""

    pid: int
    role: str
    cpu_seconds: float
    wait_seconds: float
    busiest_thread_seconds: float = 0.0
    busiest_thread_wait_seconds: float = 0.0  # of which that thread waited for a CPU


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
    by_process: tuple[ProcessCpu, ...] = ()  # each process's own share of the two above


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
            counters = _thread_counters(pid)
            if counters is None:
                counted = process.num_ctx_switches()
                counters = (counted.voluntary, counted.involuntary, 0.0, {})
    except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
        return None
    return ProcessReading(
        pid=pid,
        started=started,
        cpu_seconds=times.user + times.system,
        vcsw=counters[0],
        ivcsw=counters[1],
        read_bytes=read_bytes,
        write_bytes=write_bytes,
        runqueue_seconds=counters[2],
        threads=counters[3],
    )


def _thread_counters(pid: int) -> tuple[int, int, float, dict[int, tuple[float, float]]] | None:
    """(voluntary, involuntary) context switches and seconds waited on the run queue, summed over
    the process's threads, and each thread's (on-CPU, waited) seconds; None without /proc."""
    tasks = Path(f"/proc/{pid}/task")
    try:
        threads = list(tasks.iterdir())
    except OSError:
        return None
    voluntary = involuntary = 0
    waited_ns = 0
    each: dict[int, tuple[float, float]] = {}
    for thread in threads:
        try:
            text = (thread / "status").read_text()
        except OSError:
            continue  # the thread ended while we looked
        # "on-CPU ns, run-queue wait ns, timeslices"; absent on a kernel without schedstats.
        with contextlib.suppress(OSError, IndexError, ValueError):
            on_cpu, waited = (thread / "schedstat").read_text().split()[:2]
            waited_ns += int(waited)
            each[int(thread.name)] = (int(on_cpu) / 1e9, int(waited) / 1e9)
        for line in text.splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                voluntary += int(line.split()[1])
            elif line.startswith("nonvoluntary_ctxt_switches:"):
                involuntary += int(line.split()[1])
    return voluntary, involuntary, waited_ns / 1e9, each


def _busiest_thread(before: ProcessReading, now: ProcessReading) -> tuple[float, float]:
    """The most seconds one thread of the process was running or runnable between two readings,
    and how many of those it waited for a CPU (a thread born between them counts in full)."""
    most = (0.0, 0.0)
    for tid, (on_cpu, waited) in now.threads.items():
        was_on, was_waiting = before.threads.get(tid, (0.0, 0.0))
        ran, queued = max(on_cpu - was_on, 0.0), max(waited - was_waiting, 0.0)
        if ran + queued > most[0]:
            most = (ran + queued, queued)
    return most


def process_name(pid: int) -> str:
    """A process's name (its command, as ps shows it), or "?" when it has gone: the default role."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip() or "?"
    except OSError:
        return "?"


class GroupTracker:
    """Turns successive readings of one group's processes into GroupSamples; `labeler` names each
    process's role (its name without one)."""

    def __init__(self, labeler: Labeler | None = None) -> None:
        self._last: dict[tuple[int, float], ProcessReading] = {}
        self._last_wall = 0.0
        self._labeler = labeler or process_name
        self._roles: dict[tuple[int, float], str] = {}

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
        by_process = []
        first = self._last_wall == 0.0
        for key, now in readings.items():
            before = self._last.get(key)
            if before is None:
                if first or now.started < self._last_wall - BIRTH_MARGIN_SECONDS:
                    continue  # it existed before but was not ours: a baseline only
                # Born in this interval: everything it did so far happened in the interval.
                before = ProcessReading(now.pid, now.started, 0.0, 0, 0, 0, 0)
            used = max(now.cpu_seconds - before.cpu_seconds, 0.0)
            queued = max(now.runqueue_seconds - before.runqueue_seconds, 0.0)
            cpu += used
            waited += queued
            if key not in self._roles:
                self._roles[key] = self._labeler(now.pid)
            by_process.append(
                ProcessCpu(now.pid, self._roles[key], used, queued, *_busiest_thread(before, now))
            )
            # Thread counts can fall when a thread ends: never a negative switch count.
            vcsw += max(now.vcsw - before.vcsw, 0)
            ivcsw += max(now.ivcsw - before.ivcsw, 0)
            read_bytes += max(now.read_bytes - before.read_bytes, 0)
            write_bytes += max(now.write_bytes - before.write_bytes, 0)
        self._last = readings
        self._last_wall = wall
        self._roles = {key: role for key, role in self._roles.items() if key in readings}
        return GroupSample(
            cpu_pct=100.0 * cpu / interval if interval > 0 else 0.0,
            cpu_seconds=cpu,
            vcsw=vcsw,
            ivcsw=ivcsw,
            read_bytes=read_bytes,
            write_bytes=write_bytes,
            processes=len(readings),
            cpu_wait_seconds=waited,
            by_process=tuple(by_process),
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
