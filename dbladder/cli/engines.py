"""`dbladder engines`: what decides the outcome, for one database."""

from __future__ import annotations

import asyncio
import json

import click

from ..engines.describe import describe, render
from .database_options import db_option, engine_options, pool_option, warn_if_not_durable


@click.command()
@db_option
@pool_option
@click.option("--json", "as_json", is_flag=True, help="Print the settings as JSON.")
def engines(db_url: str, pool_size: int, as_json: bool) -> None:
    """Show the engine's versions, transport, durability, isolation and pool."""
    # Looking at a database never creates one: a SQLite file that is not there is an error.
    info = asyncio.run(describe(db_url, engine_options(pool_size, create=False)))
    if as_json:
        click.echo(json.dumps(info.to_dict(), indent=2))
    else:
        click.echo(render(info))
    warn_if_not_durable(info)
