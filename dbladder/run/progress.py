"""What a run tells its caller while it works: the CLI draws it, tests can record it."""

from __future__ import annotations

from typing import Any, Protocol

from ..load.live_view import LiveView


class Progress(Protocol):
    """What a run tells its caller while it works (the CLI draws it; tests can record it)."""

    def message(self, text: str) -> None: ...

    def seeding(self, table: str, rows: int, planned: dict[str, int]) -> None: ...

    def live(self, view: LiveView) -> None: ...

    def level(self, row: dict[str, Any]) -> None: ...


class QuietProgress:
    """A Progress that ignores everything."""

    def message(self, text: str) -> None:
        pass

    def seeding(self, table: str, rows: int, planned: dict[str, int]) -> None:
        pass

    def live(self, view: LiveView) -> None:
        pass

    def level(self, row: dict[str, Any]) -> None:
        pass
