"""The open model: send each request when it is due, whatever the service does, and record it.

One process runs one `Generator`: for every (level, due time) of its part of the ladder
(`..plans`) it waits until the request is due and sends it without waiting for earlier ones. A
request that finds every connection busy (the in-flight limit) is counted as "dropped", as k6
counts dropped iterations; it is never queued, which would quietly turn the open model into a
closed one. The recorder (`..recorder`) files each request under the level in which it was due.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence

from ...plans import Ladder, PlannedLevel, due_times
from ..clock import Clock
from ..mix import Request
from ..recorder import LevelRecord, LevelSecond, Recorder
from ..targets import RequestTarget
from . import Executor

LATE_BURST = 32
"""Requests sent back to back while behind schedule before the driver lets the event loop run."""


class Generator(Executor):
    """Drives one process's part of a ladder against one target; see the module docstring.

    `plan` is a Ladder, or its levels: a ceiling search's probe is one Level at the rate chosen.

    `operations` must not run out before the ladder does (`mix.requests` never does);
    `operation_names` names the workload's operations in order, for the per-operation figures.
    The target's in-flight limit caps the requests awaiting a response; its timeout bounds each
    request. Use `run()` once; `recorder` holds the figures, also after a cancel.
    """

    def __init__(
        self,
        plan: Ladder | Sequence[PlannedLevel],
        clock: Clock,
        operations: Iterator[Request],
        target: RequestTarget,
        part: int = 0,
        parts: int = 1,
        *,
        operation_names: tuple[str, ...],
    ):
        levels = list(plan) if isinstance(plan, Sequence) else plan.scheduled()  # a ladder's are fixed
        super().__init__(clock, operations, target, Recorder(levels, part, parts, operation_names))
        self._levels = levels
        self._now = clock.now
        self._part = part
        self._parts = parts

    async def _drive(self) -> None:
        """Send every request of this part of the ladder on time."""
        # Locals, not attributes, inside the loop: this runs once per request.
        now = self._clock.now
        sleep_until = self._clock.sleep_until
        send = self._target.send
        render = self._target.render
        on_result = self._on_result
        next_request = self._operations.__next__
        records, warmups = self.recorder.levels, self.recorder.warmups
        measured = warmup = records[0]
        measured_from = 0.0
        seconds = measured.seconds
        index = -1
        late = 0
        for position, level, due in _due_times(self._levels, self._part, self._parts):
            if position != index:
                index = position
                self._enter(index)
                measured, warmup, measured_from = records[index], warmups[index], level.measured_from
                seconds = measured.seconds
            t = now()
            if due > t:
                await sleep_until(due)
                t = now()
                late = 0
            else:
                late += 1
                if late == LATE_BURST:
                    # Behind schedule: let responses in now and then, or a generator that has
                    # fallen behind would send a long burst without reading any answer.
                    late = 0
                    await asyncio.sleep(0)
                    t = now()
            if due >= measured_from:
                record = measured
                number = int(due - measured_from)  # the second of the measured window it is due in
                # The last second may be a part-second; a due time past its end by a float's
                # rounding is still in it (`LevelRecord.second_at`, inline: once per request).
                second = seconds[number] if number < len(seconds) else (seconds[-1] if seconds else None)
            else:
                record, second = warmup, None
            request = next_request()
            if send(render(request), on_result, (record, due, t, request[0], second)):
                record.sent(int((t - due) * 1_000_000), second)
            else:
                record.dropped(request[0], int((t - due) * 1_000_000), second)
        self._enter(len(records))

    def _on_result(
        self,
        token: tuple[LevelRecord, float, float, int, LevelSecond | None],
        result: int | str,
        body: bytes | None,
    ) -> None:
        record, due, sent, index, second = token
        t = self._now()
        latency = record.answered(t, due, sent, index, result, second)
        if result.__class__ is int:  # an answer arrived (any status): counted by when it did
            self.recorder.arrived(t, latency is not None)

    def _enter(self, index: int) -> None:
        """Move the driver to level `index` (len(levels) at the end): close the earlier levels."""
        records = self.recorder.levels
        # Levels skipped over had no request due for this part: they are done as well.
        for skipped in range(max(self._index, 0), min(index, len(records))):
            records[skipped].started = records[skipped].scheduled = True
        super()._enter(index)


def _due_times(
    levels: Sequence[PlannedLevel], part: int, parts: int
) -> Iterator[tuple[int, PlannedLevel, float]]:
    """(position of the level, level, due time) for this part's requests over the levels, in order."""
    for position, level in enumerate(levels):
        for due in due_times(level, part, parts):
            yield position, level, due
