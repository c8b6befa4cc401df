"""Faults on purpose: kill or restart the service or the database server in the middle of a level.

    --fault kill-db@3:10        level 3, 10 seconds after it starts (its warm-up included)
    --fault kill-service@2      level 2, in the middle of its hold

    faults = parse_faults(["kill-db@3:10"])
    problems = fault_problems(faults, ...)      # before the run: a fault dbladder may not cause
    with FaultInjector(faults, levels, origin, actions, probe) as injector:
        ... the load ...
    injector.records                             # what happened, for the result

The load goes on through a fault: the level shows the outage (its failures by cause), and the
fault's record says how long the action took and how long until a real request was answered
again (`back_after_s`, found by sending one of the workload's reads every PROBE_INTERVAL seconds
until it succeeds). The integrity check after the run says what survived.

Permission: dbladder only stops what it owns. The service must be one the run started (not
`--service URL`); the database server must be a managed one (`managed:postgresql`, or a URL
from `dbladder db start`), which `dbladder.servers.fault_permission` decides; SQLite has no
server, and the process that holds its data is the service (`kill-service`, `kill-writer`). A
fault that is not allowed is refused with one line before the run starts. With `--cluster` each
fault acts on the machine of what it stops, through its agent (cluster_faults.py).
"""

from __future__ import annotations

import asyncio
import http.client
import math
import random
import re
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psutil

from ..engine_registry import engine_kind, run_settings
from ..engines import opened
from ..engines.base import EngineOptions
from ..errors import DbladderError, UsageError
from ..plans import PlannedLevel
from ..report.integrity import fault_line
from ..servers import ManagedServer, fault_permission, is_managed_spec
from ..urls import DatabaseURL

if TYPE_CHECKING:  # the service (granian, numpy) is imported when a fault runs, not with the config
    from ..service.server import RunningService
from ..workloads.base import Draw, Sizes, Workload

KINDS = {
    "kill-service": "kill -9 of every process of the service (granian, its workers, the SQLite writer), "
    "then the service started again on the same port",
    "restart-service": "the service stopped with SIGTERM (requests in flight finish) and started again",
    "kill-db": "kill -9 of the database server (PostgreSQL: the postmaster and every backend; MariaDB: "
    "mariadbd), then started again on the same data: crash recovery",
    "restart-db": "the database server stopped cleanly and started again",
    "kill-writer": "kill -9 of the service's single SQLite writer process; the service starts another",
}
PROBE_INTERVAL = 0.02
"""Seconds between probes while waiting for answers to come back after a fault."""
PROBE_LIMIT = 120.0
"""Seconds after a fault after which the probe gives up: answers did not come back."""
PROBE_AFTER_LOAD = 30.0
"""Seconds the probe goes on after the load has ended (a fault late in the last level)."""
_SYNTAX = re.compile(r"^([a-z-]+)@(\d+)(?::(\d+(?:\.\d+)?))?$")


class BadFault(UsageError):
    """A --fault that cannot be read, or names a level or second the run does not have."""


class FaultRefused(UsageError):
    """A fault dbladder may not cause: a server or service it did not start, or none to stop."""


@dataclass(frozen=True)
class Fault:
    """One fault: its kind, the level (from 1) and the second into that level (None: mid-hold)."""

    kind: str
    level: int
    second: float | None = None

    @property
    def text(self) -> str:
        return f"{self.kind}@{self.level}" + ("" if self.second is None else f":{self.second:g}")

    def offset(self, levels: Sequence[PlannedLevel]) -> float:
        """Seconds from the run start at which it strikes."""
        level = levels[self.level - 1]
        return level.start + (level.hold / 2 if self.second is None else self.second)


def parse_fault(text: str) -> Fault:
    """`KIND@LEVEL[:SECOND]` as a Fault; BadFault saying what is wrong."""
    match = _SYNTAX.match(text.strip().lower())
    if match is None:
        raise BadFault(
            f"--fault takes KIND@LEVEL[:SECOND], e.g. kill-db@3:10, not {text!r}; kinds: {', '.join(KINDS)}"
        )
    kind, level, second = match.groups()
    if kind not in KINDS:
        raise BadFault(f"unknown fault {kind!r} in {text!r}; kinds: {', '.join(KINDS)}")
    return Fault(kind, int(level), None if second is None else float(second))


def parse_faults(texts: Sequence[str]) -> tuple[Fault, ...]:
    """Every --fault, in the order given."""
    return tuple(parse_fault(text) for text in texts)


def _one_writer_options() -> str:
    """How to ask for one writer process: the engines' settings that start one (--sqlite-writers 1)."""
    options = [f"{setting.option} 1" for setting, _ in run_settings().values() if setting.writer_processes]
    return "use " + " or ".join(options) if options else "no engine here takes one"


