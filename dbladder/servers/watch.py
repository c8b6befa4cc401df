"""Whether a managed server was lost during a round's load: killed by the kernel for passing its
memory cap (its cgroup's oom_kill count rose), or its process gone.

Without it such a loss shows only as failed requests; with it the run says so in one line, marks
the level it struck and stops there, keeping the levels finished before it (run/levels.py).
"""

from __future__ import annotations

from ..roles import format_size
from .managed import ManagedServer


class ServerWatch:
    """Counts taken at the start of the load, compared after each level."""

    def __init__(self, server: ManagedServer, process_may_go: bool = False) -> None:
        """`process_may_go`: a fault of the run stops or kills the server on purpose, so only a
        kill for memory counts as a loss."""
        self.server = server
        self.process_may_go = process_may_go
        self._group = server.memory_cgroup()
        self._kills_at_start = (self._group.oom_kills() or 0) if self._group is not None else 0

    def lost(self) -> str | None:
        """One line saying how the server was lost since the start, or None while it is not."""
        server, title = self.server, self.server.kind.title
        kills = self._group.oom_kills() if self._group is not None else None
        if self._group is not None and kills is not None and kills > self._kills_at_start:
            new = kills - self._kills_at_start
            return (
                f"the managed {title} server {server.name} was killed for memory: the kernel killed "
                f"{new} of its processes for passing its cap of {format_size(self._group.limit)} "
                f"(--memory database=...; its cgroup's oom_kill count went from "
                f"{self._kills_at_start} to {kills})"
            )
        if not self.process_may_go and not server.running():
            return (
                f"the managed {title} server {server.name} is gone: its process (PID {server.pid}) has exited"
            )
        return None
