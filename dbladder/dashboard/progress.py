"""The dashboard as one more reader of a run's progress: every event goes to the caller's own
progress (the terminal's, the log's) and then into the dashboard's state."""

from __future__ import annotations

from typing import Any

from ..load.live_view import LiveView
from .state import DashboardState


class DashboardProgress:
    """A Progress (run/progress.py) that hands every event to `inner` and to `state`."""

    def __init__(self, inner: Any, state: DashboardState):
        self.inner = inner
        self.state = state

    def message(self, text: str) -> None:
        self.inner.message(text)
        self.state.message(text)

    def seeding(self, database: str, table: str, done: int, total: int) -> None:
        self.inner.seeding(database, table, done, total)  # the page says "seeding" from the messages alone

    def live(self, view: LiveView) -> None:
        self.inner.live(view)
        self.state.live(view)

    def level(self, row: dict[str, Any]) -> None:
        self.inner.level(row)
        self.state.level(row)

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()
