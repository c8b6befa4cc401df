"""A round with each role in its place: every process of each role, read back from /proc while the
round runs (the generator's processes, the service's, a managed PostgreSQL and every backend it
forks), runs only on its role's CPUs; the result says where each role ran."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from managed_support import require_programs

from dbladder.load.fleet.parent import Fleet
from dbladder.plans import Ladder
from dbladder.result.schema import RESULT_SCHEMA, problem
from dbladder.roles import Placement, RoleLimits, format_cpus
from dbladder.run.config import RunConfig
from dbladder.run.round import run_round
from dbladder.servers import registry_root

SMALL = {"products": 2000, "orders": 5000}
CPUS = sorted(os.sched_getaffinity(0))
FIRST, LAST = CPUS[0], CPUS[-1]


def cpus_allowed(pid: int) -> set[str]:
    """Cpus_allowed_list of every thread of `pid` (empty if it has gone)."""
    found = set()
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            for line in Path(f"/proc/{pid}/task/{tid}/status").read_text().splitlines():
                if line.startswith("Cpus_allowed_list:"):
                    found.add(line.split(":", 1)[1].strip())
    except OSError:
        pass
    return found


def read_process(process: psutil.Process) -> tuple[str, set[str]] | None:
    """One reading of a process: its command, then its threads' CPUs, or None when it ended or its
    PID went to another process meanwhile. The command is read first: a child between fork and
    exec still has its parent's command and CPUs, and once it shows its own command it has
    already been placed (the hook runs before the exec)."""
    try:
        command = " ".join(process.cmdline())
        cpus = cpus_allowed(process.pid)
        if not cpus or not process.is_running():  # is_running: the same process (its start time)
            return None
    except psutil.Error:
        return None
    return command, cpus


class Watcher(threading.Thread):
    """Every process below this one, with each thread's CPUs, read every 0.1 s until stopped; and
    the generator's processes, read as soon as their fleet has started them (a sample every 0.1 s
    can miss them on a busy machine, and their command line is not theirs until they exec).

    Processes are told apart by PID and start time: the machine's PIDs wrap (32,768 here, and a
    parallel suite uses them fast), so a PID read later may be another process's. Each reading
    keeps its own command: a process seen once with the service's command is not charged the CPUs
    it had before its exec."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.seen: dict[tuple[int, float], list[tuple[str, set[str]]]] = {}
        self.generators: dict[tuple[int, float], set[str]] = {}
        self._generator_processes: list[psutil.Process] = []
        self.stopping = threading.Event()

    def fleet_started(self, fleet: Fleet) -> None:
        for pid in fleet.pids:
            try:
                process = psutil.Process(pid)
            except psutil.Error:
                continue
            self._generator_processes.append(process)
            self._read_generator(process)

    def _read_generator(self, process: psutil.Process) -> None:
        reading = read_process(process)
        if reading is not None:
            key = (process.pid, process.create_time())
            self.generators[key] = self.generators.get(key, set()) | reading[1]

    def run(self) -> None:
        me = psutil.Process()
        while not self.stopping.wait(0.1):
            for generator in list(self._generator_processes):
                self._read_generator(generator)
            for process in me.children(recursive=True):
                reading = read_process(process)
                if reading is not None:
                    self.seen.setdefault((process.pid, process.create_time()), []).append(reading)

    def cpus_of(self, *names: str) -> dict[tuple[int, float], set[str]]:
        """The CPUs read on each process while its command held one of `names`."""
        found: dict[tuple[int, float], set[str]] = {}
        for key, readings in self.seen.items():
            for command, cpus in readings:
                if any(name in command for name in names):
                    found[key] = found.get(key, set()) | cpus
        return found


@pytest.fixture
def watcher(monkeypatch: pytest.MonkeyPatch) -> Iterator[Watcher]:
    """A Watcher told of every fleet the round starts, the moment its processes are ready."""
    watching = Watcher()
    enter = Fleet.__enter__

    def entered(fleet: Fleet) -> Fleet:
        started = enter(fleet)
        watching.fleet_started(fleet)
        return started

    monkeypatch.setattr(Fleet, "__enter__", entered)
    watching.start()
    yield watching
    watching.stopping.set()
    watching.join()


def run_watched(config: RunConfig, watcher: Watcher) -> dict:
    try:
        return run_round(config).to_json()
    finally:
        watcher.stopping.set()
        watcher.join()


