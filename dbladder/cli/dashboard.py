"""`--dashboard [HOST:]PORT` of `run` and `compare`: the live page beside the run (docs/dashboard.md)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import click

from ..dashboard import DashboardProgress, DashboardServer, DashboardState, check_address, parse_address
from ..result.run import RunResult


def dashboard_options(command: Any) -> Any:
    """Add --dashboard and --allow-remote-dashboard to a command."""
    command = click.option(
        "--allow-remote-dashboard",
        is_flag=True,
        help="Let --dashboard listen on an address other machines can reach (0.0.0.0: every address "
        "of this one); anyone who reaches it sees the run.",
    )(command)
    return click.option(
        "--dashboard",
        metavar="[HOST:]PORT",
        help="Serve a live page of the run at http://HOST:PORT/ (server-sent events; /metrics in "
        "OpenMetrics text for Prometheus); HOST is 127.0.0.1 unless given, PORT 0 picks a free one.",
    )(command)


@dataclass
class Board:
    """What a command tells the dashboard beyond its progress: a round's result, a comparison's runs."""

    progress: Any
    state: DashboardState | None = None

    def finished(self, result: RunResult) -> None:
        if self.state is not None:
            self.state.finish(result)

    def compared(self, runs: Sequence[RunResult]) -> None:
        if self.state is not None:
            self.state.compared(runs)


@contextlib.contextmanager
def live_dashboard(options: Mapping[str, Any], progress: Any, title: str, pass_mark: Any) -> Iterator[Board]:
    """The dashboard the options ask for, fed by `progress`'s events, for the block; without
    --dashboard, `progress` alone. Refused in one line (exit 2) before anything runs."""
    address = options.get("dashboard")
    if not address:
        yield Board(progress)
        return
    host, port = parse_address(address)
    check_address(host, options.get("allow_remote_dashboard", False))
    state = DashboardState(title, asdict(pass_mark))
    with DashboardServer(state, host, port) as server:
        progress.message(f"dashboard {server.url} (metrics at {server.url}metrics)")
        status = "failed"
        try:
            yield Board(DashboardProgress(progress, state), state)
            status = "finished"
        except KeyboardInterrupt:
            status = "interrupted"
            raise
        finally:
            state.end(status)
