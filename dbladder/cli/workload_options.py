"""--workload, --preset's completion, and the data's --scale, --size and --seed, as `run`, `compare`,
`seed` and `serve` take them."""

from __future__ import annotations

from typing import Any

import click

from ..errors import DbladderError, UsageError
from ..load.presets import presets_for
from ..workloads.registry import DEFAULT_WORKLOAD, load_workload
from .option_lists import with_options

SEED_MAX = 2**63 - 1  # what a run's config accepts (RunConfig.validate) and numpy's generators take


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
    return with_options(command, DATA_OPTIONS)


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
