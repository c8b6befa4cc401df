"""What a run tells its caller while it works: the CLI draws it, tests can record it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..load.live_view import LiveView


class Progress(Protocol):
    """What a run tells its caller while it works (the CLI draws it; tests can record it)."""

    def message(self, text: str) -> None: ...

    def seeding(self, database: str, table: str, done: int, total: int) -> None:
        """`done` of the `total` rows one seeding of `database` loads are in (now loading `table`)."""

    def live(self, view: LiveView) -> None: ...

    def level(self, row: dict[str, Any]) -> None: ...


class QuietProgress:
    """A Progress that ignores everything."""

    def message(self, text: str) -> None:
        pass

    def seeding(self, database: str, table: str, done: int, total: int) -> None:
        pass

    def live(self, view: LiveView) -> None:
        pass

    def level(self, row: dict[str, Any]) -> None:
        pass


def seeding_pass(progress: Progress, database: str, planned: dict[str, int]) -> Callable[[str, int], None]:
    """The rows callback (dbladder.data.seeding) for one seeding of `database`, made as it starts:
    a count of its own from 0, so that the next engine, or the same one seeded again, starts again
    at 0 %."""
    total = sum(planned.values())
    done = 0
    progress.seeding(database, next(iter(planned), ""), 0, total)  # shown at once, at 0 %

    def loaded(table: str, rows: int) -> None:
        nonlocal done
        done += rows
        progress.seeding(database, table, done, total)

    return loaded


def seeding_line(database: str, table: str, done: int, total: int) -> str:
    """The one line the terminal and the log show for a seeding's progress."""
    share = 100 * done / total if total else 100.0
    return f"seeding {database}: {table}: {done:,} of {total:,} rows ({share:.0f} %)"
