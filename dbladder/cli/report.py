"""`dbladder report`: rebuild a bundle's reports, compare several bundles in one report, or show a
bundle on the live dashboard's page (`--serve`)."""

from __future__ import annotations

from pathlib import Path

import click

from ..dashboard import DashboardServer, state_of_bundle
from ..errors import UsageError
from ..report.bundle import build_reports, load_bundle

DEFAULT_PORT = 8090


@click.command()
@click.argument("bundles", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="BUNDLE...")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the reports (default: the bundle itself; needed when comparing several bundles).",
)
@click.option(
    "--serve",
    is_flag=True,
    help="Show one bundle on the page `--dashboard` serves during a run, at http://127.0.0.1:PORT/, "
    "until Ctrl-C (nothing is written).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="With --serve: the port on 127.0.0.1 (0 picks a free one).",
)
def report(bundles: tuple[Path, ...], out_dir: Path | None, serve: bool, port: int) -> None:
    """Rebuild levels.csv, report.md and report.html from result bundles.

    One BUNDLE (a folder with result.json) gets its reports rebuilt, in place or in --out.
    Several bundles make one comparison report in --out, grouped by round and engine.
    With --serve, one bundle (result.json or compare.json) is shown as the live dashboard shows a run.
    """
    if serve:
        serve_bundle(bundles, port)
        return
    if out_dir is None:
        if len(bundles) > 1:
            raise UsageError("several bundles make one comparison report: give --out DIR for it")
        out_dir = bundles[0].parent if bundles[0].is_file() else bundles[0]
    for path in build_reports(list(bundles), out_dir):
        click.echo(f"wrote    {path}")


def serve_bundle(bundles: tuple[Path, ...], port: int) -> None:
    """Serve one bundle's page until Ctrl-C."""
    if len(bundles) > 1:
        raise UsageError("--serve shows one bundle: give one BUNDLE")
    bundle = load_bundle(bundles[0])
    title = f"dbladder report {bundle.path}"
    state = state_of_bundle(bundle.runs, bundle.samples, title, bundle.kind == "compare")
    server = DashboardServer(state, port=port, live=False)
    click.echo(f"serving  {server.url} (Ctrl-C to stop)")
    server.serve_until_interrupted()
