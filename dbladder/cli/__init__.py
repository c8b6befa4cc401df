"""The `dbladder` command: a thin layer over the library.

Each subcommand lives in its own module, parses options, builds a config, calls one library
function and prints. `main` is the one place that turns dbladder's own errors into one line and
an exit code (1 for a runtime error, 2 for a usage error, 3 for an expectation not met, 4 for
writes lost); only a bug shows a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import __version__
from ..errors import DbladderError, InvalidConfig, ReportedOutcome
from . import bench, check_instances, cluster, compare, db, engines, report, run, seed, serve, workloads
from .config_file import CONFIG_ENV, FILE_KEY, config_path, name_environment, read_config
from .option_names import worded_for_the_command_line


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="dbladder")
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar=CONFIG_ENV,
    help="Settings file: a TOML table per command ([run], [compare]...). Default: ./dbladder.toml "
    "when there is one. Every option also reads DBLADDER_<OPTION> (--hold: DBLADDER_HOLD); the "
    "command line wins over the environment, the environment over the file.",
)
@click.pass_context
def cli(ctx: click.Context, config_file: Path | None) -> None:
    """Which database holds my web app, and where does each one stop?"""
    path = config_path(config_file)
    if path is not None:
        ctx.default_map = read_config(path, cli)
        ctx.meta[FILE_KEY] = path


cli.add_command(engines.engines)
cli.add_command(seed.seed_command)
cli.add_command(run.run)
cli.add_command(compare.compare)
cli.add_command(serve.serve)
cli.add_command(check_instances.check_instances)
cli.add_command(report.report)
cli.add_command(workloads.workloads)
cli.add_command(db.db)
cli.add_command(bench.bench)
cli.add_command(cluster.scheduler)
cli.add_command(cluster.agent)
name_environment(cli)


def main() -> None:
    try:
        # prog_name fixed, so `python -m dbladder` answers shell completion (_DBLADDER_COMPLETE) too.
        cli.main(prog_name="dbladder", standalone_mode=False)
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
