"""What a run tells its caller (dbladder.run.progress): the quiet one says nothing; a seeding's counts."""

from __future__ import annotations

import asyncio
import io
from typing import Any

from rich.console import Console

from dbladder.cli.log_progress import LogProgress
from dbladder.data.fresh import FreshData
from dbladder.load.live_view import LiveView
from dbladder.run.compare import seeder
from dbladder.run.progress import Progress, QuietProgress
from dbladder.workloads import shop
from dbladder.workloads.base import DataSpec


def test_quiet_progress_is_a_progress_that_ignores_everything(capsys) -> None:
    progress: Progress = QuietProgress()
    progress.message("seeding")
    progress.seeding("sqlite", "products", 10, 10)
    progress.live(LiveView(0, 10.0, 1.0, False, 10.0, 10.0, 1.0, 0))
    progress.level({"index": 0})
    assert capsys.readouterr() == ("", "")


class RecordedSeeding:
    """A Progress that keeps the seeding events, (database, done, total)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, int, int]] = []

    def message(self, text: str) -> None:
        pass

    def seeding(self, database: str, table: str, done: int, total: int) -> None:
        self.events.append((database, done, total))

    def live(self, view: LiveView) -> None:
        pass

    def level(self, row: dict[str, Any]) -> None:
        pass


def test_each_database_of_a_comparison_seeds_from_0_to_100_percent(tmp_path) -> None:
    # The comparison's seeding of two real SQLite files, one after the other, as run_compare does
    # it: the second one once counted on from the first's rows (132 % and more).
    data = DataSpec(1, {"products": 200, "orders": 500})
    planned = shop.workload.planned_rows(data.sizes)
    progress = RecordedSeeding()
    for label in ("sqlite-1", "sqlite-2"):
        copies = FreshData(
            f"sqlite:///{tmp_path}/{label}.db",
            shop.workload,
            data,
            method="reseed",
            make=seeder(shop.workload, data, progress, label, planned),
        )
        asyncio.run(copies.prepare())
        asyncio.run(copies.before_run())
        asyncio.run(copies.before_run())  # run 2 seeds again: a pass of its own
    passes: list[list[tuple[str, int, int]]] = []
    for event in progress.events:
        if event[1] == 0:  # a seeding starts
            passes.append([])
        passes[-1].append(event)
    # Each database: the first seeding and run 2's re-seed, each from 0 up to exactly 100 %.
    assert [part[0][0] for part in passes] == ["sqlite-1", "sqlite-1", "sqlite-2", "sqlite-2"]
    total = sum(planned.values())
    for part in passes:
        shares = [100 * done / events_total for _, done, events_total in part]
        assert all(events_total == total for _, _, events_total in part)
        assert shares[0] == 0 and shares[-1] == 100 and max(shares) <= 100, shares

    # What the log shows for it names the database.
    console = Console(file=io.StringIO(), width=200)
    log = LogProgress(console, interval=0)
    for database, done, events_total in progress.events[-2:]:
        log.seeding(database, "orders", done, events_total)
    assert (
        console.file.getvalue().splitlines()[-1]
        == f"progress: seeding sqlite-2: orders: {total:,} of {total:,} rows (100 %)"
    )
