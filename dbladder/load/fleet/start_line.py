"""The run start every generator process waits for (`StartLine`).

The schedule starts when every process is ready: each one imports, opens its connections (direct
mode) and says so; the parent then sets the run start a quarter of a second ahead and lets them
all go. A fixed head start would be too long on a quiet machine (every run waited 1.5 s) and too
short on a busy one (a process still importing starts its schedule late).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

READY_TIMEOUT = 60.0
"""Seconds the parent waits for every process to be ready before it starts the schedule anyway
(a process that is later still starts late, and the run is flagged for it)."""


class StartLine:
    """The run start the parent sets once every process is ready, shared with the processes.

    Pickled into each spawned process with its arguments (a shared double and an event).
    """

    def __init__(self, context: Any):
        self._origin = context.Value("d", 0.0, lock=False)
        self._go = context.Event()

    def release(self, origin: float) -> None:
        """Parent: every process may start; `origin` is the run start, a time.perf_counter() value."""
        self._origin.value = origin
        self._go.set()

    async def wait(self, events: Any, part: int) -> float:
        """Process: say this one is ready, wait for the start (bounded), and return it."""
        events.put(("ready", part))
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._go.wait, READY_TIMEOUT + 10)
        return float(self._origin.value) if self._go.is_set() else time.perf_counter()
