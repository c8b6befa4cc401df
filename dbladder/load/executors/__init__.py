"""Executors: send one process's part of a plan to a target, and record what happened.

One executor per load model, on one skeleton (`Executor`): the open model (`open.py`, `Generator`)
sends each request when the ladder says it is due, whatever the service does; the closed model
(`closed.py`, `UsersGenerator`) runs users who each wait for an answer and think before the next
request. Both take a clock (`..clock`), a stream of operations (`..mix`) and a target
(`..targets`), file every request in a recorder (`..recorder`), and offer `run()` (once),
`recorder` and `progress()`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

from ..clock import Clock
from ..live_view import LiveView, live_view
from ..mix import Request
from ..recorder import Recorder
from ..targets import RequestTarget


class Executor:
    """What both executors share: the run-once guard, closing the target, entering a level with its
    CPU and wall time accounted, live progress, and waiting for the last answers.

    A subclass implements `_drive()`: send this part of the plan, calling `_enter(index)` as the
    run moves into each level and `_enter(len(levels))` after the last one.
    """

    def __init__(
        self, clock: Clock, operations: Iterator[Request], target: RequestTarget, recorder: Recorder
    ):
        self._clock = clock
        self._operations = operations
        self._target = target
        self.recorder = recorder
        recorder.timeout = target.timeout
        self._index = -1  # the level the run is in
        self._cpu_mark = 0.0
        self._wall_mark = 0.0
        self._ran = False

    async def run(self) -> Recorder:
        """Send this part of the plan, wait for the last answers, return the recorder.

        Stops by itself after the last level, waiting at most the request timeout for answers
        still in flight. When cancelled (Ctrl-C), it stops sending, closes the target and
        re-raises; the levels finished by then keep their figures in `recorder`.
        """
        if self._ran:
            raise RuntimeError(f"a {type(self).__name__} runs once; make a new one")
        self._ran = True
        try:
            await self._drive()
            await self._drain()
        except asyncio.CancelledError:
            self._stop()
            raise
        finally:
            self._target.close()
        return self.recorder

    async def _drive(self) -> None:
        raise NotImplementedError

    def progress(self) -> LiveView | None:
        """The level being sent so far; None before the run starts or after the plan ends.

        Call it on the run's loop.
        """
        return live_view(self.recorder, self._index, self._clock.now())

    def _enter(self, index: int) -> None:
        """Move to level `index` (len(levels) at the end): close the CPU and wall time of the last."""
        cpu, wall = time.process_time(), self._clock.now()
        records = self.recorder.levels
        if 0 <= self._index < len(records):
            current = records[self._index]
            current.cpu_seconds += cpu - self._cpu_mark
            current.wall_seconds += wall - self._wall_mark
        elif self._index < 0:
            self.recorder.late_start = max(wall, 0.0)
        if index < len(records):
            records[index].started = True
        self._index, self._cpu_mark, self._wall_mark = index, cpu, wall

    def _stop(self) -> None:
        """Cancelled: close the current level's CPU and wall time and mark the recorder interrupted."""
        if 0 <= self._index < len(self.recorder.levels):
            record = self.recorder.levels[self._index]
            record.cpu_seconds += time.process_time() - self._cpu_mark
            record.wall_seconds += self._clock.now() - self._wall_mark
        self.recorder.interrupted = True

    async def _drain(self) -> None:
        """After the last level: wait for the answers in flight, counting the time to the last level."""
        await wait_for_answers(self._target)
        last = self.recorder.levels[-1]
        last.cpu_seconds += time.process_time() - self._cpu_mark
        last.wall_seconds += self._clock.now() - self._wall_mark


async def wait_for_answers(target: RequestTarget) -> None:
    """Wait until no request is in flight on `target`, or until every one must have settled."""
    # Every request settles within the timeout plus one sweep of the pool; the margin covers
    # the sweep and the callback, so this wait is bounded even if the server never answers.
    deadline = time.monotonic() + target.timeout + 2 * target.sweep_interval + 0.05
    while target.in_flight and time.monotonic() < deadline:
        await asyncio.sleep(0.002)