def fault_problems(
    faults: Sequence[Fault],
    *,
    db_url: str | DatabaseURL,
    target: str,
    service_url: str | None,
    writer_processes: int,
    levels: Sequence[PlannedLevel],
    engine: str | None,
    on_agents: bool = False,
) -> list[str]:
    """Every reason a fault of this run cannot be caused, one line each (empty: all may go ahead).

    `db_url` may be a `managed:` text: a server the run starts itself may always be stopped; a URL
    comes parsed when the caller has parsed it already. With `on_agents` (a cluster run) the server
    is stopped by the db agent on its machine, which says whether it may once the run has reached
    it (cluster_faults.py); a `managed:` server would be started on this machine, where no db
    agent acts, so it is refused.
    """
    problems = []
    for fault in faults:
        where = f"--fault {fault.text}"
        if not 1 <= fault.level <= len(levels):
            problems.append(f"{where}: the run has levels 1 to {len(levels)}, not {fault.level}")
        elif fault.second is not None and not 0 <= fault.second < levels[fault.level - 1].hold:
            hold = levels[fault.level - 1].hold
            problems.append(
                f"{where}: the second must be from 0 to below the level's {hold:g} s, not {fault.second:g}"
            )
        own_service = target == "http" and service_url is None
        if fault.kind in ("kill-service", "restart-service", "kill-writer") and not own_service:
            problems.append(
                f"{where}: "
                + (
                    "direct mode has no service to stop"
                    if target != "http"
                    else f"the load goes to {service_url}, a service this run did not start; "
                    "dbladder only stops the service it starts"
                )
            )
        elif fault.kind == "kill-writer" and writer_processes != 1:
            problems.append(f"{where}: there is no single writer process to kill ({_one_writer_options()})")
        if fault.kind in ("kill-db", "restart-db"):
            if engine is not None and engine_kind(engine).in_process:
                problems.append(
                    f"{where}: {engine_kind(engine).label} has no server; its data lives in the "
                    "service's processes (kill-service, kill-writer)"
                )
            elif on_agents and isinstance(db_url, str) and is_managed_spec(db_url):
                problems.append(
                    f"{where}: with --cluster the db agent stops the server on its own machine; "
                    f"{db_url} would start one on this machine: start a managed server on the "
                    "database's machine (`dbladder db start ENGINE --host ADDRESS` there) and give its URL"
                )
            elif not (isinstance(db_url, str) and is_managed_spec(db_url)) and not on_agents:
                reason = fault_permission(db_url)
                if reason is not None:
                    problems.append(f"{where}: {reason}")
    return problems


# ---------------------------------------------------------------------------------------------
# Probing: is a real request answered?


def http_probe(host: str, port: int, workload: Workload, sizes: Sizes) -> Callable[[], bool]:
    """A probe that GETs one of the workload's reads from the service (its /healthz if it has no
    read): True when it is answered 2xx within a second."""
    path = "/healthz"
    draw = Draw(random.Random(0).random)
    for operation in workload.operations:
        if operation.method == "GET" and not operation.write:
            path = operation.render(operation.draw(draw, sizes))[0]
            break

    from ..service.server import http_request

    def probe() -> bool:
        try:
            return 200 <= http_request(host, port, "GET", path, timeout=1.0).status < 300
        except (OSError, http.client.HTTPException):
            return False

    return probe


def direct_probe(db_url: str | DatabaseURL, workload: Workload, sizes: Sizes) -> Callable[[], bool]:
    """A probe that runs one of the workload's reads on a new connection: True when it succeeds."""
    draw = Draw(random.Random(0).random)
    reads = [operation for operation in workload.operations if not operation.write]

    async def once() -> bool:
        options = EngineOptions(pool_size=1, pool_timeout=1.0, connect_timeout=1.0)
        async with opened(db_url, options) as engine:
            if not reads:
                return True  # connected: as far as the probe can tell without writing
            context = await workload.open(engine)
            try:
                answer = await reads[0].run(context, reads[0].draw(draw, sizes))
            finally:
                await workload.close(context)
            return answer.status < 300

    def probe() -> bool:
        try:
            return asyncio.run(asyncio.wait_for(once(), 2.0))
        except (DbladderError, OSError, TimeoutError):
            return False

    return probe


# ---------------------------------------------------------------------------------------------
# The actions


