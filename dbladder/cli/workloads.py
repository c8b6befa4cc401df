"""`dbladder workloads`: the workloads available, a line each (tables, operations, mix)."""

from __future__ import annotations

import json

import click

from ..workloads.registry import available


@click.command()
@click.argument("files", nargs=-1, metavar="[FILE.py ...]")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def workloads(files: tuple[str, ...], as_json: bool) -> None:
    """List the workloads: built-in, installed by packages, and any FILE.py given.

    Give one to any command with --workload NAME, --workload path/to/app.py or
    --workload package.module:attribute.
    """
    listed = available(files)
    if as_json:
        click.echo(
            json.dumps(
                [
                    item.workload.summary() if item.workload else {"name": item.name, "problem": item.problem}
                    for item in listed
                ],
                indent=2,
            )
        )
        return
    for item in listed:
        if item.workload is None:
            click.echo(f"{item.name}  ({item.source}) cannot be loaded: {item.problem}")
            continue
        summary = item.workload.summary()
        mix = ", ".join(
            f"{op['name']} {op['share']:.0%}{' (write)' if op['write'] else ''}"
            for op in summary["operations"]
        )
        click.echo(f"{summary['name']}  ({item.source}): {summary['description']}")
        click.echo(f"    tables {', '.join(summary['tables'])}; mix {mix}")
