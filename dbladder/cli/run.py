"""`dbladder run`: seed, start the service, climb the ladder, print the table and the ceiling."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.status import Status

from ..engines.base import DEFAULT_POOL_SIZE
from ..errors import UsageError
from ..load.presets import DEFAULT_PRESET, get_preset
from ..load.recorder import LiveView
from ..plans import Phase, UserPlan
from ..report import terminal
from ..result.passmark import PassMark
from ..run.round import TARGETS, RunConfig, default_out_dir, run_ladder
from ..workloads.registry import load_workload
from .common import DATA_OPTIONS, db_option, parse_sizes, workload_option


class TerminalProgress:
    """Finished levels as table lines; the level in progress on one line that redraws itself."""

    def __init__(self, console: Console):
        self.console = console
        self.status: Status | None = None
        self.table_started = False
        self.seeded: dict[str, int] = {}

    def message(self, text: str) -> None:
        self.console.print(text, highlight=False, soft_wrap=True)

    def seeding(self, table: str, rows: int, planned: dict[str, int]) -> None:
        self.seeded[table] = self.seeded.get(table, 0) + rows
        done, total = sum(self.seeded.values()), sum(planned.values())
        self._status(f"seeding {table}: {done:,} of {total:,} rows ({100 * done / total:.0f} %)")

    def live(self, view: LiveView) -> None:
        phase = "warming up" if view.warming_up else f"{view.elapsed:4.0f} s"
        self._status(
            f"level {view.level + 1} at {view.rate:,.0f} req/s, {phase}: offered {view.offered_rate:,.0f}/s, "
            f"achieved {view.achieved_rate:,.0f}/s, p95 {view.p95_ms:.1f} ms, failures {view.failures:,}"
        )

    def level(self, row: dict[str, Any]) -> None:
        self._stop_status()
        if not self.table_started:
            self.console.print(terminal.header("users" in row), highlight=False, soft_wrap=True)
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
        default=DEFAULT_PRESET,
        show_default=True,
        help="A named round of the workload; `dbladder workloads` lists each workload's presets "
        "(the shop's are the posts' rounds: read, shop20, shop20-1w, write, users-read, users-write, spike).",
    ),
    click.option("--writes", type=float, help="Share of requests that are writes (0 to 1). [preset]"),
    click.option("--start", type=float, help="Offered rate of the first level, req/s. [preset]"),
    click.option("--step", type=float, help="Rate added per level, req/s. [preset]"),
    click.option("--steps", type=int, help="Number of levels. [preset]"),
    click.option("--hold", type=float, help="Seconds each level (or users phase) is held. [preset]"),
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
        "--warmup", type=float, help="Seconds at the start of each level left out of its figures. [preset]"
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
    click.option(
        "--sqlite-writers", type=click.IntRange(0, 1), help="1: every write through one connection. [preset]"
    ),
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
]
"""Every option of a round but --db: `run` and `compare` share them."""


def round_options(command: Any) -> Any:
    """Apply ROUND_OPTIONS to a click command, in the order they are listed."""
    for option in reversed(ROUND_OPTIONS):
        command = option(command)
    return command


@click.command()
@db_option
@round_options
def run(**options: Any) -> None:
    """Climb a load ladder against one database and report where it stops."""
    config = build_config(options)
    console = Console(stderr=True)
    progress = TerminalProgress(console)
    try:
        result = run_ladder(config, progress)
    finally:
        progress.close()
    click.echo("")
    if not result["levels"]:
        click.echo("no level finished")
    click.echo(terminal.summary(result))
    click.echo(f"saved    {config.out_dir / 'result.json'}")
    click.echo(f"report   {config.out_dir / 'report.html'} (and report.md, levels.csv, timeseries.csv)")


def _users_plan(plan: UserPlan, options: dict[str, Any]) -> UserPlan:
    """The preset's users plan with --users, --ramp and --hold over it."""
    ladder_only = [f"--{name}" for name in ("start", "step", "steps", "warmup") if options[name] is not None]
    if ladder_only:
        raise UsageError(f"{', '.join(ladder_only)} apply to ladder presets; this preset is closed (users)")
    phases = list(plan.phases)
    if options["users_levels"]:
        try:
            counts = [int(part) for part in options["users_levels"].split(",")]
        except ValueError:
            raise UsageError(
                f"--users takes whole numbers separated by commas, not {options['users_levels']!r}"
            ) from None
        first = phases[0]
        phases = [Phase(count, first.ramp, first.hold) for count in counts]
    # --ramp sets every ramp except the spike's "at once" (0) jumps after the first phase.
    phases = [
        Phase(
            phase.users,
            phase.ramp if options["ramp"] is None or (phase.ramp == 0 and i) else options["ramp"],
            phase.hold if options["hold"] is None else options["hold"],
        )
        for i, phase in enumerate(phases)
    ]
    return dataclasses.replace(plan, phases=tuple(phases))


def build_config(options: dict[str, Any]) -> RunConfig:
    """A RunConfig from the command's options: the preset, with explicit options over it."""
    workload = load_workload(options["workload"])
    preset = get_preset(workload, options["preset"])
    ladder, users = preset.ladder, preset.users
    if users is not None:
        users = _users_plan(users, options)
    elif ladder is not None:
        names = ("start", "step", "steps", "hold", "warmup")
        ladder = dataclasses.replace(
            ladder, **{name: options[name] for name in names if options[name] is not None}
        )
    sqlite_writers = options["sqlite_writers"]
    if sqlite_writers is None:
        sqlite_writers = preset.sqlite_writers or 0
    return RunConfig(
        db_url=options["db_url"],
        workload=options["workload"],
        preset=preset.name,
        ladder=ladder if users is None else None,
        users=users,
        write_share=preset.write_share if options["writes"] is None else options["writes"],
        weights=dict(preset.weights) if preset.weights is not None and options["writes"] is None else None,
        pass_mark=PassMark(options["p95_ms"], options["max_fail_pct"]),
        seed=None if options["no_seed"] else options["seed_number"],
        scale=options["scale"],
        sizes=parse_sizes(options["size_settings"]),
        target=options["target"],
        workers=options["workers"],
        pool_size=options["pool_size"],
        sqlite_writers=sqlite_writers,
        generator_processes=options["generators"],
        in_flight=options["in_flight"],
        timeout=options["timeout"],
        precise_clock=options["precise_clock"],
        syscalls=options["syscalls"],
        continue_after_fail=options["continue_after_fail"],
        out_dir=options["out_dir"] or default_out_dir(),
        service_url=options["service_url"],
        allow_remote_target=options["allow_remote_target"],
    ).checked()
