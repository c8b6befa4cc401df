"""`dbladder compare`: the same round on several databases, several runs each, side by side."""

from __future__ import annotations

import json
from typing import Any

import click
from rich.console import Console

from ..errors import UsageError
from ..report.integrity import integrity_lines
from ..report.runs import comparison_table
from ..run.compare import MAX_RUNS, CompareConfig, run_compare
from ..run.integrity import WritesLost, summary
from .common import db_texts, sigterm_as_interrupt
from .run import TerminalProgress, build_config, json_option, round_options


@click.command()
@click.option(
    "--db",
    "db_urls",
    multiple=True,
    required=True,
    metavar="URL|@FILE",
    help="A database to compare; give --db once per database (e.g. sqlite:///a.db and postgresql://...); "
    "managed:postgresql or managed:mariadb starts a throwaway server for the comparison.",
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
@json_option
def compare(db_urls: tuple[str, ...], runs: int, verify: bool, as_json: bool, **options: Any) -> None:
    """Run one round against several databases and print the "Result first" table of "Postgres vs
    MariaDB on two dedicated CPUs": every run's figure per database and the verdict of the rule in
    docs/experiments.md (a winner needs 3 runs of each)."""
    if options["no_seed"]:
        raise UsageError("--no-seed does not go with compare: every run starts from the data as seeded")
    db_urls = db_texts(db_urls)
    base = build_config({**options, "db_url": db_urls[0]})
    config = CompareConfig(db_urls=db_urls, base=base, runs=runs, out_dir=base.out_dir, verify=verify)
    progress = TerminalProgress(Console(stderr=True))
    try:
        with sigterm_as_interrupt():
            document = run_compare(config, progress)
    finally:
        progress.close()
    click.echo("", err=as_json)
    if not document["runs"]:
        click.echo("no run finished", err=as_json)
    else:
        rows = comparison_table(document["runs"])
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            line = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            click.echo(line, err=as_json)
    for result in document["runs"]:
        for line in integrity_lines(result):
            click.echo(f"{result['label']} run {result['run']}: {line}", err=as_json)
    click.echo(f"\nsaved    {config.out_dir / 'compare.json'}", err=as_json)
    click.echo(f"report   {config.out_dir / 'report.html'} (and report.md)", err=as_json)
    if as_json:
        click.echo(json.dumps(document, indent=2))
    lost = [
        result for result in document["runs"] if result.get("integrity") and not _kept(result["integrity"])
    ]
    if lost:  # exit code 4
        raise WritesLost("; ".join(f"{r['label']} run {r['run']}: {summary(r['integrity'])}" for r in lost))


def _kept(integrity: dict[str, Any]) -> bool:
    return not (integrity["lost"] or integrity["corrupted"])
