"""`dbladder db`: throwaway PostgreSQL and MariaDB servers that dbladder starts and owns.

    URL=$(dbladder db start postgresql)     # prints the URL; the server keeps running
    dbladder run --db "$URL"
    dbladder db list
    dbladder db stop postgresql-23456       # or --all

The library (`dbladder.servers`) does the work; these commands only parse and print.
"""

from __future__ import annotations

import asyncio
import json

import click

from ..engines.base import EngineOptions
from ..engines.describe import describe
from ..errors import DbladderError, UsageError
from ..servers import (
    managed_engines,
    registered_servers,
    registry,
    remove_server,
    server_states,
    start_managed,
)
from .database_options import warn_if_not_durable


def _parse_settings(pairs: tuple[str, ...]) -> dict[str, str]:
    settings = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--setting takes NAME=VALUE, not {pair!r}")
        settings[name.strip()] = value.strip()
    return settings


@click.group()
def db() -> None:
    """Throwaway database servers that dbladder starts, owns and removes."""


@db.command()
@click.argument("engine", type=click.Choice(managed_engines(), case_sensitive=False))
@click.option(
    "--setting",
    "settings",
    multiple=True,
    metavar="NAME=VALUE",
    help="A server setting over the durable defaults, e.g. synchronous_commit=off (repeatable).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address of this machine it listens on (PostgreSQL only for another than loopback: the "
    "database's machine of a cluster, docs/cluster.md); clients on that address's subnets are trusted.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the server's record as JSON instead of its URL.")
def start(engine: str, settings: tuple[str, ...], host: str, as_json: bool) -> None:
    """Start a private server and print its URL.

    ENGINE's installed programs create it in a folder of its own, on a free port on 127.0.0.1 (or
    --host) and a socket in that folder, with durable settings. It keeps running after this
    command exits, until `dbladder db stop NAME`.
    """
    server = start_managed(engine, _parse_settings(settings), host=host)
    try:
        info = asyncio.run(describe(server.url, EngineOptions(pool_size=1)))
    except DbladderError:
        server.remove()
        raise
    total = sum(server.timings.values())
    click.echo(
        f"started {server.name} ({info.engine} {info.server_version}) in {total:.1f} s; "
        f"folder {server.folder}; stop with: dbladder db stop {server.name}",
        err=True,
    )
    warn_if_not_durable(info)
    if as_json:
        click.echo(json.dumps(server.record(), indent=2))
    else:
        click.echo(server.url)


@db.command()
@click.argument("name", required=False)
@click.option("--all", "stop_all", is_flag=True, help="Stop and remove every managed server.")
def stop(name: str | None, stop_all: bool) -> None:
    """Stop a managed server and delete its folder.

    NAME is as `dbladder db list` shows it.
    """
    if bool(name) == stop_all:
        raise UsageError("name one managed server (dbladder db list shows them) or give --all")
    names = [entry.name for entry in registry.entries()] if stop_all else [name or ""]
    for each in names:
        folder = remove_server(each)
        click.echo(f"stopped {each} and removed {folder}")


@db.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print every server's record as JSON.")
def list_servers(as_json: bool) -> None:
    """List managed servers: name, state, URL and folder."""
    if as_json:
        click.echo(json.dumps([server.record() for server in registered_servers()], indent=2))
        return
    states = server_states()
    if not states:
        click.echo(f"no managed servers (dbladder db start {'|'.join(managed_engines())} starts one)")
        return
    rows = [("NAME", "STATE", "URL", "FOLDER"), *((s.name, s.state, s.url, s.folder) for s in states)]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        click.echo("  ".join([*cells, row[3]]))
