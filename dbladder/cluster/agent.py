"""`dbladder agent`: a Dask worker on this machine carrying dbladder's agent for its role.

The coordinator finds the agents by asking every worker `describe()` (Client.run) and places one
actor on each of the run's agents, pinned to it: a `LoadAgent` runs today's generator fleet
(dbladder.load.fleet) unchanged, with the run's parts it was given, from the run start the
coordinator translated into this machine's clock, and hands over its levels' snapshots, live views
and acknowledged writes when polled; a db or app agent samples its host (sampled.py). The worker runs
in this process (no nanny): a `kill -9` of the agent ends its worker, and the generator
processes end with it (`child._end_with_parent`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import dask
from distributed import Worker
from distributed.utils import get_ip

from ..errors import DbladderError, UsageError
from ..load.fleet import Fleet, LevelDone, ProcessSpec
from ..plans import PlannedLevel
from . import clocks
from .joining import VersionsDiffer, check_tls, refused_versions, startup_information
from .security import check_cleartext, security
from .settings import DASK_SETTINGS, agent_versions, machine, version_words

SCHEDULER_WAIT = 5.0
"""Seconds an agent waits for its scheduler to answer before it gives up."""

_AGENT: dict[str, str] = {}
"""This process's role and name, set by `run_agent`: what `describe` answers."""


class AgentRefused(UsageError):
    """The scheduler refused this agent (its name is taken)."""


class SchedulerUnreachable(DbladderError):
    """No scheduler answered at the address given."""


def describe() -> dict[str, Any]:
    """What this worker is, as the coordinator asks every worker (Client.run): a plain Dask worker
    has no role."""
    return {
        "role": _AGENT.get("role"),
        "name": _AGENT.get("name"),
        "versions": agent_versions(),
        "machine": machine(),
    }


class LoadAgent:
    """A Dask actor on a load agent: one generator fleet for the run, driven by the coordinator.

    `launch` starts the fleet's processes and waits until they are ready; `release` lets them go
    at the run start, given in this agent's clock (the coordinator's origin plus the measured
    offset); `start_level` runs a level chosen on the way (a search's probe); `poll` hands over
    what happened since the last poll. A thread follows the fleet's events meanwhile, so a poll
    never waits on the generator processes.
    """

    def __init__(self) -> None:
        self._fleet: Fleet | None = None
        self._events: list[tuple[Any, ...]] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._follower: threading.Thread | None = None

    async def clock(self) -> float:
        """This machine's clock (async: answered on the worker's loop, with no thread hop)."""
        return clocks.agent_clock()

    def launch(self, spec: ProcessSpec, processes: int) -> dict[str, Any]:
        """Start the fleet's processes; once every one is ready (or failed), which did fail."""
        self._fleet = Fleet(spec, processes)
        self._fleet.launch()
        return {"errors": dict(self._fleet.errors), "pids": self._fleet.pids}

    def release(self, origin: float) -> None:
        """Start the schedule at `origin`, in this agent's clock (`clocks.agent_clock`)."""
        fleet = self._checked()
        fleet.release(origin - clocks.shift())
        self._follower = threading.Thread(target=self._follow, name="fleet-events", daemon=True)
        self._follower.start()

    def start_level(self, level: PlannedLevel) -> PlannedLevel:
        """Run `level` (its start already set by the coordinator, from the run start); as run."""
        return self._checked().start_level(level, start_delay=0.0)

    def _follow(self) -> None:
        fleet = self._checked()
        while not self._closing.is_set():
            followed = False
            for event in fleet.events():
                followed = True
                entry = (
                    ("level", event.index, event.level)
                    if isinstance(event, LevelDone)
                    else ("live", event.to_dict())  # shallow: asdict deep-copies its seconds' histograms
                )
                with self._lock:
                    self._events.append(entry)
                if self._closing.is_set():
                    return
            if fleet.errors or fleet.finished:
                return
            if not followed:
                time.sleep(0.05)  # no level outstanding: the next comes with start_level

    def poll(self) -> dict[str, Any]:
        """The levels finished and live views since the last poll, the acknowledged writes, and the
        fleet's first failure (one line) if a process failed."""
        fleet = self._checked()
        with self._lock:
            events, self._events = self._events, []
        return {"events": events, "acknowledged": fleet.acknowledged.take(), "failure": fleet.failure()}

    def stop(self) -> None:
        if self._fleet is not None:
            self._fleet.stop()

    def finish(self) -> dict[str, Any]:
        """Wait (bounded) for the processes' final snapshots; the fleet's merged one and the last
        acknowledged writes. The fleet's processes have ended when it returns."""
        fleet = self._checked()
        self._closing.set()
        if self._follower is not None:
            self._follower.join(timeout=5)
        try:
            final = fleet.finish()
            return {"final": final, "acknowledged": fleet.acknowledged.take()}
        finally:
            fleet.__exit__()

    def close(self) -> None:
        """End the fleet's processes (a run that failed before `finish`)."""
        self._closing.set()
        if self._fleet is not None:
            self._fleet.__exit__()

    def _checked(self) -> Fleet:
        if self._fleet is None:
            raise RuntimeError("the load agent has no fleet: launch it first")
        return self._fleet


