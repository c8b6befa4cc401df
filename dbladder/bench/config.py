"""What a bench run does: the raw rounds and the journal test, as frozen, validated data."""

from __future__ import annotations

from dataclasses import dataclass

from ..engines.sqlite.connection import JOURNAL_MODES
from ..errors import DbladderError, InvalidConfig
from ..workloads.registry import load_workload

WORKER_KINDS = ("processes", "threads")
WORKLOADS = ("chirp",)  # the raw rounds are the Chirp post's


def _workload_problems(name: str, operations: tuple[str, ...] = ()) -> list[str]:
    """Whether `name` is a workload the bench knows and has `operations`; sentences if not."""
    if name not in WORKLOADS:
        return [f"workload must be one of {', '.join(WORKLOADS)} (the post's rounds), not {name!r}"]
    try:
        workload = load_workload(name)
        for operation in operations:
            workload.operation(operation)
    except DbladderError as exc:
        return [str(exc)]
    return []


@dataclass(frozen=True)
class BenchConfig:
    """The raw rounds of "SQLite handled 315 million daily requests on a laptop": each round runs
    for `seconds` over `connections` connections, then its bare reference for as long."""

    db_url: str = "sqlite:///chirp.db"
    workload: str = "chirp"  # the rounds are on its posts table; found by name in the registry
    seconds: float = 5.0
    warmup_seconds: float = 1.0  # the same work, untimed, before each round: caches warm for both sides
    connections: int = 1
    batch_rows: int = 100  # rows per transaction in the batched-insert round
    references: bool = True
    repeats: int = 1  # turns of ours then the reference, per round
    seed: int = 1  # of the ids drawn, so two runs read the same rows

    def validate(self) -> list[str]:
        """Every problem, each naming its field; empty when the config is usable."""
        problems = _workload_problems(self.workload)
        if not 0.1 <= self.seconds <= 3600:
            problems.append(f"seconds must be from 0.1 to 3600, not {self.seconds}")
        if not 0 <= self.warmup_seconds <= 600:
            problems.append(f"warmup_seconds must be from 0 to 600, not {self.warmup_seconds}")
        if not 1 <= self.connections <= 1000:
            problems.append(f"connections must be from 1 to 1000, not {self.connections}")
        if not 1 <= self.repeats <= 100:
            problems.append(f"repeats must be from 1 to 100, not {self.repeats}")
        if not 1 <= self.batch_rows <= 100_000:
            problems.append(f"batch_rows must be from 1 to 100,000, not {self.batch_rows}")
        if not 0 <= self.seed < 2**63:
            problems.append(f"seed must be from 0 to 2**63-1, not {self.seed}")
        return problems

    def checked(self) -> BenchConfig:
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self


@dataclass(frozen=True)
class JournalConfig:
    """Readers on timelines and one writer, as the post ran them: 7 reader threads and a writer at
    1,000 writes/s, then flat out; for SQLite once in WAL and once in DELETE journal mode."""

    db_url: str = "sqlite:///chirp.db"
    workload: str = "chirp"
    read_operation: str = "timeline"  # what each reader repeats: the app's heaviest page
    write_operation: str = "create_post"  # what the writer does: a new post, in a transaction
    seconds: float = 10.0  # per phase
    readers: int = 7
    write_rate: float = 1000.0  # writes/s of the paced phase
    workers: str = "processes"  # or "threads": how readers and the writer run side by side
    journal_modes: tuple[str, ...] = ("WAL", "DELETE")  # SQLite only
    read_only_phase: bool = True  # the readers alone first: the post's "clean" figure
    seed: int = 1

    def validate(self) -> list[str]:
        """Every problem, each naming its field; empty when the config is usable."""
        problems = _workload_problems(self.workload, (self.read_operation, self.write_operation))
        if not 0.1 <= self.seconds <= 3600:
            problems.append(f"seconds must be from 0.1 to 3600, not {self.seconds}")
        if not 0 <= self.readers <= 256:
            problems.append(f"readers must be from 0 to 256, not {self.readers}")
        if not 0 < self.write_rate <= 1_000_000:
            problems.append(f"write_rate must be above 0 and at most 1,000,000, not {self.write_rate}")
        if self.workers not in WORKER_KINDS:
            problems.append(f"workers must be one of {', '.join(WORKER_KINDS)}, not {self.workers!r}")
        if not self.journal_modes:
            problems.append("journal_modes must name at least one mode")
        for mode in self.journal_modes:
            if mode not in JOURNAL_MODES:
                problems.append(f"journal_modes must be among {', '.join(JOURNAL_MODES)}, not {mode!r}")
        if not 0 <= self.seed < 2**63:
            problems.append(f"seed must be from 0 to 2**63-1, not {self.seed}")
        return problems

    def checked(self) -> JournalConfig:
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self
