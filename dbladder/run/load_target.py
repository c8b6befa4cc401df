"""What a started target gives the load (`LoadTarget`), and dbladder's service as this machine
starts it: its config, its description for the result (the typed `Service`), and the service
running for the block (`service_here`) behind the route `--transport` and `--added-latency`
choose (its typed `Transport`). Which target the round has, and how each is started, probed and
stopped, is run/targets.py's."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..engine_registry import run_label, settings_with_defaults
from ..errors import DbladderError
from ..result.run import Service, Transport
from ..service import ServiceConfig, running_service
from .config import RunConfig
from .database_route import RELAY_PROBE_ROUND_TRIPS, Route, database_route, route_words
from .progress import Progress

if TYPE_CHECKING:
    from ..cluster.coordinator import Agent
    from ..service.server import RunningService


@dataclass
class LoadTarget:
    """Where the load goes: host and port (none in direct mode), and the service if dbladder runs it."""

    host: str = ""
    port: int = 0
    # The result's `service` (None in direct mode): its totals, or the app's starts, are added
    # when it stops.
    described: Service | None = None
    service: RunningService | None = None  # the user's app answers as one
    db_url: str = ""  # the URL the load uses (another transport, or the latency relay)
    route: Route | None = None  # how it gets there (None: as given)
    workload: str | None = None  # the workload the load's processes load, when not the config's (--app)
    stats: Callable[[], dict[str, Any]] | None = None  # the service's /stats, where it is not `service`
    agent: Agent | None = None  # the cluster's app agent the service runs on (None: this machine)

    @property
    def transport(self) -> Transport | None:
        """The result's `transport`: the load's route as it is now (the relay's figures are added
        as it stops, after the target)."""
        return self.route.transport if self.route is not None else None


def service_config(config: RunConfig, host: str | None = None) -> ServiceConfig:
    """dbladder's service for the round, on `host` (the config's service host unless given), a free port."""
    return ServiceConfig(
        config.db_url,
        parsed_url=config.url,
        workload=config.workload,
        host=host or config.service_host,
        port=0,
        workers=config.workers,
        pool_size=config.pool_size,
        pool_timeout=config.timeout,
        engine_settings=config.engine_settings,
    )


def service_description(config: RunConfig, url: str, agent: str | None = None) -> Service:
    """The result's `service` of dbladder's service listening at `url` (on the app agent `agent`):
    its workers, pool and the engine's run settings under their own keys (as result.json has
    always had "sqlite_writers")."""
    return Service(
        workers=config.workers,
        pool_size=config.pool_size,
        engine_settings=settings_with_defaults(config.engine_settings),
        url=url,
        agent=agent,
    )


def service_words(config: RunConfig) -> str:
    """ "2 worker(s), pool 100, one writer": the service's line, after where it listens."""
    return f"{config.workers} worker(s), pool {config.pool_size}" + run_label(config.engine_settings)


@contextlib.contextmanager
def route_here(
    config: RunConfig, progress: Progress, place: Callable[[], None] | None = None
) -> Iterator[Route]:
    """The load's route to the database made on this machine for the block (the relay, if any,
    outlives the service); `place` puts the relay in the service role's place."""
    with database_route(config.url, config.transport, config.added_latency_ms, place) as route:
        if config.transport is not None or config.added_latency_ms is not None:
            progress.message(f"the load reaches the database over {route_words(route.transport)}")
        yield route


def route_timeout(added_latency_ms: float | None) -> float:
    """Seconds an app agent may take to make the route: the transport's check and its round trips,
    and through a relay RELAY_PROBE_ROUND_TRIPS more, each 2 x the added latency at least."""
    return 90.0 + 4 * RELAY_PROBE_ROUND_TRIPS * (added_latency_ms or 0.0) / 1000


@contextlib.contextmanager
def service_here(
    config: RunConfig, progress: Progress, place: Callable[[], None] | None = None
) -> Iterator[LoadTarget]:
    """dbladder's service started on this machine for the block (its route made here too),
    stopped after it."""
    with route_here(config, progress, place) as route:
        routed = config.with_url(route.url)
        with running_service(service_config(routed), place=place) as service:
            progress.message(f"service on {service.url}: {service_words(routed)}")
            described = service_description(routed, service.url)
            target = LoadTarget(
                service.config.host,
                service.config.port,
                described,
                service,
                db_url=route.url.raw,
                route=route,
            )
            yield target
            with contextlib.suppress(DbladderError, OSError):
                target.described = described.updated({"stats": service.stats()["totals"]})
