"""The round's place on this machine: the data (seeded, its baseline, its check after the load:
`DataHere`) and the load (the generator processes, the service, the faults and the samples:
`LoadHere`), all here; and the run's generator processes as a place counts them
(`GeneratorCounts`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..data.fresh import FreshData
from ..data.seeding import SeedReport
from ..engines.base import Engine
from ..load.acknowledged import AcknowledgedWrites
from ..load.fleet import Fleet, PartRange, ProcessSpec
from ..result.level import Level
from ..servers import ManagedServer
from ..types import JsonObject
from ..urls import DatabaseURL
from ..workloads.base import DataSpec, Workload
from .config import RunConfig
from .faults import FaultActions
from .integrity import IntegrityChecked, integrity_section, take_baseline
from .load_target import LoadTarget, service_here
from .preparation import Prepared, prepare_database
from .progress import Progress
from .role_groups import RoleGroups
from .sizing import generator_processes

if TYPE_CHECKING:
    from .document import Run
    from .observation import RunObserver


DataMaker = Callable[[Engine], Awaitable[SeedReport]]
"""How a comparison makes a database's data once (FreshData's `make`): seeded, or the app's setup."""


@dataclass(frozen=True)
class GeneratorCounts:
    """The run's generator processes: in all, the first fleet's (this machine's, or the first load
    agent's), the range of the run's parts it sends (None: all, one machine) and each load agent's."""

    processes: int
    first: int
    parts: PartRange | None = None
    counts: dict[str, int] = field(default_factory=dict)


class DataHere:
    """The data on this machine: seeded, its baseline taken and its writes checked here."""

    def check(self, config: RunConfig) -> None:
        return None

    def server_record(self, server: ManagedServer | None) -> dict[str, Any] | None:
        return server.record() if server is not None else None

    def prepare(self, config: RunConfig, workload: Workload, progress: Progress) -> Prepared:
        return asyncio.run(prepare_database(config, workload, progress))

    def data_url(self, url: DatabaseURL) -> DatabaseURL | None:
        return url

    def baseline(self, config: RunConfig, workload: Workload) -> object:
        return take_baseline(config.url, workload)

    def data_words(self) -> str:
        return ""

    def fresh_data(
        self,
        label: str,
        url: DatabaseURL,
        config: RunConfig,
        workload: Workload,
        data: DataSpec,
        make: DataMaker,
        verify: bool,
    ) -> FreshData:
        return FreshData(url, workload, data, verify=verify, make=make)

    def integrity(
        self,
        config: RunConfig,
        workload: Workload,
        prepared: Prepared,
        acknowledged: AcknowledgedWrites,
        baseline: object,
        faults: Sequence[JsonObject],
    ) -> IntegrityChecked:
        return integrity_section(
            config.url, workload, prepared.data, acknowledged, baseline, prepared.engine, faults
        )


class LoadHere:
    """The load from this machine: its generator processes, the service and the faults here."""

    def observe(self, observer: RunObserver, run: Run, progress: Progress) -> None:
        return None

    def generators(self, config: RunConfig) -> GeneratorCounts:
        processes = generator_processes(config)
        return GeneratorCounts(processes, processes)

    def describe(self, run: Run, progress: Progress, generators: GeneratorCounts) -> None:
        return None

    def fleet(
        self, spec: ProcessSpec, generators: GeneratorCounts, groups: RoleGroups
    ) -> AbstractContextManager[Fleet]:
        return groups.started_in("generator", Fleet(spec, generators.processes))

    def service(
        self, config: RunConfig, progress: Progress, place: Callable[[], None] | None
    ) -> AbstractContextManager[LoadTarget]:
        return service_here(config, progress, place)

    def check_service_route(self, config: RunConfig) -> None:
        return None

    def fault_actions(
        self, config: RunConfig, origin: float, target: LoadTarget, server: ManagedServer | None
    ) -> FaultActions:
        return FaultActions(target.service, server)

    def flags(self, levels: Sequence[Level]) -> list[str]:
        return []