def run_agent(
    scheduler: str, role: str, name: str, announce: Callable[[str], None], tls: Path | None = None
) -> None:
    """Serve as this machine's agent for `role` until the scheduler goes away or Ctrl-C; over TLS
    with the files in `tls` (dbladder.cluster.security). It listens on the address this machine
    reaches the scheduler from, refused in clear if that is neither loopback nor private."""
    host = get_ip(urlsplit(scheduler).hostname or "127.0.0.1")
    check_cleartext("this agent would listen", host, tls)
    dask.config.set(DASK_SETTINGS)
    logging.getLogger("distributed").setLevel(logging.CRITICAL)  # our one line says what happened
    _AGENT.update(role=role, name=name)
    if not check_tls(scheduler, tls, wait=SCHEDULER_WAIT):
        raise SchedulerUnreachable(_unreachable(scheduler))
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(scheduler, role, name, host, announce, security(tls)))


async def _serve(
    scheduler: str, role: str, name: str, host: str, announce: Callable[[str], None], secured: Any
) -> None:
    try:
        worker = Worker(
            scheduler,
            name=name,
            security=secured,
            nthreads=1,
            host=host,
            dashboard=False,
            dashboard_address=f"{host}:0",
            memory_limit=0,  # no memory manager: the generator processes are not its to spill or kill
            death_timeout=SCHEDULER_WAIT,
            startup_information=startup_information(agent_versions()),  # checked by `dbladder scheduler`
        )
        await worker
    except Exception as exc:  # Dask wraps why the worker did not start in a RuntimeError
        chain = list(_chain(exc))
        if (theirs := refused_versions(chain)) is not None:
            raise VersionsDiffer(
                f"the scheduler at {scheduler} refused this agent ({name}): it runs "
                f"{version_words(agent_versions())}, the scheduler {version_words(theirs)}: install "
                "the same versions on every machine"
            ) from None
        if any("name taken" in str(link) for link in chain):
            raise AgentRefused(
                f"an agent named {name!r} is already connected to {scheduler}: give this one another --name"
            ) from None
        if any(isinstance(link, (OSError, TimeoutError)) for link in chain):
            raise SchedulerUnreachable(_unreachable(scheduler)) from None
        raise
    announce(f"{role} agent {name} joined {scheduler} as {worker.address}")
    try:
        await worker.finished()
    finally:
        await worker.close()


def _unreachable(scheduler: str) -> str:
    return (
        f"no scheduler answered at {scheduler} within {SCHEDULER_WAIT:g} s: start one there "
        "with `dbladder scheduler`, or check the address (and --tls: the scheduler's own "
        "files, if it has them)"
    )


def _chain(exc: BaseException | None) -> Iterator[BaseException]:
    """The exception and every one it was raised from."""
    while exc is not None:
        yield exc
        exc = exc.__cause__
