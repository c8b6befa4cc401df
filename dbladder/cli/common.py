"""Options and helpers shared by several subcommands."""

from __future__ import annotations

import click

from ..engines.base import DEFAULT_POOL_SIZE, EngineInfo, EngineOptions

DEFAULT_DB = "sqlite:///shop.db"

db_option = click.option(
    "--db",
    "db_url",
    default=DEFAULT_DB,
    show_default=True,
    metavar="URL",
    help="Database URL: sqlite:///file.db, postgresql://user@host:port/db, mariadb://user@host:port/db.",
)
pool_option = click.option(
    "--pool",
    "pool_size",
    default=DEFAULT_POOL_SIZE,
    show_default=True,
    type=int,
    help="Connection pool size (for the service: in all, shared among its workers).",
)


def engine_options(pool_size: int) -> EngineOptions:
    return EngineOptions(pool_size=pool_size).checked()


def warn_if_not_durable(info: EngineInfo) -> None:
    """The one loud line every command prints when writes may be acknowledged before the disk has them."""
    warning = info.durability_warning
    if warning:
        click.secho(warning, fg="red", bold=True, err=True)
