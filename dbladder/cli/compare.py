"""`dbladder compare`: the same round on several databases, several runs each, side by side."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console

from ..errors import UsageError
from ..report.runs import comparison_table
from ..run.compare import MAX_RUNS, CompareConfig, run_compare
from .run import TerminalProgress, build_config, round_options


@click.command()
@click.option(
    "--db",
    "db_urls",
    multiple=True,
    required=True,
    metavar="URL",
    help="A database to compare; give --db once per database (e.g. sqlite:///a.db and postgresql://...).",
)
@click.option(
    "--runs",
    type=click.IntRange(1, MAX_RUNS),
    default=3,
    show_default=True,
    help="Runs per database, each from fresh data; engines alternate run by run.",
)
@click.option("--verify", is_flag=True, help="Checksum the data before every run (reads every row).")
@round_options
def compare(db_urls: tuple[str, ...], runs: int, verify: bool, **options: Any) -> None:
    """Run one round against several databases and print seed 001's "Result first" table."""
    if options["no_seed"]:
        raise UsageError("--no-seed does not go with compare: every run starts from the data as seeded")
    base = build_config({**options, "db_url": db_urls[0]})
    config = CompareConfig(db_urls=db_urls, base=base, runs=runs, out_dir=base.out_dir, verify=verify)
    progress = TerminalProgress(Console(stderr=True))
    try:
        document = run_compare(config, progress)
    finally:
        progress.close()
    click.echo("")
    if not document["runs"]:
        click.echo("no run finished")
    else:
        rows = comparison_table(document["runs"])
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    click.echo(f"\nsaved    {config.out_dir / 'compare.json'}")
    click.echo(f"report   {config.out_dir / 'report.html'} (and report.md)")
