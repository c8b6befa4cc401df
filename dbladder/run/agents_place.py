"""The round's place on a cluster (docs/cluster.md): the load agents send the load, the data is
seeded and checked on the agent that holds it (SQLite's file on the app agent's machine, a
server's database beside it on the db agent's; run/agent_data.py), dbladder's service runs on the
app agent with its route made there, each fault acts on the agent of what it stops
(run/cluster_faults.py), and the db and app agents' hosts are sampled where they run: the data's
half `DataOnAgents`, the load's `LoadOnAgents`. Without an agent of a role, what it would do is
done on this machine, as `DataHere` and `LoadHere` do it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from ..data.fresh import FreshData
from ..errors import UsageError
from ..load.acknowledged import AcknowledgedWrites
from ..load.fleet import Fleet, PartRange, ProcessSpec
from ..observe.database import DatabaseProcesses
from ..observe.processes import nothing
from ..result.context import MachineRecord
from ..result.level import Level
from ..servers import ManagedServer
from ..service import running_service
from ..types import JsonObject
from ..urls import DatabaseURL
from ..workloads.base import DataSpec, Workload
from .agent_data import FreshDataOnAgent, agent_words, baseline_on_agent, integrity_on_agent, prepare_on_agent
from .cluster_faults import AgentFaultActions, server_agent
from .config import RunConfig
from .database_route import database_route, remote_route_problems, route_words
from .faults import FaultActions, parse_faults
from .integrity import IntegrityChecked
from .load_target import LoadTarget, route_timeout, service_config, service_description, service_words
from .preparation import Prepared
from .progress import Progress
from .role_groups import RoleGroups
from .this_machine import DataHere, DataMaker, GeneratorCounts, LoadHere

if TYPE_CHECKING:
    from ..cluster.coordinator import Agent, Cluster
    from .document import Run
    from .observation import RunObserver


class DataOnAgents:
    """The data on the agent `holder` of `cluster` (None: on this machine), and the database
    server as the db agent on its machine finds it for the run's faults."""

    def __init__(self, cluster: Cluster, holder: Agent | None):
        self.cluster = cluster
        self.holder = holder
        self.here = DataHere()  # what no agent does
        self.db_agent: Agent | None = None
        self.db_record: dict[str, Any] | None = None

    def check(self, config: RunConfig) -> None:
        """A fault no agent may cause (a server stopped by the db agent on its machine, or none),
        refused; the db agent that stops the server for the run's faults kept."""
        self.db_agent, self.db_record = server_agent(self.cluster, parse_faults(config.faults), config.db_url)

    def server_record(self, server: ManagedServer | None) -> dict[str, Any] | None:
        if server is not None or self.db_agent is None or self.db_record is None:
            return self.here.server_record(server)
        return self.db_record | {"agent": self.db_agent.name}  # found on the db agent's machine

    def prepare(self, config: RunConfig, workload: Workload, progress: Progress) -> Prepared:
        if self.holder is None:
            return self.here.prepare(config, workload, progress)
        progress.message(f"preparing the data on {agent_words(self.holder)}")
        return prepare_on_agent(self.cluster, self.holder, config)

    def data_url(self, url: DatabaseURL) -> DatabaseURL | None:
        # SQLite's file on the app agent's machine: not this machine's to open, size or check.
        return url if self.holder is None or url.kind.has_server else None

    def baseline(self, config: RunConfig, workload: Workload) -> object:
        if self.holder is None:
            return self.here.baseline(config, workload)
        return baseline_on_agent(self.cluster, self.holder, config)

    def data_words(self) -> str:
        return f" on {agent_words(self.holder)}" if self.holder is not None else ""

    def fresh_data(
        self,
        label: str,
        url: DatabaseURL,
        config: RunConfig,
        workload: Workload,
        data: DataSpec,
        make: DataMaker,
        verify: bool,
    ) -> FreshData | FreshDataOnAgent:
        if self.holder is None:
            return self.here.fresh_data(label, url, config, workload, data, make, verify)
        return FreshDataOnAgent(self.cluster, self.holder, label, url, config, verify=verify)

    def integrity(
        self,
        config: RunConfig,
        workload: Workload,
        prepared: Prepared,
        acknowledged: AcknowledgedWrites,
        baseline: object,
        faults: Sequence[JsonObject],
    ) -> IntegrityChecked:
        if self.holder is None:
            return self.here.integrity(config, workload, prepared, acknowledged, baseline, faults)
        return integrity_on_agent(self.cluster, self.holder, config, prepared, acknowledged, baseline, faults)


