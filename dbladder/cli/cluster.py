"""`dbladder scheduler` and `dbladder agent`: the two ends of a cluster (docs/cluster.md).

Both need the `cluster` extra (Dask distributed); without it each says what to install and exits 2.
"""

from __future__ import annotations

import socket

import click

from ..cluster import ROLES, require_dask
from .common import exit_codes, sigterm_as_interrupt


def _say(line: str) -> None:
    click.echo(line, err=True)


@click.command("scheduler", epilog=exit_codes(0, 1, 2))
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on: loopback unless another is given (never every interface by default).",
)
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8786, show_default=True, help="Port (0: any free one)."
)
def scheduler(host: str, port: int) -> None:
    """Run the cluster's scheduler: Dask's, with dbladder's defaults (profiler off, a 10 s worker TTL)."""
    require_dask("dbladder scheduler")
    from ..cluster.scheduler import run_scheduler

    with sigterm_as_interrupt():
        run_scheduler(host, port, _say)


@click.command("agent", epilog=exit_codes(0, 1, 2))
@click.option(
    "--scheduler", "address", required=True, metavar="tcp://HOST:PORT", help="The cluster's scheduler."
)
@click.option("--role", type=click.Choice(ROLES), required=True, help="What this machine does in a run.")
@click.option("--name", help="The agent's name in the run and its result (default: ROLE@HOSTNAME); unique.")
def agent(address: str, role: str, name: str | None) -> None:
    """Serve this machine to runs as a load, app or db agent (a Dask worker), until stopped."""
    require_dask("dbladder agent")
    from ..cluster.agent import run_agent
    from ..run.config import parse_cluster_address

    parse_cluster_address(address)
    with sigterm_as_interrupt():
        run_agent(address, role, name or f"{role}@{socket.gethostname()}", _say)
