"""--db and --pool, as every command that opens a database takes them, and the loud line for a
database whose writes may be acknowledged before they reach the disk."""

from __future__ import annotations

import os
from collections.abc import Sequence

import click

from ..engines.base import DEFAULT_POOL_SIZE, EngineInfo, EngineOptions
from ..errors import UsageError
from ..servers import Database, parse_database
from ..urls import DB_URL_ENV, url_text

DEFAULT_DB = "sqlite:///shop.db"
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
