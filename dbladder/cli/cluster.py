"""`dbladder scheduler` and `dbladder agent`: the two ends of a cluster (docs/cluster.md).

Both need the `cluster` extra (Dask distributed); without it each says what to install and exits 2.
Neither goes in clear on an address that is neither loopback nor private (`--tls DIR`,
dbladder.cluster.security); that is refused before anything binds or connects.
"""

from __future__ import annotations

import socket
from pathlib import Path

import click

from ..cluster import ROLES, require_dask
from .exit_codes import exit_codes
from .signals import sigterm_as_interrupt

TLS_HELP = (
    "The cluster's TLS files (ca.pem, cert.pem, key.pem, the same folder on every machine): the "
    "control plane goes over tls://. Needed on an address that is neither loopback nor private."
)


def _say(line: str) -> None:
    click.echo(line, err=True)


def _tls_option(command):  # type: ignore[no-untyped-def]
    return click.option(
        "--tls", type=click.Path(file_okay=False, path_type=Path), metavar="DIR", help=TLS_HELP
    )(command)


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
@_tls_option
@click.option(
    "--make-certs",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Write a new certificate authority's ca.pem, a cert.pem it signed and its key.pem into DIR, "
    "for --tls DIR on every machine, and exit.",
)
def scheduler(host: str, port: int, tls: Path | None, make_certs: Path | None) -> None:
    """Run the cluster's scheduler: Dask's, with dbladder's defaults (profiler off, a 10 s worker TTL)."""
    from ..cluster.security import check_cleartext

    if make_certs is not None:
        from ..cluster.security import make_certs as write_certs

        for path in write_certs(make_certs):
            click.echo(f"wrote {path}")
        click.echo(
            f"copy {make_certs} to every machine of the cluster and give each command --tls {make_certs}"
        )
        return
    check_cleartext("the scheduler would listen", host, tls)
    require_dask("dbladder scheduler")
    from ..cluster.scheduler import run_scheduler

    with sigterm_as_interrupt():
        run_scheduler(host, port, _say, tls)


@click.command("agent", epilog=exit_codes(0, 1, 2))
@click.option(
    "--scheduler", "address", required=True, metavar="tcp://HOST:PORT", help="The cluster's scheduler."
)
@click.option("--role", type=click.Choice(ROLES), required=True, help="What this machine does in a run.")
@click.option("--name", help="The agent's name in the run and its result (default: ROLE@HOSTNAME); unique.")
@_tls_option
def agent(address: str, role: str, name: str | None, tls: Path | None) -> None:
    """Serve this machine to runs as a load, app or db agent (a Dask worker), until stopped."""
    from ..errors import UsageError
    from ..run.config import cluster_address_problems

    if problems := cluster_address_problems(address, tls, "this agent would connect to the scheduler"):
        raise UsageError(problems[0])
    require_dask("dbladder agent")
    from ..cluster.agent import run_agent

    with sigterm_as_interrupt():
        run_agent(address, role, name or f"{role}@{socket.gethostname()}", _say, tls)
