"""What the round's load is sent to, chosen once (`target_for`): dbladder's service (started
where the place runs it), the user's app (`--app`), a service already running (`--service URL`),
or the engine itself (`--target direct`). Each is checked before the run, started for the load
and stopped after it, probed by the faults (is a real request answered again?), and watched
while the load runs; the round asks its target and never asks which one it has.

A target comes with how a comparison makes the data its load runs on (`Target.data`, a
`TargetData`): seeded (`SeededData`), or made by the app's setup (`AppSetupData`), then restored
for every run. The round's steps and the comparison's part are two small protocols, as a place's
two halves are (run/place.py).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from ..app.process import AppCommand
from ..app.workload import AppWorkload
from ..load.acknowledged import AcknowledgedWrites
from ..result.context import AppSection
from ..result.run import Service
from ..urls import DatabaseURL
from ..workloads.base import DataSpec, Workload
from ..workloads.registry import load_workload
from .app_target import (
    APP_LOG,
    AppWatch,
    app_probe,
    app_section,
    app_target,
    raise_if_exited,
    run_app_setup,
    setup_maker,
)
from .config import RunConfig, parse_service_url
from .faults import direct_probe, http_probe
from .load_target import LoadTarget, route_here
from .place import LoadPlace
from .preparation import Prepared
from .progress import Progress
from .this_machine import DataMaker
from .warm_up import before_the_load

if TYPE_CHECKING:
    from ..app.process import RunningApp
    from ..load.fleet import Fleet
    from .document import Run


class Target(Protocol):
    """What the load is sent to: what the round asks of it, step by step, and how a comparison
    makes the data its load runs on (`data`)."""

    data: TargetData

    def check(self) -> None:
        """Before anything is written or seeded: what this target cannot reach, refused in one line."""

    def make_data(self, run: Run, progress: Progress) -> RunConfig:
        """What is done to the data before it is prepared (the app's setup); the config it is prepared by."""

    def started(
        self, progress: Progress, place: Callable[[], None] | None, workload: Workload
    ) -> AbstractContextManager[LoadTarget]:
        """The target started (or found) for the block, stopped after it; `place` puts what is
        started for it (the service, the relay) in the service role's place."""

    def warm_up(
        self,
        config: RunConfig,
        run: Run,
        started: LoadTarget,
        workload: Workload,
        prepared: Prepared,
        progress: Progress,
    ) -> RunConfig:
        """Before the first level: the started target warmed (`config.warm_up_s`, the result's
        `warmup`) and a search's start calibrated on it (`config.calibrate`); the config the rest
        of the round goes by."""

    def probe(self, started: LoadTarget, workload: Workload, prepared: Prepared) -> Callable[[], bool]:
        """The faults' probe: whether a real request is answered now."""

    def watching(self, started: LoadTarget, fleet: Fleet) -> AbstractContextManager[AppWatch | None]:
        """A watch on the target while the load runs (an app that exits stops the load)."""

    def finish(self, run: Run, acknowledged: AcknowledgedWrites, watch: AppWatch | None) -> None:
        """The target's part of the result, once it has stopped."""


class TargetData(Protocol):
    """How a comparison makes the data a target's load runs on, once per database, and restores
    it for every run."""

    def comparison_data(self, data: DataSpec, sizes: str) -> tuple[DataSpec, str]:
        """A comparison's data as it says it, and its words: the seed's, or the app's setup."""

    def data_maker(self, url: DatabaseURL, log: Path, seeding: DataMaker) -> DataMaker:
        """How a comparison makes a database's data once: `seeding`, or the app's setup (its
        output in `log`)."""

    def rerun(self, config: RunConfig) -> RunConfig:
        """A comparison's run on the data as made once and restored: nothing seeded or set up again."""


class SeededData:
    """The data seeded from the comparison's seed (dbladder's service, one already running, the
    engine itself)."""

    def comparison_data(self, data: DataSpec, sizes: str) -> tuple[DataSpec, str]:
        return data, sizes

    def data_maker(self, url: DatabaseURL, log: Path, seeding: DataMaker) -> DataMaker:
        return seeding

    def rerun(self, config: RunConfig) -> RunConfig:
        return replace(config, seed=None)


class AppSetupData:
    """The data the app's setup makes (`--app-setup`), once per database, then a snapshot."""

    def __init__(self, config: RunConfig):
        self.config = config

    def comparison_data(self, data: DataSpec, sizes: str) -> tuple[DataSpec, str]:
        return DataSpec(data.seed, {}), f"the app's setup: {self._app.setup}"

    def data_maker(self, url: DatabaseURL, log: Path, seeding: DataMaker) -> DataMaker:
        return setup_maker(self.config, url, log)

    def rerun(self, config: RunConfig) -> RunConfig:
        # The app's data is the setup's snapshot, restored: the setup does not run again.
        return replace(config, seed=None, app=replace(self._app, setup=None))

    @property
    def _app(self) -> AppCommand:
        return cast(AppCommand, self.config.app)


class DbladderService:
    """dbladder's service, started where the round's place runs it."""

    def __init__(self, config: RunConfig, place: LoadPlace):
        self.config, self.place = config, place
        self.data: TargetData = SeededData()

    def check(self) -> None:
        self.place.check_service_route(self.config)

    def make_data(self, run: Run, progress: Progress) -> RunConfig:
        return self.config

    def started(
        self, progress: Progress, place: Callable[[], None] | None, workload: Workload
    ) -> AbstractContextManager[LoadTarget]:
        return self.place.service(self.config, progress, place)

    def warm_up(
        self,
        config: RunConfig,
        run: Run,
        started: LoadTarget,
        workload: Workload,
        prepared: Prepared,
        progress: Progress,
    ) -> RunConfig:
        return before_the_load(config, run, started, workload, prepared, progress)

    def probe(self, started: LoadTarget, workload: Workload, prepared: Prepared) -> Callable[[], bool]:
        return http_probe(started.host, started.port, workload, prepared.data.sizes)

    def watching(self, started: LoadTarget, fleet: Fleet) -> AbstractContextManager[AppWatch | None]:
        return contextlib.nullcontext()

    def finish(self, run: Run, acknowledged: AcknowledgedWrites, watch: AppWatch | None) -> None:
        return None


class ServiceAlreadyRunning(DbladderService):
    """A service already running (`--service URL`): taken as it is, nothing started or stopped."""

    def check(self) -> None:
        return None

    @contextlib.contextmanager
    def started(
        self, progress: Progress, place: Callable[[], None] | None, workload: Workload
    ) -> Iterator[LoadTarget]:
        service_url = cast(str, self.config.service_url)
        with route_here(self.config, progress, place) as route:
            host, port = parse_service_url(service_url)
            progress.message(f"load goes to the service already running at {service_url}")
            described = Service(url=service_url, started_by_dbladder=False)
            yield LoadTarget(host, port, described, db_url=route.url.raw, route=route)


class EngineDirect(DbladderService):
    """The engine itself (`--target direct`): the generator processes hold the connections."""

    def check(self) -> None:
        return None

    @contextlib.contextmanager
    def started(
        self, progress: Progress, place: Callable[[], None] | None, workload: Workload
    ) -> Iterator[LoadTarget]:
        with route_here(self.config, progress, place) as route:
            yield LoadTarget(db_url=route.url.raw, route=route)

    def probe(self, started: LoadTarget, workload: Workload, prepared: Prepared) -> Callable[[], bool]:
        return direct_probe(self.config.url, workload, prepared.data.sizes)


class UsersApp(DbladderService):
    """The user's app (`--app`) on the run's database: its setup makes the data, nothing is seeded."""

    def __init__(self, config: RunConfig, place: LoadPlace):
        super().__init__(config, place)
        self.data = AppSetupData(config)

    def check(self) -> None:
        return None

    def make_data(self, run: Run, progress: Progress) -> RunConfig:
        run.update(
            app=AppSection.from_json({"setup_s": run_app_setup(self.config, progress), "log": APP_LOG})
        )
        return replace(self.config, seed=None)

    def started(
        self, progress: Progress, place: Callable[[], None] | None, workload: Workload
    ) -> AbstractContextManager[LoadTarget]:
        # The round's workload: its SQL checked and its `Param.rows` read once (`app_target`).
        return app_target(self.config, self._app, cast(AppWorkload, workload), progress)

    def warm_up(
        self,
        config: RunConfig,
        run: Run,
        started: LoadTarget,
        workload: Workload,
        prepared: Prepared,
        progress: Progress,
    ) -> RunConfig:
        # An app that exits while it is warmed or calibrated stops the round before the first level.
        exited = functools.partial(raise_if_exited, cast("RunningApp", started.service))
        return before_the_load(config, run, started, workload, prepared, progress, exited)

    def probe(self, started: LoadTarget, workload: Workload, prepared: Prepared) -> Callable[[], bool]:
        # A read of its request file, on a session.
        return app_probe(started.host, started.port, load_workload(cast(str, started.workload)))

    @contextlib.contextmanager
    def watching(self, started: LoadTarget, fleet: Fleet) -> Iterator[AppWatch | None]:
        with AppWatch(cast("RunningApp", started.service), fleet.stop, lambda: fleet.origin) as watch:
            yield watch

    def finish(self, run: Run, acknowledged: AcknowledgedWrites, watch: AppWatch | None) -> None:
        run.update(app=app_section(run.result.app, acknowledged, watch))

    @property
    def _app(self) -> AppCommand:
        return cast(AppCommand, self.config.app)


def target_for(config: RunConfig, place: LoadPlace) -> Target:
    """The round's target, as the config chooses it."""
    if config.app is not None:
        return UsersApp(config, place)
    if config.target == "direct":
        return EngineDirect(config, place)
    if config.service_url is not None:
        return ServiceAlreadyRunning(config, place)
    return DbladderService(config, place)
