"""What a run watches besides its own requests: the machine, and where the service's time went.

The runner calls it in this order, and it never prints:

    idle = check_idle()                        # before anything runs: was the machine quiet?
    observer = RunObserver(engine_info, url, data_path, precise_clock)
    observer.idle = idle
    observer.start(levels, origin, generator, service, stats)   # with the load
    observer.level(snapshot, row)              # as each level is judged: row["machine"], ...
    flags, timeseries = observer.stop()        # at the end

Level figures cover each level's measured window (after its warm-up or ramp) on the
generator's clock (time.perf_counter), so the host and process figures line up with the
latencies they explain. The service's request-time histograms are read from /stats at each
window's edges by a small thread, and their difference is the level's breakdown.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import psutil

from ..engines.base import EngineInfo
from ..errors import DbladderError
from ..observe import (
    NoTiming,
    Sampler,
    count_syscalls,
    data_size_bytes,
    database_memory,
    database_processes,
    environment,
    idle_check,
    level_flags,
    nothing,
    per_request,
    run_flags,
    service_breakdown,
    session,
    summarise,
    syscall_tool,
)
from ..observe.environment import seconds_setting
from ..observe.loops import LoopSampler
from ..plans import PlannedLevel
from ..result.queries import difference, query_rows
from ..service.server import service_process_role
from ..urls import DatabaseURL
from .diagnose import LevelDiagnosis, machine_moments
from .storage_reads import storage_reader, window

SAMPLE_INTERVAL = 1.0
SYSCALL_SECONDS = 3.0
MOMENT_TOLERANCE = 1e-6
"""Seconds within which a moment asked of a StatsPoller is the one it was given (float rounding)."""
IDLE_CHECK_SECONDS = 2.0
IDLE_CHECK_VARIABLE = "DBLADDER_IDLE_CHECK_SECONDS"
"""Overrides IDLE_CHECK_SECONDS: a short check for many short runs (the test suite sets 0.25)."""


class StatsPoller:
    """Reads the service's /stats at given moments (perf_counter times), on a thread of its own.

    More moments can be added while it runs (`add`): a ceiling search learns each probe's window
    only as it starts the probe.
    """

    def __init__(self, stats: Callable[[], dict[str, Any]], moments: Sequence[float]):
        self._stats = stats
        self._moments = sorted(set(moments))
        self._taken: dict[float, dict[str, Any]] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dbladder-stats", daemon=True)

    def add(self, moments: Sequence[float]) -> None:
        """Read /stats at these moments too."""
        with self._lock:
            self._moments = sorted(set(self._moments) | set(moments))
        self._wake.set()

    def start(self) -> None:
        self._thread.start()

    def at(self, moment: float, wait: float = 2.0) -> dict[str, Any] | None:
        """The snapshot taken at `moment`, waiting up to `wait` seconds for it; None if there is none.

        `moment` matches a moment given within MOMENT_TOLERANCE: a level's edge is added as origin
        + (start + hold) and asked for as (origin + start) + hold, which can differ in the last
        bit, and an exact match then waited the whole `wait` and lost the level's figures."""
        deadline = time.monotonic() + wait
        while (found := self._taken_at(moment)) is None and time.monotonic() < deadline:
            if not self._thread.is_alive():
                break
            time.sleep(0.02)
        return found

    def _taken_at(self, moment: float) -> dict[str, Any] | None:
        with self._lock:
            taken = list(self._taken.items())
        return next((snapshot for at, snapshot in taken if abs(at - moment) <= MOMENT_TOLERANCE), None)

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                moment = self._moments[0] if self._moments else None
            if moment is None or moment > time.perf_counter():
                # Sleep until the next moment, or until a new one is added or the poller stops.
                self._wake.wait(0.5 if moment is None else min(0.5, moment - time.perf_counter()))
                self._wake.clear()
                continue
            with self._lock:
                self._moments.remove(moment)
            try:
                snapshot = self._stats()
            except (DbladderError, OSError):
                continue  # a level without a breakdown; the figures say "not measured"
            with self._lock:
                self._taken[moment] = snapshot

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=5)


