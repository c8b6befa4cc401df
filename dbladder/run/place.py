"""Where the round's load runs and where its data lives, chosen once (`place_for`):

    ThisMachine   the generator processes, the data (seeded, its baseline, its check after the
                  load), the service, the faults and the samples, all on this machine
                  (run/this_machine.py)
    OnAgents      a cluster's (run/agents_place.py): the load agents send the load, the data is
                  seeded and checked on the agent that holds it, the service runs on the app
                  agent, each fault acts on the agent of what it stops, the other hosts are
                  sampled there

The round asks its place at each step (`Place`) and never asks which one it has.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import DbladderError
from ..load.acknowledged import AcknowledgedWrites
from ..load.fleet import Fleet, ProcessSpec
from ..servers import ManagedServer
from ..urls import DatabaseURL
from ..workloads.base import Workload
from .agents_place import OnAgents
from .config import RunConfig
from .faults import FaultActions
from .load_target import LoadTarget
from .preparation import Prepared
from .progress import Progress
from .role_groups import RoleGroups
from .this_machine import Generators, ThisMachine

if TYPE_CHECKING:
    from ..cluster.coordinator import Cluster
    from .document import Run
    from .observation import RunObserver


class Place(Protocol):
    """Where the load runs and where the data lives: what the round asks of it, step by step."""

    def check(self, config: RunConfig) -> None:
        """Before anything is written or seeded: what this place cannot do, refused in one line."""

    def server_record(self, server: ManagedServer | None) -> dict[str, Any] | None:
        """The database server's record for the result: the managed server's, or the one its faults act on."""

    def prepare(self, config: RunConfig, workload: Workload, progress: Progress) -> Prepared:
        """The data seeded where it lives, the workload's SQL checked, the engine described."""

    def data_url(self, url: DatabaseURL) -> DatabaseURL | None:
        """The database when its files are this machine's to open, size and measure (None: another's)."""

    def baseline(self, config: RunConfig, workload: Workload) -> object:
        """The integrity check's baseline, taken before the load where the data lives."""

    def observe(self, observer: RunObserver, run: Run, progress: Progress) -> None:
        """The observer given this place's other hosts and clocks, their warnings flagged."""

    def generators(self, config: RunConfig) -> Generators:
        """The generator processes of the run, on each machine that sends the load."""

    def describe(self, run: Run, progress: Progress, generators: Generators) -> None:
        """The machines of the run, in the result and in lines."""

    def fleet(
        self, spec: ProcessSpec, generators: Generators, groups: RoleGroups
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

    def flags(self, levels: Sequence[dict[str, Any]]) -> list[str]:
        """The run's flags of this place (an agent lost during the run)."""

    def data_words(self) -> str:
        """Where the data lives, for a line ("" here, " on app agent app-1 (10.0.0.4)")."""

    def integrity(
        self,
        config: RunConfig,
        workload: Workload,
        prepared: Prepared,
        acknowledged: AcknowledgedWrites,
        baseline: object,
        document: dict[str, Any],
    ) -> tuple[dict[str, Any], DbladderError | None]:
        """The integrity section, checked where the data lives, its flags into `document`; and the
        failure of the machine that checked, for the round to raise once its result is written."""


def place_for(config: RunConfig, cluster: Cluster | None) -> Place:
    """The round's place: this machine, or the agents of `cluster` (its data on the agent that
    holds it, unless the user's app makes the data: then here, where its setup ran)."""
    if cluster is None:
        return ThisMachine()
    holder = None if config.app is not None else cluster.data_agent(config.url.kind.has_server)
    return OnAgents(cluster, holder)
