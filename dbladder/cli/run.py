"""`dbladder run`: seed, start the service, find the ceiling (or climb a preset's ladder), print the
table and the ceiling; exit 3 when an `--expect-*` is not met."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.status import Status

from ..cluster import require_dask
from ..engines.base import DEFAULT_POOL_SIZE
from ..load.live_view import LiveView
from ..plans.search import Search
from ..report import terminal
from ..report.integrity import integrity_lines
from ..report.warm_up import summary_lines
from ..result.passmark import PassMark
from ..run.config import TARGETS, RunConfig
from ..run.document import default_out_dir
from ..run.faults import KINDS
from ..run.integrity import raise_if_lost
from ..run.plan_choice import PlanChoice, PlanOptions, choose_plan
from ..run.progress import seeding_line
from ..transport import TRANSPORTS
from .app_options import app_fields, app_options
from .config_file import settings_of
from .dashboard import Board, dashboard_options, live_dashboard
from .database_options import db_option, parsed_db
from .engine_options import engine_setting_options, engine_settings_given
from .exit_codes import exit_codes
from .expect import echo_checks, expect_options, expectations_of, raise_if_unmet
from .log_progress import DEFAULT_INTERVAL, LogProgress
from .option_lists import with_options
from .roles import role_options, round_placement
from .signals import sigterm_as_interrupt
from .workload_options import DATA_OPTIONS, complete_preset, parse_sizes, workload_option

Outcome = TypeVar("Outcome")


class TerminalProgress:
    """Finished levels as table lines; the level in progress on one line that redraws itself."""

    def __init__(self, console: Console):
        self.console = console
        self.status: Status | None = None
        self.table_started = False

    def message(self, text: str) -> None:
        self.console.print(text, highlight=False, soft_wrap=True)

    def seeding(self, database: str, table: str, done: int, total: int) -> None:
        self._status(seeding_line(database, table, done, total))

    def live(self, view: LiveView) -> None:
        phase = "warming up" if view.warming_up else f"{view.elapsed:4.0f} s"
        self._status(
            f"level {view.level + 1} at {view.rate:,.0f} req/s, {phase}: offered {view.offered_rate:,.0f}/s, "
            f"achieved {view.achieved_rate:,.0f}/s, p95 {view.p95_ms:.1f} ms, failures {view.failures:,}"
        )

    def level(self, row: dict[str, Any]) -> None:
        self._stop_status()
        if not self.table_started:
            self.console.print(terminal.header_of(row), highlight=False, soft_wrap=True)
            self.table_started = True
        self.console.print(
            terminal.level_line(row), highlight=False, soft_wrap=True, style=None if row["passed"] else "red"
        )

    def _status(self, text: str) -> None:
        if self.status is None:
            self.status = self.console.status(text)
            self.status.start()
        else:
            self.status.update(text)

    def _stop_status(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def close(self) -> None:
        self._stop_status()


ROUND_OPTIONS = [
    click.option(
        "--syscalls",
        is_flag=True,
        help="Count system calls per process group for a few seconds per level (needs strace or bpftrace).",
    ),
    workload_option,
    click.option(
        "--preset",
        shell_complete=complete_preset,
        help="A named round of the workload instead of the ceiling search; `dbladder workloads` lists "
        "each workload's presets (the shop's are the published rounds of \"Postgres vs SQLite under "
        'load" and "Postgres vs MariaDB on two dedicated CPUs": read, shop20, shop20-1w, write, '
        "users-read, users-write, spike; quick is a short ladder). Default: the workload's own default "
        "round if it has one (orm: ciso), else the ceiling search, or the quick ladder when --step or "
        "--steps is given.",
    ),
    click.option(
        "--budget",
        type=float,
        help=f"Ceiling search: seconds of probing at most, settle pauses included. [{Search.budget:g}]",
    ),
    click.option(
        "--resolution",
        metavar="PCT%|FRACTION",
        help="Ceiling search: stop when the lowest rate failed is within this of the highest held "
        f"(5% or 0.05). [{Search.resolution:.0%}]",
    ),
    click.option(
        "--min-answers",
        type=int,
        metavar="N",
        help="Ceiling search: a probe holds until its measured window has at least N requests due, "
        "for a p95 that means something at a low rate (at most 6 times --hold, within --budget; "
        f"0: the hold as set). [{Search.min_answers}]",
    ),
    click.option("--writes", type=float, help="Share of requests that are writes (0 to 1). [preset]"),
    click.option(
        "--start",
        type=float,
        help="Offered rate of the first level (or the search's first probe), req/s. "
        f"[preset; search {Search.start:g}]",
    ),
    click.option("--step", type=float, help="Rate added per level, req/s. [preset]"),
    click.option("--steps", type=int, help="Number of levels. [preset]"),
    click.option(
        "--hold",
        type=float,
        help="Seconds each level, probe or users phase is held, warm-up included. "
        f"[preset; search {Search.hold:g}]",
    ),
    click.option(
        "--users",
        "users_levels",
        metavar="N,N,...",
        help="Closed model: users per level, e.g. 100,200,400 (users presets). [preset]",
    ),
    click.option(
        "--ramp", type=float, help="Closed model: seconds over which each level's users arrive. [preset]"
    ),
    click.option(
        "--warmup",
        type=float,
        help="Seconds at the start of each level left out of its figures. "
        f"[preset; search {Search.warmup:g}]",
    ),
    click.option(
        "--p95",
        "p95_ms",
        type=float,
        default=PassMark.p95_ms,
        show_default=True,
        help="Pass mark: p95 under this many ms.",
    ),
    click.option(
        "--max-fail",
        "max_fail_pct",
        type=float,
        default=PassMark.max_fail_pct,
        show_default=True,
        help="Pass mark: failed requests under this percentage.",
    ),
    click.option("--continue-after-fail", is_flag=True, help="Climb every level even after one fails."),
    *DATA_OPTIONS,
    click.option(
        "--no-seed", is_flag=True, help="Use the data already in the database instead of fresh data."
    ),
    click.option(
        "--target",
        type=click.Choice(TARGETS),
        default="http",
        show_default=True,
        help="http: through the web service; direct: the same mix straight through the engine driver.",
    ),
    click.option(
        "--workers", type=int, default=RunConfig.workers, show_default=True, help="Service worker processes."
    ),
    click.option(
        "--pool",
        "pool_size",
        type=int,
        default=DEFAULT_POOL_SIZE,
        show_default=True,
        help="Database connections in all.",
    ),
    *engine_setting_options(preset=True),
    click.option(
        "--generators",
        type=int,
        default=0,
        show_default=True,
        help="Load generator processes; 0: sized to the machine (direct mode: per core; HTTP: one).",
    ),
    click.option(
        "--in-flight",
        type=int,
        default=RunConfig.in_flight,
        show_default=True,
        help="Requests awaiting an answer per generator process; beyond it a request is dropped.",
    ),
    click.option(
        "--timeout", type=float, default=RunConfig.timeout, show_default=True, help="Per-request timeout, s."
    ),
    click.option(
        "--precise-clock",
        is_flag=True,
        help="Busy-wait for due times: microsecond schedule lag, but the generator takes a whole CPU.",
    ),
    click.option(
        "--out",
        "out_dir",
        type=click.Path(file_okay=False, path_type=Path),
        help="Output folder (default: a new timestamped folder under ./results).",
    ),
    click.option(
        "--service",
        "service_url",
        metavar="URL",
        help="Send the load to a service already running at URL (http://host:port) instead of starting one.",
    ),
    click.option("--allow-remote-target", is_flag=True, help="Allow load to a non-loopback address."),
    click.option(
        "--cluster",
        metavar="tcp://HOST:PORT",
        help="Send the load from the load agents of this Dask scheduler (`dbladder agent --role load` "
        "on each load machine; docs/cluster.md) instead of from this machine. Needs the extra: "
        "pip install 'dbladder[cluster]'.",
    ),
    click.option(
        "--tls",
        "cluster_tls",
        type=click.Path(file_okay=False, path_type=Path),
        metavar="DIR",
        help="With --cluster tls://HOST:PORT: the cluster's TLS files (ca.pem, cert.pem, key.pem; "
        "`dbladder scheduler --make-certs DIR`). Without it the scheduler must be on a loopback or "
        "private address.",
    ),
    click.option(
        "--fault",
        "faults",
        multiple=True,
        metavar="KIND@LEVEL[:SECOND]",
        help=f"Cause a fault during the load (repeatable), e.g. kill-db@3:10; kinds: {', '.join(KINDS)}. "
        "Only what the run started, or a managed server (--db managed:postgresql), is ever stopped.",
    ),
    click.option(
        "--progress-interval",
        type=click.FloatRange(min=0.1),
        default=DEFAULT_INTERVAL,
        show_default=True,
        metavar="SECONDS",
        help="When standard error is not a terminal (a CI log): a progress line this often while a "
        "level runs.",
    ),
    click.option(
        "--no-integrity",
        is_flag=True,
        help="Skip the check, after a run with writes, that every acknowledged write is still there.",
    ),
]
"""Every option of a round but --db: `run` and `compare` share them."""

json_option = click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the result document on standard output (the table and progress go to standard error).",
)


TRANSPORT_HELP = (
    "How the service reaches the database: inproc (SQLite), unix or tcp (PostgreSQL, MariaDB; "
    "the server is asked where it listens). Default: as the URL says."
)
LATENCY_HELP = (
    "Milliseconds added to every chunk each way between the service and the database server, by a "
    "relay dbladder runs (0: the relay adding nothing, to compare against)."
)


def round_options(command: Any) -> Any:
    """Apply ROUND_OPTIONS to a click command, in the order they are listed."""
    return dashboard_options(role_options(app_options(with_options(command, ROUND_OPTIONS))))


@click.command(epilog=exit_codes(0, 1, 2, 3, 4))
@db_option
@click.option("--transport", type=click.Choice(TRANSPORTS), help=TRANSPORT_HELP)
@click.option("--added-latency", "added_latency", type=float, metavar="MS", help=LATENCY_HELP)
@round_options
@expect_options
@json_option
def run(as_json: bool, **options: Any) -> None:
    """Find where one database stops: raise the rate until a level fails, then narrow it down.

    The default plan is the ceiling search: probes from --start req/s, doubling until one fails the
    pass mark, then halving the gap between the highest rate held and the lowest failed until they
    are within --resolution, each probe a full hold with warm-up, within --budget seconds. --preset
    runs a named round instead (a published ladder or users plan, with its exact parameters).
    """
    from ..run.round import run_round  # the whole run: imported when one runs, not for --help

    config, plan = build_config(options)
    result = watched(
        options,
        "dbladder run",
        config.pass_mark,
        lambda progress: run_round(config, progress),
        Board.finished,
    )
    echo = _echo(as_json)
    echo("")
    if not result.levels:
        echo("no level finished")
    echo(terminal.summary(result))
    preset = plan.preset
    if preset is not None and preset.reference:  # the published figure this round reproduces
        echo(f"post     {preset.reference} ({preset.description})")
    for line in [
        *summary_lines(result),
        *terminal.request_lines(result),
        *integrity_lines(result),
    ]:
        echo(line)
    echo(f"saved    {config.out_dir / 'result.json'}")
    echo(f"report   {config.out_dir / 'report.html'} (and report.md, levels.csv, timeseries.csv)")
    checks = result.expectations.checks if result.expectations is not None else ()
    echo_checks(checks, echo)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
    raise_if_lost(result.integrity)  # exit code 4, before 3: a lost write matters more
    raise_if_unmet([found.line for found in checks if not found.met])


def watched(
    options: dict[str, Any],
    title: str,
    pass_mark: PassMark,
    work: Callable[[Any], Outcome],
    tell_board: Callable[[Board, Outcome], None],
) -> Outcome:
    """`work(progress)` shown as it goes (a status line on a terminal, else a line every
    --progress-interval, and the --dashboard page if asked for), SIGTERM taken as Ctrl-C;
    `tell_board` gives the dashboard what came of it (a round's result, a comparison's runs)."""
    progress = progress_for(Console(stderr=True), options["progress_interval"])
    with live_dashboard(options, progress, title, pass_mark) as board:
        try:
            with sigterm_as_interrupt():
                outcome = work(board.progress)
        finally:
            progress.close()
        tell_board(board, outcome)
    return outcome


def progress_for(console: Console, interval: float) -> TerminalProgress | LogProgress:
    """The status line redrawn on a terminal; elsewhere a plain line every `interval` seconds."""
    return TerminalProgress(console) if console.is_terminal else LogProgress(console, interval)


def _echo(as_json: bool) -> Any:
    """Where the human-readable lines go: standard error when standard output carries the JSON."""
    return lambda text: click.echo(text, err=as_json)


def plan_options(options: dict[str, Any]) -> PlanOptions:
    """The plan's options of `run` and `compare`, as the library takes them."""
    names = (
        "preset",
        "start",
        "step",
        "steps",
        "hold",
        "warmup",
        "budget",
        "resolution",
        "min_answers",
        "ramp",
        "writes",
    )
    return PlanOptions(
        **{name: options[name] for name in names},
        users=options["users_levels"],
        engine_settings=engine_settings_given(options),
    )


