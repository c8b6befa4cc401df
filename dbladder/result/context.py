"""The blocks of a result around its levels, typed: where each role ran, the data's size, the faults
injected, the native client's reference, a cluster's machines, the user's app, the relay and the
round trips of the load's route, the data layer of the workload, and what the sampler found of the
machine (docs/result-schema.md names every key).

They were plain mappings that each reporter read by key; each is now a `Part`, so a reporter reads
attributes and a key this release does not know is still kept and written back (`part.Part`). A
key that is absent in an older result reads as the field's default, which a reporter already
treated as "not recorded".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .part import Part


@dataclass(frozen=True, kw_only=True)
class PlacedRole(Part):
    """One role's CPUs (as taskset writes them, None: any) and memory cap in bytes (None: none)."""

    cpus: str | None = None
    memory: int | None = None


@dataclass(frozen=True, kw_only=True)
class RolePlacement(Part):
    """Where each role ran (`--cpus`, `--memory`) and whether the page cache was dropped first."""

    generator: PlacedRole | None = None
    service: PlacedRole | None = None
    database: PlacedRole | None = None
    drop_caches: bool | None = None

    def of(self, role: str) -> PlacedRole:
        """A role's limits by its name (generator, service, database); none recorded: no limits."""
        limits = {"generator": self.generator, "service": self.service, "database": self.database}[role]
        return limits or PlacedRole()


@dataclass(frozen=True, kw_only=True)
class DatabaseSize(Part):
    """The database's size on disk at the start of the run and the memory cap of the role that reads
    its files (None where it could not be asked, or there was no cap)."""

    size_bytes: int | None = None
    memory_cap_bytes: int | None = None


@dataclass(frozen=True, kw_only=True)
class FaultRecord(Part):
    """One fault the run injected (`--fault`): what, in which level (from 0), when and what came of it.

    `state` is "not reached", "striking", "failed" (then `error`) or "done" (then `detail`, and
    `back_after_s`: None when answers never came back)."""

    fault: str
    kind: str
    level: int
    second: float
    state: str
    at_s: float | None = None
    detail: str | None = None
    error: str | None = None
    action_s: float | None = None
    back_after_s: float | None = None


@dataclass(frozen=True, kw_only=True)
class NativeReference(Part):
    """The engine's native client flat out on the run's database (`dbladder bench --native --result`),
    and how close direct mode came to it."""

    client: str | None = None
    version: str | None = None
    command: str | None = None
    ops_per_s: float = 0.0
    operations: int | None = None
    seconds: float | None = None
    connections: int | None = None
    processes: int | None = None
    measured_at: str | None = None
    scripts: Mapping[str, str] | None = None
    mix: Mapping[str, float] | None = None
    sizes: Mapping[str, int] | None = None
    database: str | None = None
    engine: str | None = None
    server_version: str | None = None
    cpus: str | None = None
    direct_rps: float | None = None
    ratio: float | None = None


@dataclass(frozen=True, kw_only=True)
class MachineClock(Part):
    """An agent's clock against the coordinator's: the offset, right within plus or minus `bound_s`."""

    offset_s: float
    bound_s: float
    round_trip_s: float | None = None
    pings: int | None = None


@dataclass(frozen=True, kw_only=True)
class MachineRecord(Part):
    """One machine of a cluster run: the coordinator, or an agent with its role."""

    name: str | None = None
    role: str | None = None
    address: str | None = None
    host: str | None = None
    cpu_model: str | None = None
    cores: int | None = None
    memory_bytes: int | None = None
    pid: int | None = None
    clock: MachineClock | None = None


@dataclass(frozen=True, kw_only=True)
class AppExit(Part):
    """How the user's app exited by itself during the load."""

    code: int | None = None
    at_s: float | None = None
    words: str | None = None


@dataclass(frozen=True, kw_only=True)
class AppSection(Part):
    """The user's app (`--app`): its setup's seconds, its log, the answers that were not a success,
    and how it exited if it did."""

    setup_s: float | None = None
    log: str | None = None
    failures: tuple[Mapping[str, Any], ...] = ()
    exited: AppExit | None = None


