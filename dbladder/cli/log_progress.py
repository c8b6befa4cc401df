"""Progress where no terminal is (a CI log, `2>log`): a line every few seconds, as `pgbench -P` does.

On a terminal `TerminalProgress` (cli/run.py) redraws one status line, which a log would show as
nothing at all, or as hundreds of lines of control codes. Here the level in progress is one plain
line every `interval` seconds: its elapsed time, the rate sent and answered, p95 so far, failures.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console

from ..load.live_view import LiveView
from ..report import terminal
from ..run.progress import seeding_line

DEFAULT_INTERVAL = 5.0


class LogProgress:
    """A Progress that writes plain lines: messages, a line per `interval` while a level runs, and
    each finished level's table line."""

    def __init__(self, console: Console, interval: float = DEFAULT_INTERVAL):
        self.console = console
        self.interval = interval
        self.last_line = time.monotonic()
        self.table_started = False

    def _line(self, text: str) -> None:
        self.console.print(text, highlight=False, soft_wrap=True, markup=False)
        self.last_line = time.monotonic()

    def _due(self) -> bool:
        return time.monotonic() - self.last_line >= self.interval

    def message(self, text: str) -> None:
        self._line(text)

    def seeding(self, database: str, table: str, done: int, total: int) -> None:
        if self._due():
            self._line(f"progress: {seeding_line(database, table, done, total)}")

    def live(self, view: LiveView) -> None:
        if self._due():
            self._line(progress_line(view))

    def level(self, row: dict[str, Any]) -> None:
        if not self.table_started:
            self._line(terminal.header_of(row))
            self.table_started = True
        self._line(terminal.level_line(row))

    def close(self) -> None:
        pass


def progress_line(view: LiveView) -> str:
    """One line of a level in progress: "progress: level 2 at 400 req/s, 12.0 s: sent 399.8 req/s,
    answered 399.5 req/s, p95 3.1 ms, failures 0"."""
    phase = f"warming up {view.elapsed:.1f} s" if view.warming_up else f"{view.elapsed:.1f} s"
    return (
        f"progress: level {view.level + 1} at {view.rate:,.0f} req/s, {phase}: "
        f"sent {view.offered_rate:,.1f} req/s, answered {view.achieved_rate:,.1f} req/s, "
        f"p95 {view.p95_ms:.1f} ms, failures {view.failures:,}"
    )
