"""`dbladder bench`: the raw rounds and the journal-mode test of "SQLite handled 315 million daily
requests on a laptop", straight through the engine, no HTTP."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import click

from ..bench import BenchConfig, JournalConfig, render_journal, render_rounds, run_journal_test, run_rounds
from ..bench.config import WORKER_KINDS, WORKLOADS
from ..data.seeding import seed
from ..engines import opened
from ..engines.base import EngineInfo
from ..errors import InvalidConfig
from ..workloads.base import DataSpec
from ..workloads.registry import load_workload
from .common import engine_options, warn_if_not_durable

DEFAULT_DB = "sqlite:///chirp.db"


async def _load(url: str, workload_name: str, scale: float) -> None:
    workload = load_workload(workload_name)
    data = DataSpec(1, workload.scaled_sizes(scale))
    problems = workload.validate_sizes(data.sizes)
    if problems:
        raise InvalidConfig(problems)
    async with opened(url, engine_options(4)) as engine:
        await seed(engine, workload, data)
        await workload.check_sql(engine)


@click.command()
@click.option(
    "--db",
    "db_url",
    default=DEFAULT_DB,
    show_default=True,
    metavar="URL",
    help="Database URL: sqlite:///file.db, postgresql://user@host:port/db, mariadb://user@host:port/db.",
)
@click.option(
    "--workload",
    type=click.Choice(WORKLOADS),
    default="chirp",
    show_default=True,
    help="The workload whose post's raw rounds to run.",
)
@click.option(
    "--scale",
    type=float,
    default=None,
    help="Load the workload's data first at this scale (1 = the post's 50,000 users, 1,000,000 posts).",
)
@click.option(
    "--seconds", type=float, default=None, help="Per round (default 5) or journal phase (default 10)."
)
@click.option(
    "--warmup", type=float, default=1.0, show_default=True, help="Seconds of untimed work before each round."
)
@click.option(
    "--connections", type=int, default=1, show_default=True, help="Raw rounds: connections at once."
)
@click.option("--batch-rows", type=int, default=100, show_default=True, help="Rows per batched transaction.")
@click.option("--no-reference", is_flag=True, help="Skip the bare references.")
@click.option(
    "--repeat", "repeats", type=int, default=1, show_default=True, help="Turns of ours then the reference."
)
@click.option("--journal-test", is_flag=True, help="Readers and a writer: WAL against DELETE (SQLite).")
@click.option("--readers", type=int, default=7, show_default=True, help="Journal test: reader count.")
@click.option(
    "--write-rate", type=float, default=1000.0, show_default=True, help="Journal test: paced writes/s."
)
@click.option(
    "--workers",
    type=click.Choice(WORKER_KINDS),
    default="processes",
    show_default=True,
    help="Journal test: readers and writer as processes or threads.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
def bench(
    db_url: str,
    workload: str,
    scale: float | None,
    seconds: float | None,
    warmup: float,
    connections: int,
    batch_rows: int,
    no_reference: bool,
    repeats: int,
    journal_test: bool,
    readers: int,
    write_rate: float,
    workers: str,
    as_json: bool,
) -> None:
    """Raw rounds (point reads, write transactions, batched inserts) beside bare references."""
    if journal_test:
        config: Any = JournalConfig(
            db_url=db_url,
            workload=workload,
            seconds=seconds if seconds is not None else JournalConfig.seconds,
            readers=readers,
            write_rate=write_rate,
            workers=workers,
        ).checked()
    else:
        config = BenchConfig(
            db_url=db_url,
            workload=workload,
            seconds=seconds if seconds is not None else BenchConfig.seconds,
            warmup_seconds=warmup,
            connections=connections,
            batch_rows=batch_rows,
            references=not no_reference,
            repeats=repeats,
        ).checked()
    if scale is not None:
        click.echo(f"loading {workload} at scale {scale:g} into {db_url} ...", err=True)
        if not scale > 0:
            raise InvalidConfig([f"--scale must be above 0, not {scale}"])
        asyncio.run(_load(db_url, workload, scale))

    def progress(message: str) -> None:
        if not as_json:
            click.echo(f"  {message}", err=True)

    if journal_test:
        result = run_journal_test(config, progress)
        click.echo(json.dumps(result, indent=2) if as_json else render_journal(result))
        warn_if_not_durable(EngineInfo(**result["engine"]))
        return
    result = asyncio.run(run_rounds(config, progress))
    click.echo(json.dumps(result, indent=2) if as_json else render_rounds(result))
    warn_if_not_durable(EngineInfo(**result["engine"]))
