"""Where the round's load runs and where its data lives, chosen once (`place_for`, on the cluster
`cluster_for` connects, if any):

    this machine  the generator processes, the data (seeded, its baseline, its check after the
                  load), the service, the faults and the samples, all here (run/this_machine.py:
                  `DataHere`, `LoadHere`)
    the agents    a cluster's (run/agents_place.py: `DataOnAgents`, `LoadOnAgents`): the load
                  agents send the load, the data is seeded and checked on the agent that holds
                  it, the service runs on the app agent, each fault acts on the agent of what it
                  stops, the other hosts are sampled there

A place comes in two halves, each a small protocol: where the data lives and its server
(`DataPlace`: seeded, its baseline, its check, its record) and where the load runs (`LoadPlace`:
the generators, the service, the faults, the other hosts). The round asks each half for its part
at each step and never asks which one it has.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..load.acknowledged import AcknowledgedWrites
from ..load.fleet import Fleet, ProcessSpec
from ..result.level import Level
from ..servers import ManagedServer, is_managed_spec
from ..types import JsonObject
from ..urls import DatabaseURL
from ..workloads.base import DataSpec, Workload
from .agents_place import DataOnAgents, LoadOnAgents
from .config import RunConfig
from .faults import FaultActions
from .integrity import IntegrityChecked
from .load_target import LoadTarget
from .preparation import Prepared
from .progress import Progress
from .role_groups import RoleGroups
from .this_machine import DataHere, DataMaker, GeneratorCounts, LoadHere

if TYPE_CHECKING:
    from ..cluster.coordinator import Cluster
    from ..data.fresh import FreshData
    from .agent_data import FreshDataOnAgent
    from .document import Run
    from .observation import RunObserver


class DataPlace(Protocol):
    """Where the data lives, and its database server: what the round (and a comparison) asks of it."""

    def check(self, config: RunConfig) -> None:
        """Before anything is written or seeded: a fault on the database server that no machine
        of this place may cause, refused in one line."""

    def server_record(self, server: ManagedServer | None) -> dict[str, Any] | None:
        """The database server's record for the result: the managed server's, or the one its faults act on."""

    def prepare(self, config: RunConfig, workload: Workload, progress: Progress) -> Prepared:
        """The data seeded where it lives, the workload's SQL checked, the engine described."""

    def data_url(self, url: DatabaseURL) -> DatabaseURL | None:
        """The database when its files are this machine's to open, size and measure (None: another's)."""

    def baseline(self, config: RunConfig, workload: Workload) -> object:
        """The integrity check's baseline, taken before the load where the data lives."""

    def data_words(self) -> str:
        """Where the data lives, for a line ("" here, " on app agent app-1 (10.0.0.4)")."""

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
        """A comparison's data for one database, seeded once (by `make` where it is this machine's)
        and restored before every run, where the data lives."""

    def integrity(
        self,
        config: RunConfig,
        workload: Workload,
        prepared: Prepared,
        acknowledged: AcknowledgedWrites,
        baseline: object,
        faults: Sequence[JsonObject],
    ) -> IntegrityChecked:
        """The integrity check where the data lives, with the run's `faults` records."""


class LoadPlace(Protocol):
    """Where the load runs (its generators, the service, the faults, the hosts sampled): what the
    round asks of it."""

    def observe(self, observer: RunObserver, run: Run, progress: Progress) -> None:
        """The observer given this place's other hosts and clocks, their warnings flagged."""

    def generators(self, config: RunConfig) -> GeneratorCounts:
        """The generator processes of the run, on each machine that sends the load."""

    def describe(self, run: Run, progress: Progress, generators: GeneratorCounts) -> None:
        """The machines of the run, in the result and in lines."""

    def fleet(
        self, spec: ProcessSpec, generators: GeneratorCounts, groups: RoleGroups
    ) -> AbstractContextManager[Fleet]:
        """The generator fleet for the block."""

    def service(
        self, config: RunConfig, progress: Progress, place: Callable[[], None] | None
    ) -> AbstractContextManager[LoadTarget]:
        """dbladder's service started where it runs for the block (its route made there)."""

    def check_service_route(self, config: RunConfig) -> None:
        """Before anything is seeded: a route the service's machine cannot make, refused in one line."""

    def fault_actions(
        self, config: RunConfig, origin: float, target: LoadTarget, server: ManagedServer | None
    ) -> FaultActions:
        """What causes the run's faults: here, or on the agent of what each one stops."""

    def flags(self, levels: Sequence[Level]) -> list[str]:
        """The run's flags of this place (an agent lost during the run), from its levels as measured."""


@dataclass(frozen=True)
class Place:
    """The round's place in its two halves: where the data lives, and where the load runs."""

    data: DataPlace
    load: LoadPlace


def place_for(config: RunConfig, cluster: Cluster | None) -> Place:
    """The round's place: this machine, or the agents of `cluster` (its data on the agent that
    holds it, unless the user's app makes the data: then here, where its setup ran)."""
    if cluster is None:
        return Place(DataHere(), LoadHere())
    holder = None if config.app is not None else cluster.data_agent(config.url.kind.has_server)
    data = DataOnAgents(cluster, holder)
    return Place(data, LoadOnAgents(cluster, data))


def cluster_for(config: RunConfig, progress: Progress) -> AbstractContextManager[Cluster | None]:
    """The cluster of `config.cluster` for the block, connected, its agents found and their clocks
    measured; None without one."""
    if config.cluster is None:
        return nullcontext()
    from ..cluster.coordinator import Cluster  # only a cluster run imports Dask

    progress.message(f"connecting to the cluster's scheduler at {config.cluster}")
    # A managed server is started here after the agents join: no db agent's host to find it on.
    db_url = None if is_managed_spec(config.db_url) else config.db_url
    return Cluster(config.cluster, tls=config.cluster_tls, db_url=db_url)


def data_cluster_for(config: RunConfig, progress: Progress) -> AbstractContextManager[Cluster | None]:
    """A comparison's cluster for the block, when one of its agents holds the data (an app or a db
    agent, and no app whose own setup makes the data here): connected to its app and db agents,
    which keep each database's snapshot; None without one. A scheduler that does not answer
    stops the comparison here, before anything is seeded."""
    if config.cluster is None:
        return nullcontext()
    from ..cluster.coordinator import Cluster  # only a cluster comparison imports Dask

    progress.message(f"checking the cluster's scheduler at {config.cluster} and its agents")
    with Cluster(config.cluster, tls=config.cluster_tls, place=False) as checked:
        holders = checked.of_role("app") or checked.of_role("db")
    if config.app is not None or not holders:
        return nullcontext()
    return Cluster(config.cluster, ("app", "db"), tls=config.cluster_tls, sample=False)
