"""`dbladder seed`: create the shop's tables and load its deterministic data set."""

from __future__ import annotations

import asyncio

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..data.seeding import SeedReport, seed_shop
from ..engines import opened
from ..workloads import shop
from .common import db_option, engine_options, warn_if_not_durable


async def _seed(url: str, config: shop.SeedConfig, console: Console) -> SeedReport:
    async with opened(url, engine_options(4)) as engine:
        info = await engine.describe()
        console.print(f"seeding {info.engine} {info.server_version} at {info.url}")
        warn_if_not_durable(info)
        planned = config.planned_rows()
        with Progress(
            TextColumn("{task.description:<12}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        ) as bar:
            tasks = {name: bar.add_task(name, total=rows) for name, rows in planned.items()}
            return await seed_shop(engine, config, lambda table, rows: bar.advance(tasks[table], rows))


@click.command()
@db_option
@click.option("--products", default=shop.SeedConfig.products, show_default=True, type=int)
@click.option(
    "--orders", default=shop.SeedConfig.orders, show_default=True, type=int, help="Each with 2 items."
)
@click.option(
    "--seed",
    "seed_number",
    default=shop.SeedConfig.seed,
    show_default=True,
    type=int,
    help="Random seed: the same number gives the same rows on every engine.",
)
def seed(db_url: str, products: int, orders: int, seed_number: int) -> None:
    """Replace the shop's tables with a deterministic data set."""
    config = shop.SeedConfig(products=products, orders=orders, seed=seed_number).checked()
    console = Console(stderr=True)
    report = asyncio.run(_seed(db_url, config, console))
    for load in report.tables:
        click.echo(
            f"{load.table:<12} {load.rows:>12,} rows {load.seconds:8.2f} s "
            f"{load.rows_per_second:>12,.0f} rows/s"
        )
    click.echo(f"{'indexes':<12} {'':>12}      {report.finish_seconds:8.2f} s")
    click.echo(f"{'total':<12} {report.rows:>12,} rows {report.total_seconds:8.2f} s")
