"""`dbladder engines`: what decides the outcome, for one database."""

from __future__ import annotations

import asyncio
import json

import click

from ..engines import opened
from ..engines.base import EngineInfo
from ..engines.describe import render
from .common import db_option, engine_options, pool_option, warn_if_not_durable


async def _describe(url: str, pool_size: int) -> EngineInfo:
    # Looking at a database never creates one: a SQLite file that is not there is an error.
    async with opened(url, engine_options(pool_size, create=False)) as engine:
        return await engine.describe()


@click.command()
@db_option
@pool_option
@click.option("--json", "as_json", is_flag=True, help="Print the settings as JSON.")
def engines(db_url: str, pool_size: int, as_json: bool) -> None:
    """Show the engine's versions, transport, durability, isolation and pool."""
    info = asyncio.run(_describe(db_url, pool_size))
    if as_json:
        click.echo(json.dumps(info.to_dict(), indent=2))
    else:
        click.echo(render(info))
    warn_if_not_durable(info)