@dataclass(frozen=True, kw_only=True)
class RoundTripSpread(Part):
    """What one round trip took, microseconds: the median and the 10th and 90th percentiles."""

    median: float | None = None
    p10: float | None = None
    p90: float | None = None
    count: int | None = None


@dataclass(frozen=True, kw_only=True)
class RoundTrips(Part):
    """Round trips just before the load: over the transport, and through the relay when there was one."""

    direct: RoundTripSpread | None = None
    through_relay: RoundTripSpread | None = None


@dataclass(frozen=True, kw_only=True)
class RelayForwarded(Part):
    """What the latency relay forwarded during the whole run."""

    connections: int | None = None
    chunks_up: int | None = None
    chunks_down: int | None = None
    bytes_up: int | None = None
    bytes_down: int | None = None
    held_chunks: int | None = None
    late_seconds: float | None = None
    most_late_seconds: float | None = None
    mean_late_us: float | None = None


@dataclass(frozen=True, kw_only=True)
class RelayRecord(Part):
    """The latency relay: where it connected and listened, and what it forwarded (once it stopped)."""

    target: str | None = None
    listen: str | None = None
    stats: RelayForwarded | None = None


@dataclass(frozen=True, kw_only=True)
class DataLayer(Part):
    """How the operations reached the database when not through dbladder's own engine (an ORM)."""

    orm: str | None = None
    driver: str | None = None
    note: str | None = None


@dataclass(frozen=True, kw_only=True)
class TableSeeding(Part):
    """One table as the data was loaded: its rows and the seconds it took."""

    rows: int = 0
    seconds: float | None = None


@dataclass(frozen=True, kw_only=True)
class DataFilesystem(Part):
    """The filesystem that holds the database's files."""

    type: str | None = None
    device: str | None = None
    mountpoint: str | None = None
    options: str | None = None

    def words(self) -> str:
        """ "ext4 on /dev/sda1 at / (rw,relatime)"."""
        return f"{self.type} on {self.device} at {self.mountpoint} ({self.options})"


@dataclass(frozen=True, kw_only=True)
class WarmedRequest(Part):
    """One request of the warm-up (`run/warm_up.py`): its first hits' median and slowest latency,
    its settled median (None when it was sent only once), its answers and failures, and whether it
    settled by the rule."""

    request: str
    first_hits: int = 0
    first_ms: float | None = None
    first_max_ms: float | None = None
    settled_ms: float | None = None
    answers: int = 0
    failed: int = 0
    settled: bool = False


@dataclass(frozen=True, kw_only=True)
class WarmUpRecord(Part):
    """The warm-up before the first level: how long it took against its limit, what it sent, why it
    stopped (settled, time limit, answer limit), its rule in words and each request's figures."""

    seconds: float = 0.0
    limit_s: float = 0.0
    requests: int = 0
    first_hits: int = 0
    stopped_because: str | None = None
    settled: bool | None = None
    rule: str | None = None
    answer_limit: int = 100
    by_request: tuple[WarmedRequest, ...] = ()


@dataclass(frozen=True, kw_only=True)
class CalibrationLoop(Part):
    """One closed loop of the calibration: its connections and the answers per second it got."""

    connections: int
    rps: float


@dataclass(frozen=True, kw_only=True)
class CalibrationRecord(Part):
    """How a search's start was chosen on the warm service (`dbladder.load.calibration`): the
    service time on one connection, the estimate and on how many connections, the start and its
    share of the estimate, and the method in words (`how`)."""

    service_ms: float | None = None
    estimate_rps: float | None = None
    connections: int | None = None
    start_rps: float
    share: float | None = None
    sequential_requests: int | None = None
    loops: tuple[CalibrationLoop, ...] = ()
    failed: int | None = None
    seconds: float | None = None
    how: str | None = None
