"""`dbladder seed`: create a workload's tables and load its deterministic data set."""

from __future__ import annotations

import asyncio

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..data.seeding import SEED_POOL_SIZE, ProgressCallback, seed_database
from ..engines.base import EngineInfo
from ..errors import InvalidConfig
from ..workloads.base import DataSpec, Workload
from ..workloads.registry import load_workload
from .database_options import db_option, engine_options, warn_if_not_durable
from .workload_options import data_options, parse_sizes, workload_option


class SeedBar:
    """The seeding line, the durability warning and one bar per table, on standard error."""

    def __init__(self, console: Console, workload: Workload, data: DataSpec):
        self.console, self.workload, self.data = console, workload, data
        self.bar: Progress | None = None

    def started(self, info: EngineInfo) -> ProgressCallback:
        where = f"{info.engine} {info.server_version} at {info.url}"
        self.console.print(f"seeding the {self.workload.name} workload into {where}")
        warn_if_not_durable(info)
        planned = self.workload.planned_rows(self.data.sizes)
        bar = self.bar = Progress(
            TextColumn("{task.description:<12}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=False,
        )
        bar.start()
        tasks = {name: bar.add_task(name, total=rows) for name, rows in planned.items() if rows}
        return lambda table, rows: bar.advance(tasks[table], rows)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


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
    bar = SeedBar(Console(stderr=True), chosen, data)
    try:
        report = asyncio.run(seed_database(db_url, chosen, data, bar.started, engine_options(SEED_POOL_SIZE)))
    finally:
        bar.close()
    for load in report.tables:
        click.echo(
            f"{load.table:<12} {load.rows:>12,} rows {load.seconds:8.2f} s "
            f"{load.rows_per_second:>12,.0f} rows/s"
        )
    click.echo(f"{'indexes':<12} {'':>12}      {report.finish_seconds:8.2f} s")
    click.echo(f"{'total':<12} {report.rows:>12,} rows {report.total_seconds:8.2f} s")


seed_command.name = "seed"
