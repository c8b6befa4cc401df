"""What a generator process is given: one frozen, picklable spec, and how connections spread.

`dbladder.run.sizing.process_spec` derives it from a round's config in one place; tests and
benchmarks build one directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...plans import Level, Plan
from ...workloads.base import Mix


@dataclass(frozen=True)
class ProcessSpec:
    """What a generator process needs; plain and picklable, so a spawned process can rebuild it.

    `plan` is any plan (dbladder.plans): its scheduled levels run from the run start, and levels
    chosen on the way (a search's probes) come over the process's command queue. `target` is
    "http" (the service at host:port) or "direct" (the engine at `db_url`, running the workload's
    operations itself, with `connections` in all spread over the processes by `spread`).
    `in_flight` is per process; a users plan needs at least the most users a process runs, or
    users find no connection and count their requests as dropped. `precise_clock` busy-waits the
    last 2 ms before each due time (MonotonicClock's spin): schedule lag in microseconds, at the
    price of a whole CPU, which on a small machine is taken from the service and the database.
    """

    plan: Plan
    workload: str = "shop"
    """The workload to load in the process (a name, a .py file or module:attr)."""
    mix: Mix = field(default_factory=lambda: Mix({}))
    """Operation weights by name; empty means the workload's own weights."""
    sizes: dict[str, int] = field(default_factory=dict)
    """The data's size parameters, which the operations draw their ids from (empty: the defaults)."""
    mix_seed: int = 1
    host: str = "127.0.0.1"
    port: int = 0
    in_flight: int = 1000
    timeout: float = 5.0
    target: str = "http"
    db_url: str = field(default="", repr=False)  # may hold a password: never in repr()
    connections: int = 100
    """Direct mode: the connections in all, spread over the processes (`spread`)."""
    precise_clock: bool = False

    @property
    def duration(self) -> float:
        """Seconds from the run start to the end of the plan (a search: its budget)."""
        return self.plan.duration

    def levels(self) -> list[Level]:
        """The levels fixed before the run (users phases for a closed plan), with their offsets
        from the run start; a search has none in advance."""
        return self.plan.scheduled()

    def connections_of(self, part: int, parts: int) -> int:
        """The connections process `part` of `parts` opens."""
        return spread(self.connections, parts)[part]


def spread(total: int, parts: int) -> list[int]:
    """`total` connections over `parts` processes, as evenly as whole numbers allow (at least 1 each)."""
    return [max(1, total // parts + (part < total % parts)) for part in range(parts)]