@pytest.mark.slow
def test_the_generator_and_the_service_run_on_their_cpus(tmp_path, watcher) -> None:
    placement = Placement(generator=RoleLimits(cpus=(FIRST,)), service=RoleLimits(cpus=(LAST,)))
    config = RunConfig(
        db_url=f"sqlite:///{tmp_path}/shop.db",
        plan=Ladder(50, 50, 2, 1.5, warmup=0.5),
        sizes=SMALL,
        workers=2,
        pool_size=8,
        out_dir=tmp_path / "out",
        placement=placement,
        integrity=False,
    )
    result = run_watched(config, watcher)
    seen = watcher.seen
    assert result["status"] == "complete", result["stopped_because"]
    assert problem(result, RESULT_SCHEMA) is None
    assert result["placement"]["generator"] == {"cpus": str(FIRST), "memory": None}
    # What the database read, level by level, and its size on disk at the start.
    assert result["storage"]["size_bytes"] > 0 and result["storage"]["memory_cap_bytes"] is None
    for level in result["levels"]:
        assert level["storage"]["disk_bytes"] is not None, level.get("storage")
        assert level["storage"]["cache_hits"] is None  # SQLite counts none
    # The report's setup table writes out where each role ran.
    report = (tmp_path / "out" / "report.md").read_text()
    assert f"generator on CPU {FIRST}; service on CPU {LAST}; database on any CPU" in report
    # The data against memory is a measured sentence, not a guess.
    assert "most likely served from memory" not in report
    measured = r"Dataset in memory \(measured\)\..*MiB on disk, is under 1 % of the machine's memory"
    assert re.search(measured, report)
    assert re.search(r"at [\d,.]+ req/s \(level \d\) [\d.]+ MiB came from disk", report)
    service = watcher.cpus_of("dbladder.service", "granian")
    assert service and watcher.generators, seen
    for process, cpus in service.items():
        assert cpus == {str(LAST)}, (process, watcher.seen[process])  # every reading, in order
    for process, cpus in watcher.generators.items():
        assert cpus == {str(FIRST)}, process


@pytest.mark.slow
def test_a_managed_server_and_its_backends_run_on_the_databases_cpus(tmp_path, watcher) -> None:
    require_programs("postgresql")
    placement = Placement(generator=RoleLimits(cpus=(FIRST,)), database=RoleLimits(cpus=(LAST,)))
    config = RunConfig(
        db_url="managed:postgresql",
        plan=Ladder(50, 50, 2, 1.5, warmup=0.5),
        sizes=SMALL,
        target="direct",
        pool_size=8,
        out_dir=tmp_path / "out",
        placement=placement,
        integrity=False,
    )
    seen_server: dict[tuple[int, float], set[str]] = {}
    registry = str(registry_root())
    try:
        # The server is not this process's child (it runs in a session of its own): found by name.
        stop = threading.Event()

        def servers() -> None:
            while not stop.wait(0.1):
                for process in psutil.process_iter(["name", "cmdline"]):
                    command = " ".join(process.info["cmdline"] or [])
                    try:
                        parent = " ".join(process.parent().cmdline()) if process.parent() else ""
                    except psutil.Error:
                        continue
                    # The machine's own PostgreSQL is not ours: only servers in dbladder's registry.
                    ours = registry in command or registry in parent
                    reading = read_process(process) if process.info["name"] == "postgres" and ours else None
                    if reading is not None:
                        key = (process.pid, process.create_time())
                        seen_server[key] = seen_server.get(key, set()) | reading[1]

        finder = threading.Thread(target=servers, daemon=True)
        finder.start()
        result = run_round(config).to_json()
    finally:
        stop.set()
        watcher.stopping.set()
        watcher.join()
    assert result["status"] == "complete", result["stopped_because"]
    assert result["placement"]["database"] == {"cpus": format_cpus([LAST]), "memory": None}
    for level in result["levels"]:
        reads = level["storage"]
        assert reads["cache_hits"] + reads["cache_misses"] > 0 and reads["disk_bytes"] is not None, reads
    assert len(seen_server) >= 1 + 8, seen_server  # the postmaster, its helpers, a backend per connection
    for cpus in seen_server.values():
        assert cpus == {str(LAST)}
    assert watcher.generators
    for cpus in watcher.generators.values():
        assert cpus == {str(FIRST)}