class LoadOnAgents:
    """The load from the load agents of `cluster`, the service on its app agent, the faults on the
    agent of what each one stops (the server's: the db agent `data` found for them)."""

    def __init__(self, cluster: Cluster, data: DataOnAgents):
        self.cluster = cluster
        self.data = data
        self.here = LoadHere()  # what no agent does

    def observe(self, observer: RunObserver, run: Run, progress: Progress) -> None:
        cluster = self.cluster
        observer.clocks = cluster.level_clocks
        cluster.notify_losses(progress.message)  # a db agent lost: one line, the run goes on
        if not (cluster.of_role("db") or cluster.of_role("app")):
            return
        observer.hosts = cluster.host_figures  # a db or app agent's host is sampled where it runs
        for name, found in cluster.servers_found().items():
            if found.get("warning"):
                run.flag(f"db agent {name}: {found['warning']}")
            if found.get("pid") is not None:  # found on its host: nothing of it to find here
                observer.database = DatabaseProcesses(nothing, f"db agent {name}: {found['how']}")

    def generators(self, config: RunConfig) -> GeneratorCounts:
        counts = cluster_counts(config, self.cluster)
        processes = sum(counts.values())
        first = next(iter(counts.values()))
        return GeneratorCounts(processes, first, PartRange(0, first, processes), counts)

    def describe(self, run: Run, progress: Progress, generators: GeneratorCounts) -> None:
        run.update(machines=tuple(MachineRecord.from_json(machine) for machine in self.cluster.machines()))
        for line in machine_lines(self.cluster, generators.counts):
            progress.message(line)

    def fleet(
        self, spec: ProcessSpec, generators: GeneratorCounts, groups: RoleGroups
    ) -> AbstractContextManager[Fleet]:
        from ..cluster.fleet import ClusterFleet

        # The load agents' fleets as one: Fleet's interface for the round.
        return cast(AbstractContextManager[Fleet], ClusterFleet(self.cluster, spec, generators.counts))

    def service(
        self, config: RunConfig, progress: Progress, place: Callable[[], None] | None
    ) -> AbstractContextManager[LoadTarget]:
        agent = self.cluster.app_agent()
        if agent is None:
            return self.here.service(config, progress, place)
        return service_on_agent(self.cluster, agent, config, progress)

    def check_service_route(self, config: RunConfig) -> None:
        """A route the app agent's machine cannot make (a Unix socket of a database on another
        machine), refused before anything is written or seeded."""
        if (agent := self.cluster.app_agent()) is None:
            return
        problems = self.cluster.run_here(
            agent, functools.partial(remote_route_problems, config.url, config.transport)
        )
        if problems:
            raise UsageError(
                f"app agent {agent.name}'s machine, where the service runs, cannot make the route: "
                + "; ".join(problems)
            )

    def fault_actions(
        self, config: RunConfig, origin: float, target: LoadTarget, server: ManagedServer | None
    ) -> FaultActions:
        service = target.service if target.agent is None else None
        db_agent = self.data.db_agent
        return AgentFaultActions(self.cluster, origin, config.db_url, target.agent, db_agent, service)

    def flags(self, levels: Sequence[Level]) -> list[str]:
        return lost_agent_flags(self.cluster.lost_agents(), levels)


@contextmanager
def service_on_agent(
    cluster: Cluster, agent: Agent, config: RunConfig, progress: Progress
) -> Iterator[LoadTarget]:
    """dbladder's service on the app agent `agent` for the block, behind the route made on its
    machine (the relay beside the service, in front of the database's address as that machine
    reaches it, its round trips measured there); stopped after it."""
    start = functools.partial(
        database_route, config.url, config.transport, config.added_latency_ms, measured_on=agent.name
    )
    with cluster.route_on(agent, start, route_timeout(config.added_latency_ms)) as route:
        if config.transport is not None or config.added_latency_ms is not None:
            words = route_words(route.transport)
            progress.message(f"the load reaches the database over {words} from app agent {agent.name}")
        routed = config.with_url(route.url)
        # On the agent's own address, a free port: the load agents reach it there.
        here = service_config(routed, urlsplit(agent.address).hostname or "127.0.0.1")
        with cluster.service_on(agent, functools.partial(running_service, here)) as (started, stats):
            where = f"app agent {agent.name} at {started['url']}"
            progress.message(f"service on {where}: {service_words(routed)}")
            described = service_description(routed, started["url"], agent.name)
            target = LoadTarget(
                started["host"],
                started["port"],
                described,
                stats=stats,
                db_url=route.url.raw,
                route=route,
                agent=agent,
            )
            yield target
            with suppress(Exception):  # an agent gone: no totals to add
                target.described = described.updated({"stats": stats()["totals"]})


def cluster_counts(config: RunConfig, cluster: Cluster) -> dict[str, int]:
    """The generator processes of each load agent: as configured, or one per agent over HTTP and
    sized to the agent's cores in direct mode (as `generator_processes` sizes them to this one's)."""
    agents = cluster.of_role("load")
    if config.generator_processes:
        return {agent.name: config.generator_processes for agent in agents}
    if config.target != "direct":
        return {agent.name: 1 for agent in agents}
    share = max(1, config.pool_size // max(1, len(agents)))
    return {agent.name: max(1, min(agent.machine["cores"] or 1, share, 64)) for agent in agents}


def lost_agent_flags(lost: Mapping[str, str], levels: Sequence[Level]) -> list[str]:
    """A flag per db or app agent lost during the run (`lost`: why, by name, as
    `Cluster.lost_agents` says), from the first level its host was not measured in."""
    flags = []
    for name, cause in lost.items():
        missed = [
            level.number
            for level in levels
            if (host := (level.hosts or {}).get(name)) is not None and host.measured is False
        ]
        since = f" from level {missed[0]} on" if missed else ""
        flags.append(f"agent {name} was lost ({cause}): its host's figures are not measured{since}")
    return flags


def machine_lines(cluster: Cluster, counts: dict[str, int]) -> list[str]:
    """A line per agent of the run: its role, machine and clock offset."""
    lines = []
    offsets = cluster.offsets()
    for agent in cluster.agents:
        offset = offsets.get(agent.name)
        if offset is None:
            continue
        what = f"{counts[agent.name]} generator process(es)" if agent.name in counts else "host samples"
        lines.append(
            f"{agent.role} agent {agent.name} on {agent.machine['host']} ({agent.machine['cores']} cores): "
            f"{what}, clock offset {offset.offset * 1000:+.3f} ms +- {offset.bound * 1000:.3f} ms"
        )
    return lines
