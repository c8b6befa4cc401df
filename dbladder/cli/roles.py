"""The options that give each role its place on the machine, shared by run, compare, serve and bench:
`--cpus ROLE=LIST`, `--memory ROLE=SIZE` (repeatable) and `--drop-caches`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from ..roles import ROLES, Placement, UnmanagedRole, parse_placement
from ..run.role_groups import placement_problems

F = TypeVar("F", bound=Callable[..., Any])

ROLE_NAMES = ", ".join(ROLES)


def role_options(command: F) -> F:
    """Add --cpus, --memory and --drop-caches to a command (as `cpus`, `memory`, `drop_caches`)."""
    command = click.option(
        "--drop-caches",
        is_flag=True,
        help="Drop the kernel's page cache before each run (root only), so every run starts from disk.",
    )(command)
    command = click.option(
        "--memory",
        "memory",
        multiple=True,
        metavar="ROLE=SIZE",
        help=f"Cap a role's memory, page cache included, in a cgroup of its own: database=512M "
        f"(roles: {ROLE_NAMES}; root or a delegated cgroup). Repeatable.",
    )(command)
    command = click.option(
        "--cpus",
        "cpus",
        multiple=True,
        metavar="ROLE=LIST",
        help=f"Run a role only on these CPUs, as taskset writes them: generator=0, database=1-3 "
        f"(roles: {ROLE_NAMES}; the database only on a managed: server). Repeatable.",
    )(command)
    return command


def placement_from(cpus: tuple[str, ...], memory: tuple[str, ...], drop_caches: bool) -> Placement:
    """The placement the options ask for; BadPlacement (one line, exit 2) for anything wrong."""
    return parse_placement(cpus, memory, drop_caches)


def round_placement(options: dict[str, Any], db_urls: Sequence[str]) -> Placement:
    """A round's placement from its options, refused in one line (exit 2) when a role cannot be
    placed on one of `db_urls` (a comparison's every database): a database dbladder does not
    start, a service it does not run. Each problem once, however many databases share it."""
    placement = placement_from(options["cpus"], options["memory"], options["drop_caches"])
    problems: dict[str, None] = {}
    for db_url in db_urls:
        found = placement_problems(placement, db_url, options["target"], options["service_url"])
        problems.update(dict.fromkeys(found))
    if problems:
        raise UnmanagedRole("; ".join(problems))
    return placement