class FaultActions:
    """What each kind of fault does, on the service and the server this run may stop."""

    def __init__(self, service: RunningService | None = None, server: ManagedServer | None = None):
        self.service = service
        self.server = server
        self.noted: dict[str, Any] = {}
        """What the last action adds to its fault's record beside its detail: on a cluster, the
        agent that acted (cluster_faults.py); nothing on one machine."""

    def run(self, kind: str) -> str:
        """Cause the fault; one sentence saying what was done. DbladderError if it could not be."""
        action = getattr(self, "_" + kind.replace("-", "_"))
        result: str = action()
        return result

    def _need_service(self) -> RunningService:
        if self.service is None:
            raise FaultRefused("this run started no service")
        return self.service

    def _need_server(self) -> ManagedServer:
        if self.server is None:
            raise FaultRefused("this run has no managed database server to stop")
        return self.server

    def _kill_service(self) -> str:
        service = self._need_service()
        killed = service.kill()
        seconds = service.start_again()
        return f"SIGKILL to the service's {killed} processes; started again in {seconds:.2f} s"

    def _restart_service(self) -> str:
        service = self._need_service()
        began = time.monotonic()
        service.stop()
        stopped = time.monotonic() - began
        seconds = service.start_again()
        return f"the service stopped (SIGTERM) in {stopped:.2f} s and started again in {seconds:.2f} s"

    def _kill_db(self) -> str:
        server = self._need_server()
        server.kill()
        seconds = server.start()
        return (
            f"{server.kind.title} server {server.name} killed (SIGKILL to it and every process it "
            f"started) and started again in {seconds:.2f} s (crash recovery)"
        )

    def _restart_db(self) -> str:
        server = self._need_server()
        seconds = server.restart()
        return (
            f"{server.kind.title} server {server.name} stopped cleanly and started again in {seconds:.2f} s"
        )

    def _kill_writer(self) -> str:
        service = self._need_service()
        writers = [
            process["pid"]
            for process in service.stats()["processes"]
            if process["role"] == "writer" and process["alive"]
        ]
        # Only a process of the service this run started, checked again just before the signal.
        ours = set(psutil.Process(service.pid).children(recursive=True)) if writers else set()
        pids = [pid for pid in writers if any(child.pid == pid for child in ours)]
        if not pids:
            raise FaultRefused("the service has no live SQLite writer to kill")
        for pid in pids:
            psutil.Process(pid).send_signal(signal.SIGKILL)
        return f"SIGKILL to the SQLite writer (PID {pids[0]}); the service starts another"


# ---------------------------------------------------------------------------------------------
# The injector


class FaultInjector:
    """Causes each fault at its time on the run's clock, in a thread, and probes until answers come back.

    `origin` is the run start (time.perf_counter(), as `Fleet.origin`). `records` holds one dict per
    fault, in time order: kind, level, second, the time it struck (`at_s`, from the run start), the
    seconds the action took, `back_after_s` and a sentence of what was done (or the error).
    """

    def __init__(
        self,
        faults: Sequence[Fault],
        levels: Sequence[PlannedLevel],
        origin: float,
        actions: FaultActions,
        probe: Callable[[], bool],
    ):
        self.faults = sorted(faults, key=lambda fault: fault.offset(levels))
        self.levels = levels
        self.origin = origin
        self.actions = actions
        self.probe = probe
        self.records: list[dict[str, Any]] = [
            {
                "fault": fault.text,
                "kind": fault.kind,
                "level": fault.level - 1,
                "second": round(fault.offset(levels) - levels[fault.level - 1].start, 3),
                "state": "not reached",
            }
            for fault in self.faults
        ]
        self._stop = threading.Event()
        self._stopped_at = math.inf
        self._thread = threading.Thread(target=self._run, name="dbladder-faults", daemon=True)

    def __enter__(self) -> FaultInjector:
        if self.faults:
            self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self, timeout: float = PROBE_LIMIT) -> None:
        """Stop waiting for faults not yet due; a fault under way is finished, and its probe goes on
        for at most PROBE_AFTER_LOAD seconds more."""
        self._stopped_at = time.perf_counter()
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def records_for(self, level: int) -> list[dict[str, Any]]:
        """The faults that struck in level `level` (from 0)."""
        return [record for record in self.records if record["level"] == level]

    def _run(self) -> None:
        for fault, record in zip(self.faults, self.records, strict=True):
            due = self.origin + fault.offset(self.levels)
            while not self._stop.is_set() and time.perf_counter() < due:
                self._stop.wait(min(0.05, max(0.0, due - time.perf_counter())))
            if self._stop.is_set():
                return
            self._strike(fault, record)

    def _strike(self, fault: Fault, record: dict[str, Any]) -> None:
        began = time.perf_counter()
        record["at_s"] = round(began - self.origin, 3)
        record["state"] = "striking"
        try:
            record["detail"] = self.actions.run(fault.kind)
        except (DbladderError, OSError, psutil.Error) as exc:
            record["state"] = "failed"
            record["error"] = str(exc)
            record["action_s"] = round(time.perf_counter() - began, 3)
            record.update(self.actions.noted)
            return
        record["action_s"] = round(time.perf_counter() - began, 3)
        record.update(self.actions.noted)
        record["state"] = "done"
        # From the moment it struck until a real request was answered again.
        while time.perf_counter() < min(began + PROBE_LIMIT, self._stopped_at + PROBE_AFTER_LOAD):
            if self.probe():
                record["back_after_s"] = round(time.perf_counter() - began, 3)
                return
            time.sleep(PROBE_INTERVAL)
        record["back_after_s"] = None


def describe(records: Sequence[dict[str, Any]]) -> list[str]:
    """One line per fault, for the terminal and the report (`report.integrity.fault_line`)."""
    return [fault_line(record) for record in records]
