"""The run's one loop: level after level as the plan asks, each judged and added to the result."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..load.fleet import Fleet, GeneratorFailed, LevelDone
from ..load.live_view import LiveView
from ..plans import Outcome, Stop
from .config import RunConfig
from .document import Run, outcome_of
from .interrupts import Interrupted
from .observation import RunObserver
from .progress import Progress


class DatabaseLost(Exception):
    """The managed database was lost during a level (killed for memory, its process gone): the
    level is marked, and the run stops with the levels finished before it."""


def _rows(
    events: Iterable[LevelDone | LiveView],
    run: Run,
    observer: RunObserver,
    progress: Progress,
    interrupted: Interrupted,
) -> Iterator[tuple[dict[str, Any], float]]:
    """The result row of each level as the fleet finishes it, added to the run and reported, with
    the moment (time.monotonic()) the fleet said it was done; the live views in between go to
    `progress`. Stops at a Ctrl-C noted by `interrupted`."""
    for event in events:
        interrupted.check()
        if not isinstance(event, LevelDone):
            progress.live(dataclasses.replace(event, cpu=observer.latest_cpu()))
            continue
        done = time.monotonic()
        row = run.add_level(event.level, observer)
        progress.level(row)
        yield row, done


def run_plan(
    config: RunConfig,
    fleet: Fleet,
    run: Run,
    observer: RunObserver,
    progress: Progress,
    interrupted: Interrupted,
    fault_levels: set[int],
    database_lost: Callable[[], str | None] | None = None,
) -> tuple[str, Stop | None]:
    """Run level after level as the plan asks, each a level of the result; why the run stopped,
    and the plan's own reason when it was the plan that stopped it. GeneratorFailed when the
    generator processes stop before a level is reported (one of them died).

    A level with a fault is expected to fail, and continue-after-fail asks to go on through every
    failure: both are excused, so a ladder goes on. After a level that failed the fleet rests
    the plan's `settle` seconds (a search's: so that a failed probe's backlog, the service still
    working through requests that timed out, does not count against the next one; a level that
    held left none), counted from the moment the level was done: the time spent judging it is
    rest too, and the last level is followed by none. The plan decides on the next level as of
    the moment it would start.

    `database_lost` says, after each level, whether the managed database was lost meanwhile (one
    line, or None): DatabaseLost then, with that level flagged.
    """
    plan = config.plan
    shown: list[Outcome] = []
    started = time.monotonic()
    rested_from: float | None = None  # when the last level was done; None before the first

    def rested() -> float:
        """When (time.monotonic()) the rest after the last level ends: now, if it needs none."""
        now = time.monotonic()
        if rested_from is None or shown[-1].passed:
            return now
        return max(now, rested_from + plan.settle)

    while (planned := plan.next_level(shown, rested() - started)) is not None:
        time.sleep(max(0.0, rested() - time.monotonic()))
        level = fleet.start_level(planned)
        observer.watch(level)
        for row, done in _rows(fleet.level_events(level.index), run, observer, progress, interrupted):
            excused = config.continue_after_fail or row["index"] in fault_levels
            shown.append(outcome_of(row, excused))
            rested_from = done
        if len(shown) <= level.index:  # the fleet stopped before the level reported
            raise GeneratorFailed(
                fleet.failure() or f"the generator stopped before level {level.index + 1} finished"
            )
        if database_lost is not None and (words := database_lost()) is not None:
            words = f"level {level.index + 1}: {words}"
            run.flag_last_level(words)
            raise DatabaseLost(words)
    fleet.end_schedule()
    stop = plan.stop(shown, rested() - started)
    return stop.words, stop
