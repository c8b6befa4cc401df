"""The `dbladder` command: a thin layer over the library.

Each subcommand lives in its own module, parses options, builds a config, calls one library
function and prints. `main` is the one place that turns dbladder's own errors into one line and
an exit code (1 for a runtime error, 2 for a usage error, 3 for an expectation not met, 4 for
writes lost); only a bug shows a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from .. import __version__
from ..errors import DbladderError, InvalidConfig, ReportedOutcome
from .config_file import CONFIG_ENV, GIVEN_KEY, config_path, prepare_command
from .lazy_group import LazyCommand, LazyGroup
from .option_names import worded_for_the_command_line

COMMANDS = {
    "agent": LazyCommand(
        "dbladder.cli.cluster:agent",
        "Serve this machine to runs as a load, app or db agent (a Dask worker), until stopped.",
    ),
    "bench": LazyCommand(
        "dbladder.cli.bench:bench",
        "Raw rounds (point reads, write transactions, batched inserts) beside bare references.",
    ),
    "check-instances": LazyCommand(
        "dbladder.cli.check_instances:check_instances",
        "Create an order through one instance and read it through another (exit 1 if they disagree).",
    ),
    "compare": LazyCommand(
        "dbladder.cli.compare:compare",
        'Run one round against several databases and print the "Result first" table of "Postgres vs '
        "MariaDB on two dedicated CPUs\": every run's figure per database and the verdict of the rule in "
        "docs/experiments.md (a winner needs 3 runs of each).",
    ),
    "db": LazyCommand(
        "dbladder.cli.db:db", "Throwaway database servers that dbladder starts, owns and removes."
    ),
    "engines": LazyCommand(
        "dbladder.cli.engines:engines",
        "Show the engine's versions, transport, durability, isolation and pool.",
    ),
    "report": LazyCommand(
        "dbladder.cli.report:report", "Rebuild levels.csv, report.md and report.html from result bundles."
    ),
    "run": LazyCommand(
        "dbladder.cli.run:run",
        "Find where one database stops: raise the rate until a level fails, then narrow it down.",
    ),
    "scheduler": LazyCommand(
        "dbladder.cli.cluster:scheduler",
        "Run the cluster's scheduler: Dask's, with dbladder's defaults (profiler off, a 10 s worker TTL).",
    ),
    "seed": LazyCommand(
        "dbladder.cli.seed:seed_command", "Replace a workload's tables with a deterministic data set."
    ),
    "serve": LazyCommand(
        "dbladder.cli.serve:serve",
        "Serve a workload's JSON API until Ctrl-C or SIGTERM (in-flight requests finish first).",
    ),
    "workloads": LazyCommand(
        "dbladder.cli.workloads:workloads",
        "List the workloads: built-in, installed by packages, and any FILE.py given.",
    ),
}
"""Each command's module, imported when the command is run (dbladder.cli.lazy_group says why)."""


class DbladderGroup(LazyGroup):
    """The top group; its `main` is the one place that turns dbladder's errors into exit codes, so
    the installed command and click's CliRunner (the in-process tests) end a command alike."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            # prog_name fixed, so `python -m dbladder` answers shell completion (_DBLADDER_COMPLETE) too.
            kwargs.setdefault("prog_name", "dbladder")
            super().main(*args, **kwargs)
        except click.exceptions.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(130)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except InvalidConfig as exc:
            click.echo(f"Error: {worded_for_the_command_line(exc)}", err=True)
            sys.exit(exc.exit_code)
        except DbladderError as exc:
            if not isinstance(exc, ReportedOutcome):  # an outcome was printed in full by its command
                click.echo(f"Error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            sys.exit(130)
        sys.exit(0)


@click.group(
    cls=DbladderGroup,
    lazy_commands=COMMANDS,
    prepare=prepare_command,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, "-V", "--version", prog_name="dbladder")
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar=CONFIG_ENV,
    help="Settings file: a TOML table per command ([run], [compare]...). Default: ./dbladder.toml "
    "when there is one. Also after the command (dbladder run --config FILE). Every option also "
    "reads DBLADDER_<OPTION> (--hold: DBLADDER_HOLD); the command line wins over the environment, "
    "the environment over the file.",
)
@click.pass_context
def cli(ctx: click.Context, config_file: Path | None) -> None:
    """Which database holds my web app, and where does each one stop?"""
    # Checked here, read by the command (config_file.read_settings): `dbladder run --config F`
    # names a file after the command, and only the command knows which table is its own.
    ctx.meta[GIVEN_KEY] = config_path(config_file)


def main() -> None:
    cli.main()
