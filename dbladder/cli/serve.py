"""`dbladder serve`: run a workload's web service in front of one database."""

from __future__ import annotations

import click

from ..engines.describe import render
from ..errors import UsageError
from ..roles import drop_page_cache, placed_here
from ..service import ServiceConfig, ServiceStarted
from ..service import serve as run_service
from ..service.config import DEFAULT_HOST, DEFAULT_PORT
from ..workloads.registry import load_workload
from .database_options import db_option, pool_option, warn_if_not_durable
from .engine_options import engine_settings_given, with_engine_setting_options
from .roles import placement_from, role_options
from .workload_options import workload_option


def _announce(started: ServiceStarted) -> None:
    click.echo(started.summary())
    click.echo(render(started.engine))
    warn_if_not_durable(started.engine)
    for warning in started.warnings:
        click.secho(f"WARNING: {warning}", fg="yellow", err=True)


@click.command()
@db_option
@workload_option
@click.option(
    "--host", default=DEFAULT_HOST, show_default=True, help="Address to bind (loopback unless told)."
)
@click.option(
    "--port", default=DEFAULT_PORT, show_default=True, type=int, help="Port to bind; 0 picks a free one."
)
@click.option("--workers", default=1, show_default=True, type=int, help="Worker processes.")
@pool_option
@click.option(
    "--pool-timeout",
    default=5.0,
    show_default=True,
    type=float,
    help="Seconds a request waits for a connection before it is answered 503.",
)
@with_engine_setting_options
@role_options
def serve(
    db_url: str,
    workload: str,
    host: str,
    port: int,
    workers: int,
    pool_size: int,
    pool_timeout: float,
    cpus: tuple[str, ...],
    memory: tuple[str, ...],
    drop_caches: bool,
    **engine_settings: int,
) -> None:
    """Serve a workload's JSON API until Ctrl-C or SIGTERM (in-flight requests finish first)."""
    placement = placement_from(cpus, memory, drop_caches)
    # serve starts the service and nothing else: it sends no load, and it serves in front of a
    # database given by URL (it starts no managed: server), so no other role has a process here.
    unplaced = {
        "generator": "serve sends no load (the generator is run's or compare's)",
        "database": "serve starts no database server, it serves in front of --db "
        "(a managed: server is run's or compare's)",
    }
    for role, why in unplaced.items():
        limits = placement.of(role)
        if limits.limited:
            raise UsageError(f"{limits.option(role)}: {why}; serve places the service only (service=...)")
    load_workload(workload)  # a bad workload is one line here, not an error in every worker
    config = ServiceConfig(
        db_url=db_url,
        workload=workload,
        host=host,
        port=port,
        workers=workers,
        pool_size=pool_size,
        pool_timeout=pool_timeout,
        engine_settings=engine_settings_given(engine_settings),
    ).checked()
    if placement.drop_caches:
        drop_page_cache()
    # The service, its workers and the SQLite writer are this process and its children: placed
    # here, they all are.
    with placed_here(placement.service, "service"):
        run_service(config, on_started=_announce)
