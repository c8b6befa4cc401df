"""Options and helpers shared by several subcommands."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator, Sequence
from typing import Any

import click

from ..engines.base import DEFAULT_POOL_SIZE, EngineInfo, EngineOptions
from ..errors import DbladderError, UsageError
from ..load.presets import presets_for
from ..servers import Database, parse_database
from ..urls import DB_URL_ENV, url_text
from ..workloads.registry import DEFAULT_WORKLOAD, load_workload

DEFAULT_DB = "sqlite:///shop.db"
EXIT_CODES = {
    0: "success",
    1: "runtime error",
    2: "usage error",
    3: "an --expect-* not met",
    4: "acknowledged writes lost or corrupted",
}


def exit_codes(*codes: int) -> str:
    """The help's closing line for a command that can end with `codes`."""
    return "Exit codes: " + ", ".join(f"{code} {EXIT_CODES[code]}" for code in codes) + "."


SEED_MAX = 2**63 - 1  # what a run's config accepts (RunConfig.validate) and numpy's generators take


PARSED_DB = "dbladder.parsed_db"
"""Where the click context's meta keeps DBLADDER_DB_URL as `_db_text` parsed it (`parsed_db`)."""


def _db_text(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
    # --db, else DBLADDER_DB_URL, else the default; @path reads the URL from a file (urls.url_text).
    if value is not None or not os.environ.get(DB_URL_ENV):
        return url_text(value, os.environ, default=DEFAULT_DB)
    # From the environment: checked here, where it is known to come from there, so that a bad one
    # names the variable rather than an option the user never gave. The parse is kept, so that
    # the command goes on with it rather than parsing the text again (`parsed_db`).
    try:
        text = url_text(None, os.environ)
        parsed = parse_database(text)
    except UsageError as exc:
        raise type(exc)(f"{DB_URL_ENV}: {exc}") from None
    ctx.meta[PARSED_DB] = parsed
    return text


def parsed_db(text: str) -> Database | None:
    """The running command's --db as `_db_text` parsed it, when it did (from DBLADDER_DB_URL) and
    it is still `text`; None otherwise (outside a command too): the caller parses it, once."""
    ctx = click.get_current_context(silent=True)
    parsed = ctx.meta.get(PARSED_DB) if ctx is not None else None
    return parsed if parsed is not None and parsed.raw == text else None


def db_texts(values: Sequence[str]) -> tuple[str, ...]:
    """Each repeated --db as `url_text` reads it (@path from a file)."""
    return tuple(url_text(value, os.environ) for value in values)


db_option = click.option(
    "--db",
    "db_url",
    default=None,
    callback=_db_text,
    metavar="URL|@FILE",
    help="Database URL: sqlite:///file.db, postgresql://user@host:port/db, mariadb://user@host:port/db; "
    f"@FILE reads it from a file. Default: ${DB_URL_ENV}, else {DEFAULT_DB}. No password here: "
    "PGPASSWORD or ~/.pgpass, ~/.my.cnf or MYSQL_PWD supply it.",
)
pool_option = click.option(
    "--pool",
    "pool_size",
    default=DEFAULT_POOL_SIZE,
    show_default=True,
    type=int,
    help="Connection pool size (for the service: in all, shared among its workers).",
)


def engine_options(pool_size: int, create: bool = True) -> EngineOptions:
    return EngineOptions(pool_size=pool_size, create=create).checked()


def warn_if_not_durable(info: EngineInfo) -> None:
    """The one loud line every command prints when writes may be acknowledged before the disk has them."""
    warning = info.durability_warning
    if warning:
        click.secho(warning, fg="red", bold=True, err=True)


def complete_preset(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Shell completion of --preset: the presets of the workload chosen so far on the line."""
    try:
        workload = load_workload(ctx.params.get("workload") or DEFAULT_WORKLOAD)
    except DbladderError:
        return []  # a workload that does not load completes nothing; running it will say why
    return [name for name in presets_for(workload) if name.startswith(incomplete)]


workload_option = click.option(
    "--workload",
    default=DEFAULT_WORKLOAD,
    show_default=True,
    metavar="NAME|FILE.py|MODULE:ATTR",
    help="The web app: a workload name (dbladder workloads lists them), a Python file that defines "
    "`workload`, or module:attribute.",
)
DATA_OPTIONS = [
    click.option(
        "--scale",
        type=float,
        default=1.0,
        show_default=True,
        help="Multiply the workload's default data sizes (1: the posts' sizes).",
    ),
    click.option(
        "--size",
        "size_settings",
        multiple=True,
        metavar="NAME=N",
        help="Set one size of the data set, e.g. --size orders=5000 (repeatable; "
        "dbladder workloads lists each workload's sizes).",
    ),
    click.option(
        "--seed",
        "seed_number",
        type=click.IntRange(0, SEED_MAX),  # one rule for seed, run and compare
        default=1,
        show_default=True,
        help="Random seed of the data set: the same number gives the same rows on every engine.",
    ),
]


def data_options(command: Any) -> Any:
    """Apply --scale, --size and --seed to a click command."""
    for option in reversed(DATA_OPTIONS):
        command = option(command)
    return command


def parse_sizes(settings: tuple[str, ...]) -> dict[str, int]:
    """{"orders": 5000} from ("orders=5000",), or UsageError naming the bad setting."""
    sizes: dict[str, int] = {}
    for setting in settings:
        name, _, value = setting.partition("=")
        if not name or not value.strip().isdigit():
            raise UsageError(
                f"--size takes NAME=N with a whole number N, e.g. --size orders=5000, not {setting!r}"
            )
        name = name.strip()
        if name in sizes:
            raise UsageError(f"--size {name} is given twice ({name}={sizes[name]} and {setting}); give one")
        sizes[name] = int(value)
    return sizes


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM handled as Ctrl-C for the block: the run stops its load, keeps what it measured, and
    removes what it started (a managed server, the service) instead of dying without `finally`.

    It calls whatever handles SIGINT at that moment, so a run noting Ctrl-C in a flag
    (run/interrupts.py) notes SIGTERM too."""

    def interrupt(signum: int, frame: Any) -> None:
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
