"""`dbladder seed`: create a workload's tables and load its deterministic data set."""

from __future__ import annotations

import asyncio

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..data.seeding import SeedReport, seed
from ..engines import opened
from ..errors import InvalidConfig
from ..workloads.base import DataSpec, Workload
from ..workloads.registry import load_workload
from .common import data_options, db_option, engine_options, parse_sizes, warn_if_not_durable, workload_option


async def _seed(url: str, workload: Workload, data: DataSpec, console: Console) -> SeedReport:
    async with opened(url, engine_options(4)) as engine:
        info = await engine.describe()
        console.print(
            f"seeding the {workload.name} workload into {info.engine} {info.server_version} at {info.url}"
        )
        warn_if_not_durable(info)
        planned = workload.planned_rows(data.sizes)
        with Progress(
            TextColumn("{task.description:<12}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        ) as bar:
            tasks = {name: bar.add_task(name, total=rows) for name, rows in planned.items() if rows}
            report = await seed(engine, workload, data, lambda table, rows: bar.advance(tasks[table], rows))
        await workload.check_sql(engine)
        return report


@click.command()
@db_option
@workload_option
@data_options
def seed_command(
    db_url: str, workload: str, scale: float, size_settings: tuple[str, ...], seed_number: int
) -> None:
    """Replace a workload's tables with a deterministic data set."""
    chosen = load_workload(workload)
    data = DataSpec(seed_number, chosen.scaled_sizes(scale, parse_sizes(size_settings)))
    problems = chosen.validate_sizes(data.sizes)
    if not scale > 0:
        problems.insert(0, f"--scale must be above 0, not {scale}")
    if problems:
        raise InvalidConfig(problems)
    console = Console(stderr=True)
    report = asyncio.run(_seed(db_url, chosen, data, console))
    for load in report.tables:
        click.echo(
            f"{load.table:<12} {load.rows:>12,} rows {load.seconds:8.2f} s "
            f"{load.rows_per_second:>12,.0f} rows/s"
        )
    click.echo(f"{'indexes':<12} {'':>12}      {report.finish_seconds:8.2f} s")
    click.echo(f"{'total':<12} {report.rows:>12,} rows {report.total_seconds:8.2f} s")


seed_command.name = "seed"
