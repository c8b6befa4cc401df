"""The native reference's settings and its errors: what `dbladder bench --native` measures (the
shop's read mix) and how (connections, processes, CPUs), checked at once."""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import DbladderError, InvalidConfig
from ..roles import format_cpus
from ..urls import parse_url
from ..workloads.base import Workload

WORKLOAD = "shop"
READ_MIX = {"product": 50, "page": 30, "order": 20}
"""The shop's read mix, by operation name: the weights pgbench's scripts carry too."""
CATEGORIES = 100  # the shop's categories, cat-00 .. cat-99 (tests check this against its draw)
REQUESTS_PER_PROCESS = 1 << 16  # drawn before the clock starts and run in a cycle
START_TIMEOUT_S = 60  # for the apsw processes to start and warm up, on a loaded machine


class NativeClientMissing(DbladderError):
    """The engine's native client (pgbench, sysbench) is not installed; the message says how to get it."""


class NativeClientFailed(DbladderError):
    """The native client ran and failed (refused connection, bad password); the message has its last words."""


@dataclass(frozen=True)
class NativeConfig:
    """One native reference: the shop's read mix on `db_url`, flat out for `seconds`."""

    db_url: str = "sqlite:///shop.db"
    seconds: float = 5.0
    warmup_seconds: float = 1.0  # the same client, untimed, first: caches (MariaDB's buffer pool) warm
    connections: int = 8  # pgbench clients, sysbench threads
    processes: int = 0  # apsw loops (SQLite), pgbench threads; 0: one per core
    seed: int = 1  # of the requests drawn, so two runs send the same ones
    # The generator role's CPUs (`--cpus generator=...`): the native client runs on them and no
    # others, as direct mode's generator does, so the two are measured like with like. None: any.
    cpus: tuple[int, ...] | None = None

    def validate(self) -> list[str]:
        """Every problem, each naming its field; empty when the config is usable."""
        problems = []
        try:
            parse_url(self.db_url)
        except DbladderError as exc:
            problems.append(f"db_url: {exc}")
        if not 0.5 <= self.seconds <= 3600:
            problems.append(f"seconds must be from 0.5 to 3600, not {self.seconds}")
        if not 0 <= self.warmup_seconds <= 600:
            problems.append(f"warmup_seconds must be from 0 to 600, not {self.warmup_seconds}")
        if not 1 <= self.connections <= 1000:
            problems.append(f"connections must be from 1 to 1000, not {self.connections}")
        if not 0 <= self.processes <= 256:
            problems.append(f"processes must be from 0 (one per core) to 256, not {self.processes}")
        if not 0 <= self.seed < 2**31:
            problems.append(f"seed must be from 0 to 2**31-1, not {self.seed}")
        if self.cpus is not None and not set(self.cpus) <= os.sched_getaffinity(0):
            problems.append(f"cpus {format_cpus(self.cpus)} are not all allowed to this process")
        return problems

    def checked(self) -> NativeConfig:
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self

    @property
    def process_count(self) -> int:
        """The processes asked for, else one per CPU the client may run on."""
        return self.processes or (len(self.cpus) if self.cpus else os.cpu_count() or 1)


def read_statements(workload: Workload) -> dict[str, tuple[str, ...]]:
    """Each read of the mix and its SQL, as the workload declares it (with `?` placeholders)."""
    return {name: workload.operation(name).statements for name in READ_MIX}
