"""What every fleet does the same way with the plan's levels, written once: the fleet of this
machine's processes (`parent.py`) and a cluster's load agents' fleets as one
(`dbladder.cluster.coordinator.ClusterFleet`) differ in how they reach their processes, not in
how a level is started, followed or how the plan ends.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ...plans import PlannedLevel
from ..live_view import LiveView


@dataclass(frozen=True)
class LevelDone:
    """A level every process has finished: its merged snapshot (`merge.merge_levels`)."""

    index: int
    level: dict[str, Any]


class FleetBase:
    """The levels' side of a fleet. A subclass sets `origin` (the run start, a time.perf_counter()
    value), `_scheduled` (the plan's levels fixed before the run), `_started` (levels started so
    far, counting the scheduled ones) and `_next_level` (the next level to report), and gives
    `events`, `stop` and `_send_level`."""

    origin: float
    _scheduled: list[PlannedLevel]
    _started: int
    _next_level: int

    probe_delay = 0.3
    """Seconds from now at which a probe (a level not on the schedule) starts, by default."""

    def start_level(self, planned: PlannedLevel, start_delay: float | None = None) -> PlannedLevel:
        """Run the plan's next level; the level as run. A scheduled level is already on the
        processes' schedule; any other (a search's probe) is sent to every process now, to start
        `start_delay` seconds from now (or at its own start, if later).

        The level's start is counted from the fleet's origin, as scheduled levels' are, so every
        level sits on one timeline with the machine's samples.
        """
        if planned.index < len(self._scheduled):
            return self._scheduled[planned.index]
        if planned.index != self._started:
            raise ValueError(f"the next level to start is number {self._started}, not {planned.index}")
        self._before_probe(planned)
        delay = self.probe_delay if start_delay is None else start_delay
        start = max(planned.start, time.perf_counter() - self.origin + delay)
        level = dataclasses.replace(planned, start=start)
        self._started += 1
        self._send_level(level, delay)
        return level

    def end_schedule(self) -> None:
        """The plan is over: stop the processes if scheduled levels are still to come (a ladder
        stopped by a failed level); a plan that ran every level it started is left to finish."""
        if self._next_level < len(self._scheduled):
            self.stop()

    def level_events(self, index: int) -> Iterator[LevelDone | LiveView]:
        """The live views up to level `index`, then its LevelDone; fewer if the processes stop first."""
        for event in self.events():
            yield event
            if isinstance(event, LevelDone) and event.index == index:
                return

    def events(self) -> Iterator[LevelDone | LiveView]:
        """Levels as every process finishes them and the merged live view, until every level
        started so far has been reported or the processes stop."""
        raise NotImplementedError

    def stop(self) -> None:
        """Ask every process to stop sending."""
        raise NotImplementedError

    def _before_probe(self, planned: PlannedLevel) -> None:
        """What a fleet does before a probe's start is set (a cluster measures its clocks again)."""

    def _send_level(self, level: PlannedLevel, start_delay: float) -> None:
        """Send a probe, as run, to every process; it starts `start_delay` seconds from now."""
        raise NotImplementedError
