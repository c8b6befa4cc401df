"""`dbladder compare`: the same round on several databases, several runs each, side by side.

Each `--db` starts an entry; a `--transport` or `--added-latency` after it belongs to that entry,
so one database can be compared with itself over different routes:

    dbladder compare --workload orm --db sqlite:///orm.db \
        --db postgresql:///orm --transport unix \
        --db postgresql:///orm --transport tcp \
        --db postgresql:///orm --transport tcp --added-latency 0 \
        --db postgresql:///orm --transport tcp --added-latency 2

Given before the first `--db`, they apply to every entry that does not give its own.
"""

from __future__ import annotations

import json
from typing import Any

import click

from ..errors import UsageError
from ..report.integrity import integrity_lines
from ..report.result_table import comparison_table
from ..run.compare import MAX_RUNS, CompareConfig, run_compare
from ..run.integrity import raise_if_any_lost
from ..transport import TRANSPORTS
from .database_options import db_texts
from .exit_codes import exit_codes
from .expect import expect_options, raise_if_unmet
from .roles import round_placement
from .run import LATENCY_HELP, TRANSPORT_HELP, build_config, json_option, round_options, watched

ORDER = "dbladder.compare.order"
"""Where `EntryCommand` keeps the order in which the options came, in the click context's meta."""
ROUTE_OPTIONS = ("transport", "added_latency")


class EntryCommand(click.Command):
    """A command that notes the order of its options, so each --transport and --added-latency can be
    given to the --db before it (click gathers a repeated option's values, not where each came)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        _, _, order = self.make_parser(ctx).parse_args(args=list(args))
        ctx.meta[ORDER] = [param.name for param in order]
        return super().parse_args(ctx, args)


def entry_routes(
    order: list[str], count: int, transports: tuple[str, ...], latencies: tuple[float, ...]
) -> tuple[tuple[str | None, ...], tuple[float | None, ...]]:
    """Each of `count` entries' transport and added latency, from the options in the order given.

    A value after a --db belongs to it; one before the first --db applies to every entry that gives
    none of its own. UsageError for an entry given the same option twice.
    """
    values: dict[str, list[Any]] = {"transport": list(transports), "added_latency": list(latencies)}
    default: dict[str, Any] = {}
    own: list[dict[str, Any]] = [{} for _ in range(count)]
    entry = -1
    for name in order:
        if name == "db_urls":
            entry += 1
        elif name in ROUTE_OPTIONS:
            value = values[name].pop(0)
            into = default if entry < 0 else own[entry]
            option = "--" + name.replace("_", "-")
            if name in into:
                where = "before the first --db" if entry < 0 else f"for --db number {entry + 1}"
                raise UsageError(f"{option} is given twice {where}; give each --db one of its own")
            into[name] = value
    routes = [default | chosen for chosen in own]
    return (
        tuple(route.get("transport") for route in routes),
        tuple(route.get("added_latency") for route in routes),
    )


@click.command(cls=EntryCommand, epilog=exit_codes(0, 1, 2, 3, 4))
@click.option(
    "--db",
    "db_urls",
    multiple=True,
    required=True,
    metavar="URL|@FILE",
    help="A database to compare; give --db once per entry (e.g. sqlite:///a.db and postgresql://...). "
    "The same URL may come again with another --transport or --added-latency; managed:postgresql or "
    "managed:mariadb starts a throwaway server for the comparison.",
)
@click.option(
    "--transport",
    "transport",
    multiple=True,
    type=click.Choice(TRANSPORTS),
    help=f"{TRANSPORT_HELP} Belongs to the --db before it.",
)
@click.option(
    "--added-latency",
    "added_latency",
    multiple=True,
    type=float,
    metavar="MS",
    help=f"{LATENCY_HELP} Belongs to the --db before it.",
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
@expect_options
@json_option
def compare(
    db_urls: tuple[str, ...],
    transport: tuple[str, ...],
    added_latency: tuple[float, ...],
    runs: int,
    verify: bool,
    as_json: bool,
    **options: Any,
) -> None:
    """Run one round against several databases and print the "Result first" table of "Postgres vs
    MariaDB on two dedicated CPUs": every run's figure per database and the verdict of the rule in
    docs/experiments.md (a winner needs 3 runs of each). Every --expect-* is checked on every run;
    a database meets it when all its runs do."""
    if options["no_seed"]:
        raise UsageError("--no-seed does not go with compare: every run starts from the data as seeded")
    db_urls = db_texts(db_urls)
    order = click.get_current_context().meta.get(ORDER, [])
    transports, latencies = entry_routes(order, len(db_urls), transport, added_latency)
    # Every database's placement is checked here, in one line naming the option, before a server
    # starts: the round's own check sees the first --db only.
    round_placement(options, db_urls)
    base, _ = build_config({**options, "db_url": db_urls[0], "transport": None, "added_latency": None})
    config = CompareConfig(
        db_urls=db_urls,
        base=base,
        runs=runs,
        out_dir=base.out_dir,
        verify=verify,
        transports=transports if any(t is not None for t in transports) else (),
        added_latencies=latencies if any(latency is not None for latency in latencies) else (),
    )
    comparison = watched(
        options,
        "dbladder compare",
        base.pass_mark,
        lambda progress: run_compare(config, progress),
        lambda board, comparison: board.compared(comparison.runs),
    )
    click.echo("", err=as_json)
    if not comparison.runs:
        click.echo("no run finished", err=as_json)
    else:
        rows = comparison_table(comparison.runs)
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            line = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            click.echo(line, err=as_json)
    for result in comparison.runs:
        for line in integrity_lines(result):
            click.echo(f"{result.label} run {result.run}: {line}", err=as_json)
    click.echo(f"\nsaved    {config.out_dir / 'compare.json'}", err=as_json)
    click.echo(f"report   {config.out_dir / 'report.html'} (and report.md)", err=as_json)
    unmet = []
    for database in comparison.databases or ():
        outcome = database.expectations
        if outcome is not None:  # one line per unmet expectation of each run, naming the database
            unmet += [f"{database.label} {line}" for line in outcome.unmet]
            if outcome.met:
                click.echo(f"met      {database.label}: every expectation, in every run", err=as_json)
    for line in unmet:
        click.echo(f"unmet    {line}", err=as_json)
    if as_json:
        click.echo(json.dumps(comparison.to_json(), indent=2))
    raise_if_any_lost(comparison.runs)  # exit code 4, before 3: a lost write matters more
    raise_if_unmet(unmet)