def build_config(options: dict[str, Any]) -> tuple[RunConfig, PlanChoice]:
    """A RunConfig from the command's options: the preset, with explicit options over it; and the
    plan chosen (its preset's reference to a published figure)."""
    if options["cluster"] is not None:
        require_dask()  # one line saying what to install, before anything else is checked or run
    plan = choose_plan(options["workload"], plan_options(options))
    config = RunConfig(
        db_url=options["db_url"],
        parsed_database=parsed_db(options["db_url"]),  # DBLADDER_DB_URL's, parsed as it was checked
        workload=options["workload"],
        **plan.config_fields(),
        pass_mark=PassMark(options["p95_ms"], options["max_fail_pct"]),
        expectations=expectations_of(options),
        seed=None if options["no_seed"] else options["seed_number"],
        scale=options["scale"],
        sizes={**plan.sizes, **parse_sizes(options["size_settings"])},
        target=options["target"],
        workers=options["workers"],
        pool_size=options["pool_size"],
        generator_processes=options["generators"],
        in_flight=options["in_flight"],
        timeout=options["timeout"],
        precise_clock=options["precise_clock"],
        syscalls=options["syscalls"],
        continue_after_fail=options["continue_after_fail"],
        out_dir=options["out_dir"] or default_out_dir(),
        service_url=options["service_url"],
        allow_remote_target=options["allow_remote_target"],
        cluster=options["cluster"],
        cluster_tls=options["cluster_tls"],
        faults=tuple(options["faults"]),
        integrity=not options["no_integrity"],
        transport=options.get("transport"),
        added_latency_ms=options.get("added_latency"),
        placement=round_placement(options, [options["db_url"]]),
        **app_fields(options),
        # The app's search starts where the app can go, measured on it (dbladder.load.calibration),
        # unless --start says where; dbladder's service keeps its published starts.
        calibrate=options.get("app_command") is not None
        and options["start"] is None
        and plan.plan.start_range() is not None,
        settings=_settings(),
    ).checked()
    return config, plan


def _settings() -> dict[str, Any] | None:
    """Each option of the command running, and where it came from (None outside a command)."""
    ctx = click.get_current_context(silent=True)
    return None if ctx is None else settings_of(ctx)
