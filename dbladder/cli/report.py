"""`dbladder report`: rebuild a bundle's reports, or compare several bundles in one report."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import UsageError
from ..report.bundle import build_reports


@click.command()
@click.argument("bundles", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="BUNDLE...")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the reports (default: the bundle itself; needed when comparing several bundles).",
)
def report(bundles: tuple[Path, ...], out_dir: Path | None) -> None:
    """Rebuild levels.csv, report.md and report.html from result bundles.

    One BUNDLE (a folder with result.json) gets its reports rebuilt, in place or in --out.
    Several bundles make one comparison report in --out, grouped by round and engine.
    """
    if out_dir is None:
        if len(bundles) > 1:
            raise UsageError("several bundles make one comparison report: give --out DIR for it")
        out_dir = bundles[0].parent if bundles[0].is_file() else bundles[0]
    for path in build_reports(list(bundles), out_dir):
        click.echo(f"wrote    {path}")
