"""Where the load goes, for the length of the load: a service started for the round (and stopped
after it), one already running, or none (direct mode), reached over the route `--transport` and
`--added-latency` choose (the relay, if any, outlives the service)."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, cast
from urllib.parse import urlsplit

from ..app.workload import AppWorkload
from ..engine_registry import run_label, settings_with_defaults
from ..errors import DbladderError, UsageError
from ..service import ServiceConfig, running_service
from ..service.server import RunningService
from ..workloads.base import Workload
from .app_target import app_target
from .config import RunConfig, parse_service_url
from .database_route import RELAY_PROBE_ROUND_TRIPS, database_route, remote_route_problems, route_words
from .progress import Progress
from .role_groups import RoleGroups


@dataclass
class LoadTarget:
    """Where the load goes: host and port (none in direct mode), and the service if dbladder runs it."""

    host: str = ""
    port: int = 0
    description: dict[str, Any] | None = None
    service: RunningService | None = None
    db_url: str = ""  # the URL the load uses (another transport, or the latency relay)
    transport: dict[str, Any] | None = None  # how it gets there, for the result (None: as given)
    workload: str | None = None  # the workload the load's processes load, when not the config's (--app)
    stats: Callable[[], dict[str, Any]] | None = None  # the service's /stats, where it is not `service`


@contextlib.contextmanager
def load_target(
    config: RunConfig,
    progress: Progress,
    groups: RoleGroups | None = None,
    cluster: Any = None,
    workload: Workload | None = None,
) -> Iterator[LoadTarget]:
    """The target of the load, reaching the database by the route `--transport` and
    `--added-latency` choose (the relay, if any, outlives the service). The service and the relay
    run in the service role's place (`groups`), or on a cluster's app agent (dbladder.cluster).
    With `--app`, `workload` is the round's, its SQL checked and its `Param.rows` read once
    (`app_target`); without it, the config's is made and checked here."""
    if config.app is not None:  # the user's app on the run's database instead of dbladder's service
        app_workload = cast(AppWorkload, workload or config.round_workload())
        with app_target(config, app_workload, progress) as started:
            app, description, text = started
            yield LoadTarget(app.config.host, app.port, description, app, workload=text)  # type: ignore[arg-type]
        return
    place = groups.hook("service") if groups is not None else None
    if (app_agent := service_agent(config, cluster)) is not None:
        from ..cluster.sampled import remote_route

        # The route is the app machine's: made there (the relay beside the service, in front of
        # the database's address as that machine reaches it) and its round trips measured there.
        start = functools.partial(database_route, config.url, config.transport, config.added_latency_ms)
        call = functools.partial(cluster.call, app_agent.name)
        with remote_route(call, start, route_timeout(config.added_latency_ms)) as route:
            route.description["measured_on"] = app_agent.name
            if config.transport is not None or config.added_latency_ms is not None:
                progress.message(
                    f"the load reaches the database over {route_words(route.description)} "
                    f"from app agent {app_agent.name}"
                )
            with _service_for(config.with_url(route.url), progress, None, cluster) as target:
                target.db_url, target.transport = route.url.raw, route.description
                yield target
        return
    with database_route(config.url, config.transport, config.added_latency_ms, place) as route:
        if config.transport is not None or config.added_latency_ms is not None:
            progress.message(f"the load reaches the database over {route_words(route.description)}")
        with _service_for(config.with_url(route.url), progress, place, cluster) as target:
            target.db_url, target.transport = route.url.raw, route.description
            yield target


def service_agent(config: RunConfig, cluster: Any) -> Any:
    """The cluster's app agent when dbladder's service is to run there (the run starts it: no
    `--service URL`, no `--app`, not direct mode), else None."""
    if cluster is None or config.target != "http" or config.service_url is not None or config.app is not None:
        return None
    return cluster.app_agent()


def route_timeout(added_latency_ms: float | None) -> float:
    """Seconds an app agent may take to make the route: the transport's check and its round trips,
    and through a relay RELAY_PROBE_ROUND_TRIPS more, each 2 x the added latency at least."""
    return 90.0 + 4 * RELAY_PROBE_ROUND_TRIPS * (added_latency_ms or 0.0) / 1000


def check_remote_route(config: RunConfig, cluster: Any) -> None:
    """Before the run: refuse, in one line, a route the app agent's machine cannot make (a Unix
    socket of a database on another machine); nothing is seeded or started before it."""
    if (app_agent := service_agent(config, cluster)) is None:
        return
    work = functools.partial(remote_route_problems, config.url, config.transport)
    problems = cluster.call(app_agent.name, "run_here", work)
    if problems:
        raise UsageError(
            f"app agent {app_agent.name}'s machine, where the service runs, cannot make the route: "
            + "; ".join(problems)
        )


@contextlib.contextmanager
def _service_for(
    config: RunConfig, progress: Progress, place: Callable[[], None] | None = None, cluster: Any = None
) -> Iterator[LoadTarget]:
    """The target of the load: a service started for the round, one already running, or none (direct)."""
    if config.target == "direct":
        yield LoadTarget()
        return
    if config.service_url is not None:
        host, port = parse_service_url(config.service_url)
        progress.message(f"load goes to the service already running at {config.service_url}")
        yield LoadTarget(host, port, {"url": config.service_url, "started_by_dbladder": False})
        return
    service_config = ServiceConfig(
        config.db_url,
        parsed_url=config.url,
        workload=config.workload,
        host=config.service_host,
        port=0,
        workers=config.workers,
        pool_size=config.pool_size,
        pool_timeout=config.timeout,
        engine_settings=config.engine_settings,
    )
    # The engine's run settings, in words (", one writer") and under their own keys (as result.json
    # has always had "sqlite_writers").
    settings_words = run_label(config.engine_settings)
    settings = settings_with_defaults(config.engine_settings)
    app_agent = cluster.app_agent() if cluster is not None else None
    if app_agent is not None:
        from ..cluster.sampled import remote_service

        # On the agent's own address, a free port: the load agents reach it there.
        here = replace(service_config, host=urlsplit(app_agent.address).hostname or "127.0.0.1")
        call = functools.partial(cluster.call, app_agent.name)
        with remote_service(call, functools.partial(running_service, here)) as (started, stats):
            progress.message(
                f"service on app agent {app_agent.name} at {started['url']}: {config.workers} worker(s), "
                f"pool {config.pool_size}{settings_words}"
            )
            description = {
                "workers": config.workers,
                "pool_size": config.pool_size,
                **settings,
                "url": started["url"],
                "agent": app_agent.name,
            }
            yield LoadTarget(started["host"], started["port"], description, stats=stats)
            with contextlib.suppress(Exception):  # an agent gone: no totals to add
                description["stats"] = stats()["totals"]
        return
    with running_service(service_config, place=place) as service:
        progress.message(
            f"service on {service.url}: {config.workers} worker(s), pool {config.pool_size}" + settings_words
        )
        description = {
            "workers": config.workers,
            "pool_size": config.pool_size,
            **settings,
            "url": service.url,
        }
        yield LoadTarget(service.config.host, service.config.port, description, service)
        with contextlib.suppress(DbladderError, OSError):
            description["stats"] = service.stats()["totals"]
