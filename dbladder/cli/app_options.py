"""The options that put the user's own app under test (`--app` and the rest), on `run` and
`compare`: parsed here into the round's config fields, checked there (RunConfig)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..app.process import AppCommand
from ..errors import UsageError
from ..run.warm_up import DEFAULT_APP_WARMUP_S
from .option_lists import with_options

_DEFAULTS = AppCommand("")

APP_OPTIONS = [
    click.option(
        "--app",
        "app_command",
        metavar="CMD",
        help="Start your own app with this shell command (in the foreground, on 127.0.0.1:{port}; its "
        "database in DATABASE_URL and DBLADDER_DB_*) instead of dbladder's service; needs --requests.",
    ),
    click.option(
        "--app-dir",
        type=click.Path(file_okay=False, path_type=Path),
        help="The folder --app and --app-setup run in. [the current folder]",
    ),
    click.option(
        "--app-ready",
        metavar="PATH",
        default=_DEFAULTS.ready_path,
        show_default=True,
        help="The app is ready when this path answers below 500.",
    ),
    click.option(
        "--app-ready-timeout",
        type=click.FloatRange(min=0, min_open=True),
        metavar="SECONDS",
        help=f"How long the app has to become ready. [{_DEFAULTS.ready_timeout:g}]",
    ),
    click.option(
        "--app-setup",
        metavar="CMD",
        help="Run once on the database before the round, with the app's environment (migrations, "
        "fixtures, a seed script); a comparison snapshots its result for every run.",
    ),
    click.option(
        "--requests",
        "requests_file",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="FILE.py",
        help="What to send to the app: a Python file ending in `requests = Requests(...)` (docs/app.md).",
    ),
    click.option(
        "--app-warmup",
        "app_warmup",
        type=float,
        metavar="SECONDS",
        help="Before the first level, warm the app for at most this long: every request once, each "
        "value of a Param.rows path parameter once, then each request until its latency settles, one "
        f"at a time. [{DEFAULT_APP_WARMUP_S:g}]",
    ),
    click.option(
        "--no-app-warmup",
        is_flag=True,
        help="Send the first level to the app cold, without the warm-up.",
    ),
]


def app_options(command: Any) -> Any:
    """Apply APP_OPTIONS to a click command."""
    return with_options(command, APP_OPTIONS)


def app_fields(options: dict[str, Any]) -> dict[str, Any]:
    """RunConfig's `app`, `requests_file` and `warm_up_s` from the command's options; UsageError
    for warm-up options that do not go together."""
    command = options.get("app_command")
    seconds, cold = options.get("app_warmup"), options.get("no_app_warmup")
    if seconds is not None and cold:
        raise UsageError("--app-warmup SECONDS and --no-app-warmup: give one")
    if command is None and (seconds is not None or cold):
        raise UsageError(f"{'--no-app-warmup' if cold else '--app-warmup'} goes with --app")
    app = None
    if command is not None:
        app = AppCommand(
            command,
            options.get("app_dir") or Path("."),
            options["app_ready"],
            options["app_ready_timeout"] or _DEFAULTS.ready_timeout,
            options.get("app_setup"),
        )
    warm_up = None if app is None or cold else (DEFAULT_APP_WARMUP_S if seconds is None else seconds)
    return {"app": app, "requests_file": options.get("requests_file"), "warm_up_s": warm_up}
