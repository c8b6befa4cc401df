"""Faults on a cluster (`run --cluster --fault ...`): each one acts where what it stops runs.

kill-service, restart-service and kill-writer act on the service the app agent started, on its
machine and by its PIDs there (`AppAgent.on_service`); kill-db and restart-db on the managed
server on a db agent's machine (`DbAgent.run_here`), which must be one dbladder started there:
`dbladder.servers.fault_permission` is asked on that machine, before anything is seeded. Without
an app agent the service runs on this machine, and its faults act here as on one machine.

The coordinator keeps the time: its FaultInjector strikes at the fault's moment in the level's
time as it set it (the run start it sent every agent, on its own clock), the call reaches the
agent within its one-way time (about a millisecond on a LAN), and the probe that times the
outage (`back_after_s`) is sent from the coordinator as on one machine. The record names the agent
that acted and when it began by the agent's own clock, placed on the coordinator's by the
agent's measured offset (`agent_at_s`, from the run start).

The functions that act are sent to the agents by reference and run there; this module imports no
Dask.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..cluster import clocks
from ..errors import DbladderError
from ..servers import ManagedServer, fault_permission, server_for_url
from ..types import JsonObject
from .agent_data import agent_words
from .faults import Fault, FaultActions, FaultRefused

if TYPE_CHECKING:
    from ..cluster.coordinator import Agent, Cluster
    from ..service.server import RunningService

SERVICE_KINDS = ("kill-service", "restart-service", "kill-writer")
SERVER_KINDS = ("kill-db", "restart-db")
ACTION_TIMEOUT = 180.0
"""Seconds an agent may take to cause a fault: a kill and a start again (a server's crash
recovery, a service's workers coming up)."""


class FaultCallFailed(DbladderError):
    """The call to the agent that was to cause a fault failed (the agent is gone or hung)."""


# ---------------------------------------------------------------------------------------------
# On the agent's machine


def service_fault_here(kind: str, service: RunningService) -> dict[str, Any]:
    """On the app agent: cause `kind` on the service it runs; what was done, and when it began by
    this agent's clock."""
    began = clocks.agent_clock()
    return {"detail": FaultActions(service=service).run(kind), "began": began}


def server_fault_here(db_url: str, kind: str) -> dict[str, Any]:
    """On a db agent: cause `kind` on the managed server behind `db_url` on this machine (checked
    again just before, as the run's first check was made minutes ago); as `service_fault_here`."""
    reason, server = _managed_server_here(db_url)
    if server is None:
        raise FaultRefused(reason or f"no managed server behind {db_url} on this machine")
    began = clocks.agent_clock()
    return {"detail": FaultActions(server=server).run(kind), "began": began}


def server_here(db_url: str) -> tuple[str | None, dict[str, Any] | None]:
    """On a db agent: why the server behind `db_url` may not be stopped from this machine (None: it
    may), and its record when it may."""
    reason, server = _managed_server_here(db_url)
    return reason, server.record() if server is not None else None


def _managed_server_here(db_url: str) -> tuple[str | None, ManagedServer | None]:
    """Why the server behind `db_url` may not be stopped from this machine, or the server."""
    reason = fault_permission(db_url)
    return reason, server_for_url(db_url) if reason is None else None


# ---------------------------------------------------------------------------------------------
# On the coordinator


def server_agent(
    cluster: Cluster, faults: Sequence[Fault], db_url: str
) -> tuple[Agent | None, JsonObject | None]:
    """The db agent that stops the run's server, with the server's record (None, None when no
    fault stops a server). FaultRefused, one line, when none may: no db agent, or none on the
    machine of a managed server behind `db_url`."""
    struck = [fault.text for fault in faults if fault.kind in SERVER_KINDS]
    if not struck:
        return None, None
    where = "--fault " + ", ".join(struck)
    agents = cluster.placed("db")
    if not agents:
        raise FaultRefused(
            f"{where}: with --cluster the database server is stopped by the db agent on its machine, "
            f"and no db agent is connected to {cluster.address}: start `dbladder agent --scheduler "
            f"{cluster.address} --role db` on the server's machine"
        )
    reasons = []
    for agent in agents:
        reason, record = cluster.run_here(agent, functools.partial(server_here, db_url))
        if reason is None:
            return agent, record
        reasons.append(f"{agent_words(agent)}: {reason}")
    raise FaultRefused(
        f"{where}: no db agent is on the machine of a managed server it may stop: " + "; ".join(reasons)
    )


class AgentFaultActions(FaultActions):
    """The faults of a cluster run: the service's on the app agent (`app_agent`; None: the service
    is this machine's, `service`), the server's on the db agent `db_agent`
    (dbladder.cluster.coordinator's `Agent`s). `origin` is the run start (this process's
    time.perf_counter())."""

    def __init__(
        self,
        cluster: Cluster,
        origin: float,
        db_url: str,
        app_agent: Agent | None = None,
        db_agent: Agent | None = None,
        service: RunningService | None = None,
    ):
        super().__init__(service=service)
        self.cluster = cluster
        self.origin = origin
        self.db_url = db_url
        self.app_agent = app_agent
        self.db_agent = db_agent

    def run(self, kind: str) -> str:
        self.noted = {}
        if kind in SERVICE_KINDS and self.app_agent is None:
            return super().run(kind)  # the service runs on this machine
        agent = self.app_agent if kind in SERVICE_KINDS else self.db_agent
        if agent is None:
            raise FaultRefused("no db agent may stop this run's database server")
        self.noted = {"agent": agent.name, "agent_role": agent.role, "agent_host": agent.machine["host"]}
        words = agent_words(agent)
        try:
            done = self._cause(agent, kind)
        except DbladderError as exc:  # refused or failed there: said as it was
            raise FaultCallFailed(f"on {words}: {exc}") from None
        except Exception as exc:  # the agent gone or hung: Dask's own errors
            from ..cluster.coordinator import cause_of  # a cluster run: Dask is loaded

            raise FaultCallFailed(f"on {words}: {cause_of(exc)}") from None
        offset = self.cluster.clocks_at(time.perf_counter())[agent.name].offset
        self.noted["agent_at_s"] = round(done["began"] - offset - self.origin, 3)
        return f"on {words}: {done['detail']}"

    def _cause(self, agent: Agent, kind: str) -> JsonObject:
        """`kind` caused on `agent`'s machine: on the service it runs, or on the server there."""
        if kind in SERVICE_KINDS:
            return self.cluster.on_service(agent, functools.partial(service_fault_here, kind), ACTION_TIMEOUT)
        return self.cluster.run_here(
            agent, functools.partial(server_fault_here, self.db_url, kind), ACTION_TIMEOUT
        )