def check_idle() -> dict[str, Any]:
    """Watch the machine for a moment before the run; the result goes into the run's flags.

    Two seconds unless DBLADDER_IDLE_CHECK_SECONDS says otherwise (between 0.1 and 60).
    """
    return idle_check(idle_check_seconds())


def idle_check_seconds() -> float:
    """How long a run watches the machine before it starts, or UsageError naming the bad setting."""
    return seconds_setting(IDLE_CHECK_VARIABLE, IDLE_CHECK_SECONDS, 0.1, 60)


class SyscallCounter:
    """Counts each group's system calls for a few seconds inside every level's measured window
    (the bpftrace measurement of "Postgres vs SQLite under load", made repeatable), on a thread of its own."""

    def __init__(
        self, groups: dict[str, Callable[[], list[int]]], levels: Sequence[PlannedLevel], origin: float
    ):
        self._groups = groups
        self._origin = origin
        self._windows = [(level.index, origin + level.measured_from, origin + level.end) for level in levels]
        self._added = threading.Event()
        self.counts: dict[int, dict[str, Any]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dbladder-syscalls", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def add(self, level: PlannedLevel) -> None:
        """Count in this level's window too (a search's probe, known only as it starts)."""
        self._windows.append((level.index, self._origin + level.measured_from, self._origin + level.end))
        self._added.set()

    def stop(self) -> None:
        self._stop.set()
        self._added.set()
        self._thread.join(timeout=SYSCALL_SECONDS + 10)

    def _run(self) -> None:
        done = 0
        while not self._stop.is_set():
            if done == len(self._windows):
                self._added.wait(0.5)
                self._added.clear()
                continue
            index, start, end = self._windows[done]
            done += 1
            # Start half a second into the window and leave a second at its end: the tracer takes
            # a moment to attach and to let go.
            seconds = min(SYSCALL_SECONDS, end - start - 1.5)
            if seconds <= 0.5 or self._stop.wait(max(0.0, start + 0.5 - time.perf_counter())):
                if self._stop.is_set():
                    return
                continue
            result = count_syscalls(self._groups, seconds)
            if result is not None:
                self.counts[index] = result


class RunObserver:
    """The machine and the service during one run; see the module notes."""

    def __init__(
        self,
        engine_info: EngineInfo,
        url: DatabaseURL,
        data_path: str | None,
        precise_clock: bool,
        syscalls: bool = False,
    ):
        self.engine_info = engine_info
        self.data_path = data_path
        self.precise_clock = precise_clock
        self.idle: dict[str, Any] | None = None
        self.database = database_processes(url)
        self._sampler: Sampler | None = None
        self._loops: LoopSampler | None = None
        self._poller: StatsPoller | None = None
        self._origin = 0.0
        self._level_flags: list[list[str]] = []
        self._syscalls = syscalls
        self._counter: SyscallCounter | None = None
        self._started = 0.0
        self._known: set[int] = set()
        self._storage: StatsPoller | None = None
        # The database whose reads from memory and from disk are counted per level (set by the round).
        self.storage_url: DatabaseURL | None = None
        self.diagnosis: LevelDiagnosis | None = None
        """The activity probe and each level's diagnosis (diagnose.py), when the round gives one."""
        self.hosts: Callable[[float, float], dict[str, dict[str, Any]]] | None = None
        """A cluster's other hosts over a level's window (its time.perf_counter() bounds), by
        agent name (dbladder.cluster: `Cluster.host_figures`); None on one machine."""
        self.clocks: Callable[[float, float], dict[str, Any]] | None = None
        """A cluster's clock offsets measured for a level, from its start and its measured
        window's (dbladder.cluster: `Cluster.level_clocks`); None on one machine."""

    def environment(self) -> dict[str, Any]:
        return environment(self.data_path, self.engine_info)

    @staticmethod
    def _other_hosts(row: dict[str, Any], hosts: dict[str, dict[str, Any]]) -> None:
        """A cluster's hosts in the level's row (`hosts`). The database's CPU is the db agent's
        sample of the server's processes on its host; where it found none, the host's busy share
        times its cores (in % of one CPU, as a process group's is). The service's CPU is the app
        agent's sample of its session. Neither runs on this machine."""
        if not hosts:
            return
        row["hosts"] = hosts
        machine = row.get("machine")
        if machine is None:
            return
        for role, group in (("db", "database"), ("app", "service")):
            name = next((name for name, figures in hosts.items() if figures["role"] == role), None)
            if name is None:
                continue
            figures = hosts[name]
            if not figures.get("measured", True):  # this machine's own group would be another's, or none
                machine.pop(f"{group}_cpu_pct", None)
                machine[f"{group}_cpu_from"] = f"not measured: {role} agent {name}'s {figures['cause']}"
            elif f"{group}_cpu_pct" in figures:
                machine[f"{group}_cpu_pct"] = figures[f"{group}_cpu_pct"]
                machine[f"{group}_cpu_from"] = f"the {group}'s processes on {role} agent {name}"
            elif role == "db":
                machine["database_cpu_pct"] = figures["busy"] * (figures["cores"] or 1)
                machine["database_cpu_from"] = f"the host of db agent {name}"

    def start(
        self,
        levels: Sequence[PlannedLevel],
        origin: float,
        generator: Callable[[], list[int]],
        service_pid: int | Callable[[], int] | None,
        stats: Callable[[], dict[str, Any]] | None,
    ) -> None:
        """Sample the generator, the service (its whole session) and the database from now on.

        `service_pid` may be a function giving the service's current PID: a fault that kills or
        restarts the service (`faults.py`) starts it as another process, whose session is followed.
        """
        self._origin = origin
        self._started = time.perf_counter()
        self._known = {level.index for level in levels}
        groups: dict[str, Callable[[], list[int]]] = {
            "generator": generator,
            "service": _session_of(service_pid) if service_pid is not None else nothing,
            "database": self.database,
        }
        # The service's processes by role (its workers, the SQLite writer): a service held to one
        # core of its two may be one worker busy and the other idle.
        self._sampler = Sampler(groups, interval=SAMPLE_INTERVAL, labelers={"service": service_process_role})
        self._sampler.start()
        if service_pid is not None:  # what held each of the service's event loops (observe/loops.py)
            self._loops = LoopSampler(groups["service"], service_process_role)
            self._loops.start()
        if self.diagnosis is not None:
            self.diagnosis.start(origin)
        if self._syscalls and syscall_tool() is not None:
            self._counter = SyscallCounter(groups, levels, origin)
            self._counter.start()
        moments = [origin + edge for level in levels for edge in (level.measured_from, level.end)]
        if stats is not None:
            self._poller = StatsPoller(stats, moments)
            self._poller.start()
        if self.storage_url is not None:
            # Who reads the database's files: a server's processes; for SQLite, the processes it
            # runs inside (the service's, or in direct mode the generator's).
            readers = (
                groups["database"]
                if self.storage_url.kind.has_server
                else (groups["service"] if service_pid is not None else generator)
            )
            self._storage = StatsPoller(storage_reader(self.storage_url, readers), moments)
            self._storage.start()

    def latest_cpu(self) -> dict[str, float | None]:
        """The latest sample's CPU per role (% of one core) and its end ("time", on the run's clock);
        empty before the first sample. For a live view: one sample read, nothing computed."""
        samples = self._sampler.samples() if self._sampler is not None else []
        if not samples:
            return {}
        latest = samples[-1]
        cpu: dict[str, float | None] = {"time": latest.t - self._origin}
        return cpu | {role: figures.cpu_pct for role, figures in latest.groups.items()}

    def watch(self, level: PlannedLevel) -> None:
        """Watch a level as it starts: one not known at `start` (a search's probe) has the service's
        /stats read and its system calls counted at its window's edges, as those known were."""
        if level.index in self._known:
            return
        self._known.add(level.index)
        edges = [self._origin + level.measured_from, self._origin + level.end]
        if self._poller is not None:
            self._poller.add(edges)
        if self._storage is not None:
            self._storage.add(edges)
        if self._counter is not None:
            self._counter.add(level)

    def level(self, snapshot: dict[str, Any], row: dict[str, Any], pass_p95_ms: float | None = None) -> None:
        """Add the level's machine figures, service breakdown and flags to its row; `pass_p95_ms`,
        the pass mark's p95, sets the schedule lag's flag in proportion (observe/flags.py)."""
        start = self._origin + snapshot["start"] + snapshot["warmup"]
        end = self._origin + snapshot["start"] + snapshot["hold"]
        sampler = self._sampler
        if sampler is not None:
            # A sample ending at the window's end now, not at the next tick up to an interval on.
            sampler.cover(end)
            # Per-request costs divide by the requests the service answered in the window (any
            # status), not by every request due: dropped ones never reached it.
            row["machine"] = summarise(sampler.samples(), start, end, row.get("served", row["requests"]))
            if self._loops is not None:
                row["machine"]["service_loops"] = self._loops.shares(start, end)
        if self.clocks is not None:
            row["clocks"] = self.clocks(self._origin + snapshot["start"], start)
        if self.hosts is not None:
            self._other_hosts(row, self.hosts(start, end))
        if self._poller is not None:
            before, after = self._poller.at(start), self._poller.at(end)
            if before is not None and after is not None:
                # A worker restarted between the two: the level simply has no breakdown.
                with contextlib.suppress(NoTiming):
                    row["service_breakdown"] = service_breakdown(before, after)
                # A workload that counts its own queries (an ORM): the level's per operation.
                counted = query_rows(difference(before.get("queries"), after.get("queries")))
                if counted is not None:
                    row["queries"] = counted
        if self._storage is not None:
            reads = window(self._storage.at(start), self._storage.at(end))
            if reads is not None:
                row["storage"] = reads
        counted = self._counter.counts.get(snapshot["index"]) if self._counter else None
        if counted is not None:
            # Requests answered while the tracer counted: the answers per second of the window
            # (any status, by arrival) over the counted seconds.
            measured = max(row["hold_s"] - row["warmup_s"], 1e-9)
            rate = row.get("served", row["requests"]) / measured
            served = round(rate * counted.get("seconds", SYSCALL_SECONDS))
            row["syscalls"] = {
                "tool": counted.get("tool"),
                "seconds": counted.get("seconds"),
                "per_request": per_request(counted, served),
            }
        flags = level_flags(
            row.get("machine") or {},
            snapshot,
            syscalls=counted,
            max_generator_cpu_share=None if self.precise_clock else 0.9,
            pass_p95_ms=pass_p95_ms,
        )
        row["flags"] += flags
        self._level_flags.append(flags)
        if self.diagnosis is not None:  # last: it reads the machine's figures and the breakdown
            moments = machine_moments(sampler.samples(), start, end) if sampler is not None else []
            self.diagnosis.level(row, moments)

    def stop(self) -> tuple[list[str], list[dict[str, Any]]]:
        """Stop watching; the run's flags and its per-second samples (rows for timeseries.csv)."""
        if self._poller is not None:
            self._poller.stop()
        if self._storage is not None:
            self._storage.stop()
        if self._counter is not None:
            self._counter.stop()
        if self._loops is not None:
            self._loops.stop()
        if self.diagnosis is not None:
            self.diagnosis.stop()
        rows: list[dict[str, Any]] = []
        run_summary = None
        if self._sampler is not None:
            samples = self._sampler.stop()
            rows = self._sampler.to_rows(self._origin)
            if samples and samples[-1].t > self._started:
                run_summary = summarise(samples, self._started, samples[-1].t, 0)
        memory, _ = database_memory(self.engine_info.to_dict(), psutil.virtual_memory().total)
        dataset = data_size_bytes(self.data_path) if self.data_path else None
        flags = run_flags(
            self.idle,
            run_summary=run_summary,
            dataset_bytes=dataset,
            database_memory_bytes=memory,
            levels=self._level_flags,
            database_warning=self.database.warning,
        )
        if self.diagnosis is not None:
            flags += self.diagnosis.warnings
        return flags, rows


def _session_of(pid: int | Callable[[], int]) -> Callable[[], list[int]]:
    """The live processes of a session, its leader given as a PID or as a function of the moment."""
    if not callable(pid):
        return session(pid)
    return lambda: session(pid())()
