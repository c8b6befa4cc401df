"""The options that put the user's own app under test (`--app` and the rest), on `run` and
`compare`: parsed here into the round's config fields, checked there (RunConfig)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..app.process import AppCommand

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
]


def app_options(command: Any) -> Any:
    """Apply APP_OPTIONS to a click command."""
    for option in reversed(APP_OPTIONS):
        command = option(command)
    return command


def app_fields(options: dict[str, Any]) -> dict[str, Any]:
    """RunConfig's `app` and `requests_file` from the command's options."""
    command = options.get("app_command")
    app = None
    if command is not None:
        app = AppCommand(
            command,
            options.get("app_dir") or Path("."),
            options["app_ready"],
            options["app_ready_timeout"] or _DEFAULTS.ready_timeout,
            options.get("app_setup"),
        )
    return {"app": app, "requests_file": options.get("requests_file")}
