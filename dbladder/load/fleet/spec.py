"""What a generator process is given: one frozen, picklable spec, and how connections spread.

`dbladder.run.sizing.process_spec` derives it from a round's config in one place; tests and
benchmarks build one directly. `fleet_specs` gives the specs of several fleets that share one
run's parts (`parts.py`), one per fleet.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...plans import Plan, PlannedLevel
from ...workloads.base import Mix
from .parts import BadPartRange, PartRange, check_ranges


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
    `part_range` is the parts of the run this fleet sends (`parts.py`); None, every run on one
    machine, is all of them, numbered over this fleet's processes.
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
    part_range: PartRange | None = None
    """The run's parts this fleet's processes send, one each; None: all of them."""

    def __post_init__(self) -> None:
        if self.part_range is not None and not isinstance(self.part_range, PartRange):
            raise BadPartRange(f"part_range must be a PartRange, not {self.part_range!r}")

    @property
    def duration(self) -> float:
        """Seconds from the run start to the end of the plan (a search: its budget)."""
        return self.plan.duration

    def levels(self) -> list[PlannedLevel]:
        """The levels fixed before the run (users phases for a closed plan), with their offsets
        from the run start; a search has none in advance."""
        return self.plan.scheduled()

    def connections_of(self, part: int, parts: int) -> int:
        """The connections the process sending part `part` of `parts` opens (numbered over the
        whole run: fleets on several machines open `connections` between them)."""
        return spread(self.connections, parts)[part]

    def parts_of(self, processes: int) -> PartRange:
        """The parts a fleet of `processes` sends with this spec: its range, which must have one
        part per process, or all `processes` parts."""
        if self.part_range is None:
            return PartRange.whole(processes)
        if self.part_range.count != processes:
            raise BadPartRange(
                f"parts {self.part_range.words} of {self.part_range.total} need "
                f"{self.part_range.count} generator process(es), one each, not {processes}"
            )
        return self.part_range


def fleet_specs(spec: ProcessSpec, ranges: Sequence[PartRange]) -> list[ProcessSpec]:
    """The spec of each fleet that sends one of `ranges` of the run's parts; refused unless the
    ranges cover every part exactly once (`check_ranges`)."""
    check_ranges(ranges)
    return [dataclasses.replace(spec, part_range=part_range) for part_range in ranges]


def spread(total: int, parts: int) -> list[int]:
    """`total` connections over `parts` processes, as evenly as whole numbers allow (at least 1 each)."""
    return [max(1, total // parts + (part < total % parts)) for part in range(parts)]
