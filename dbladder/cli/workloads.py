"""`dbladder workloads`: the workloads available (tables, operations, mix, sizes, presets)."""

from __future__ import annotations

import json
from typing import Any

import click

from ..errors import UsageError
from ..load.presets import presets_for
from ..workloads.base import Workload
from ..workloads.registry import available


@click.command()
@click.argument("files", nargs=-1, metavar="[FILE.py ...]")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def workloads(files: tuple[str, ...], as_json: bool) -> None:
    """List the workloads: built-in, installed by packages, and any FILE.py given.

    Give one to any command with --workload NAME, --workload path/to/app.py or
    --workload package.module:attribute. A workload that cannot be loaded is listed with why, and
    the command exits 2.
    """
    listed = available(files)
    if as_json:
        click.echo(
            json.dumps(
                [
                    _summary(item.workload) if item.workload else {"name": item.name, "problem": item.problem}
                    for item in listed
                ],
                indent=2,
            )
        )
    else:
        for item in listed:
            if item.workload is not None:
                click.echo(_lines(_summary(item.workload), item.source))
    problems = [item.problem for item in listed if item.workload is None]
    if problems:
        # Every broken one on its own line first, then the exit code of a usage error.
        for problem in problems[:-1]:
            click.echo(f"Error: {problem}", err=True)
        raise UsageError(problems[-1])


def _summary(workload: Workload) -> dict[str, Any]:
    # Every preset --preset takes: the workload's own and the generic ones (quick).
    return {**workload.summary(), "presets": list(presets_for(workload))}


def _lines(summary: dict[str, Any], source: str) -> str:
    mix = ", ".join(
        f"{op['name']} {op['share']:.0%}{' (write)' if op['write'] else ''}" for op in summary["operations"]
    )
    sizes = ", ".join(f"{name}={rows}" for name, rows in summary["sizes"].items())
    lines = [
        f"{summary['name']}  ({source}): {summary['description']}",
        f"    tables {', '.join(summary['tables'])}; mix {mix}",
        f"    sizes {sizes or 'none'} (--size NAME=N); presets {', '.join(summary['presets']) or 'none'}",
    ]
    return "\n".join(lines)
