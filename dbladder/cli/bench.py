"""`dbladder bench`: the raw rounds and the journal-mode test of "SQLite handled 315 million daily
requests on a laptop", straight through the engine, no HTTP; and with `--native`, the database's
own speed on the shop's read mix, beside a direct-mode run's ceiling."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from ..bench import BenchConfig, JournalConfig, render_journal, render_rounds, run_journal_test, run_rounds
from ..bench.config import WORKER_KINDS, WORKLOADS
from ..bench.loading import load_data
from ..bench.native_config import NativeConfig
from ..bench.native_run import run_native
from ..engines.base import EngineInfo
from ..errors import UsageError
from ..report.native import client_words, native_sentence
from ..roles import Placement
from ..servers import is_managed_spec
from .database_options import warn_if_not_durable
from .roles import placement_from, role_options

DEFAULT_DB = "sqlite:///chirp.db"
NATIVE_DB = "sqlite:///shop.db"  # --native measures the shop, whose default database this is
NATIVE_CONNECTIONS = 8  # pgbench clients, sysbench threads: where both reached the server's pace here
# Options of the raw rounds and the journal test that mean nothing to --native.
NOT_NATIVE = (
    "workload",
    "batch_rows",
    "no_reference",
    "repeats",
    "journal_test",
    "readers",
    "write_rate",
    "workers",
)


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
@click.option(
    "--native",
    is_flag=True,
    help="The database's own speed on the shop's read mix: its native client flat out (a bare apsw "
    f"loop, pgbench, sysbench). --db defaults to {NATIVE_DB}; --connections (pgbench's clients, "
    f"sysbench's threads) to {NATIVE_CONNECTIONS}; --scale seeds the shop first.",
)
@click.option(
    "--result",
    "result_path",
    type=click.Path(path_type=Path),
    metavar="PATH",
    help="With --native: a direct-mode run's result.json (or its folder) on the same database; prints "
    "its ceiling as a share of the reference and writes the reference into it and its report.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@role_options
@click.pass_context
def bench(
    ctx: click.Context,
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
    native: bool,
    result_path: Path | None,
    as_json: bool,
    cpus: tuple[str, ...],
    memory: tuple[str, ...],
    drop_caches: bool,
) -> None:
    """Raw rounds (point reads, write transactions, batched inserts) beside bare references.

    With --native: the shop's read mix (50 % a product, 30 % a page, 20 % an order with its items)
    run by the database's native client flat out, beside a direct-mode run's ceiling (--result).
    """
    if native or result_path is not None:
        # Option names as typed, for the options given on the command line (not left at a default).
        given = {
            str(param.name): param.opts[0]
            for param in ctx.command.params
            if ctx.get_parameter_source(str(param.name)) == ParameterSource.COMMANDLINE
        }
        placement = placement_from(cpus, memory, drop_caches)
        _native(given, db_url, scale, seconds, warmup, connections, result_path, as_json, placement)
        return
    placing = [
        name
        for name, given in (("--cpus", cpus), ("--memory", memory), ("--drop-caches", drop_caches))
        if given
    ]
    if placing:
        verb = "goes" if len(placing) == 1 else "go"
        raise UsageError(
            f"{' and '.join(placing)} {verb} with --native only (the raw rounds run in this process)"
        )
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
        asyncio.run(load_data(db_url, workload, scale))

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


def _native(
    given: dict[str, str],
    db_url: str,
    scale: float | None,
    seconds: float | None,
    warmup: float,
    connections: int,
    result_path: Path | None,
    as_json: bool,
    placement: Placement,
) -> None:
    """`bench --native [--result PATH]`: measure, print, and write the block into the result. The
    native client runs on the generator's CPUs; a `managed:` database is started for the
    measurement on the database's CPUs and under its cap (seed it with --scale)."""
    if "native" not in given:
        raise UsageError("--result goes with --native: dbladder bench --native --db URL --result PATH")
    stray = [option for name, option in given.items() if name in NOT_NATIVE]
    if stray:
        verb = "does" if len(stray) == 1 else "do"
        raise UsageError(f"{', '.join(stray)} {verb} not apply to --native (it measures the shop's read mix)")
    text = db_url if "db_url" in given else NATIVE_DB
    if placement.service.limited:
        raise UsageError(
            f"{placement.service.option('service')}: bench --native runs no service; it places the "
            "native client (--cpus generator=...) and the database (--cpus/--memory database=...)"
        )
    if placement.generator.memory is not None:
        raise UsageError(
            "--memory generator: bench --native gives the native client its CPUs only "
            "(--cpus generator=...); cap the database (--memory database=...)"
        )
    config = NativeConfig(
        db_url=NATIVE_DB if is_managed_spec(text) else text,  # the server's URL once it runs
        seconds=seconds if seconds is not None else NativeConfig.seconds,
        warmup_seconds=warmup,
        connections=connections if "connections" in given else NATIVE_CONNECTIONS,
        cpus=placement.generator.cpus,
    )

    def progress(message: str) -> None:
        if not as_json:
            click.echo(f"  {message}", err=True)

    done = run_native(
        config, text, placement, scale, result_path, lambda line: click.echo(line, err=True), progress
    )
    if as_json:
        click.echo(json.dumps(done.block, indent=2))
        return
    click.echo(_native_text(done.block, done.result))
    if done.result_file is not None:
        click.echo(f"saved    the native block in {done.result_file} and its report")


def _native_text(block: dict[str, Any], result: dict[str, Any] | None) -> str:
    mix = ", ".join(f"{name} {100 * share:g} %" for name, share in block["mix"].items())
    sizes = ", ".join(f"{count:,} {name}" for name, count in block["sizes"].items())
    lines = [
        f"native   {block['ops_per_s']:,.0f} ops/s flat out "
        f"({block['operations']:,} in {block['seconds']:g} s)",
        f"client   {client_words(block)}",
        f"command  {block['command']}",
        f"mix      {mix}; ids up to {sizes}",
        f"database {block['database']} ({block['engine']} {block.get('server_version', '')})".rstrip(),
    ]
    if result is not None:
        lines.append(f"direct   {native_sentence(result)}")
    return "\n".join(lines)
