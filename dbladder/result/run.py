"""The result of one run, typed: what `result.json` holds (schema `dbladder.result/4`; `/3`, `/2` read too).

`RunResult.from_json(document)` reads a document; `to_json()` gives it back key for key (see
`part.Part`), and the shipped JSON Schema (`schema.py`) validates what it gives. Reports read
attributes of it, never string keys. Its parts: the configuration as run (`Config`, with the plan
it ran: `LadderAsRun`, `UsersAsRun`, `SearchPlan`), the pass mark, the engine and the service, how the data
was seeded, the levels (`level.Level`), the search's bracket, the spike's recovery, the generator
processes, the load's route to the database, the integrity check and the machine it ran on, and
the blocks around them (`context`: faults, the native reference, placement, a cluster's machines,
the user's app). What a reporter shows key by key without reading any one key (the database
server's settings, the per-second samples, the options' sources) stays a plain mapping.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Self

from .. import __version__
from ..engine_registry import run_settings
from ..errors import UnknownBundleVersion
from ..plans import plan_class_of
from .context import (
    AppSection,
    CalibrationRecord,
    DatabaseSize,
    DataFilesystem,
    DataLayer,
    FaultRecord,
    MachineRecord,
    NativeReference,
    RelayRecord,
    RolePlacement,
    RoundTrips,
    TableSeeding,
    WarmUpRecord,
)
from .expectations import Checked
from .level import Level
from .part import Part, spread
from .schema import KIND_ALWAYS_LADDER, RESULT_SCHEMA, RESULT_SCHEMAS_READ


def run_setting_keys() -> tuple[str, ...]:
    """The keys of every registered engine's run settings ("sqlite_writers"), as results hold them."""
    return tuple(run_settings())


@dataclass(frozen=True, kw_only=True)
class LadderAsRun(Part):
    """A linear ladder of arrival rates: `steps` levels from `start`, `step` apart."""

    start: float = 0
    step: float = 0
    steps: int = 1
    hold: float | None = None
    warmup: float | None = None

    @property
    def top(self) -> float:
        return self.start + self.step * (self.steps - 1)


@dataclass(frozen=True, kw_only=True)
class PhaseAsRun(Part):
    """One phase of a users plan: its users, the seconds they take to arrive, and its hold."""

    users: int = 0
    ramp: float | None = None
    hold: float | None = None


@dataclass(frozen=True, kw_only=True)
class UsersAsRun(Part):
    """A closed-model plan: phases of users who think between an answer and their next request."""

    phases: tuple[PhaseAsRun, ...] = ()
    think_min: float | None = None
    think_max: float | None = None


@dataclass(frozen=True, kw_only=True)
class SearchPlan(Part):
    """How a ceiling search probes: from `start`, times `factor` until a probe fails, then halving
    the bracket down to `resolution`, within `budget` seconds."""

    start: float | None = None
    factor: float | None = None
    resolution: float | None = None
    budget: float | None = None
    hold: float | None = None
    warmup: float | None = None
    settle: float | None = None
    min_rate: float | None = None
    max_rate: float | None = None
    min_answers: int | None = None


@dataclass(frozen=True, kw_only=True)
class CeilingRests(Part):
    """On what a search's ceiling rests: the lowest rate failed, its probes (levels numbered from
    1), whether it failed on both, and in words (`plans.search.ceiling_rests_on`)."""

    rate_rps: float
    levels: tuple[int, ...] = ()
    failed_twice: bool = False
    words: str = ""


@dataclass(frozen=True, kw_only=True)
class ProbedAgain(Part):
    """A rate the search probed twice: its levels, why, and whether it failed again."""

    rate_rps: float
    levels: tuple[int, ...] = ()
    because: str | None = None
    failed_again: bool = False


@dataclass(frozen=True, kw_only=True)
class SearchAsRun(SearchPlan):
    """The search as it ran: its plan and the bracket it ended on."""

    held_rps: float | None = None
    failed_rps: float | None = None
    probes: int | None = None
    stopped_because: str | None = None
    rests_on_a_stall: bool | None = None
    # How `start` was chosen when none was given (dbladder.load.calibration): what was measured.
    calibration: CalibrationRecord | None = None
    probed_again: tuple[ProbedAgain, ...] | None = None
    ceiling_rests_on: CeilingRests | None = None


@dataclass(frozen=True, kw_only=True)
class PassMarkSet(Part):
    """The pass mark the levels were judged by."""

    p95_ms: float
    max_fail_pct: float


@dataclass(frozen=True, kw_only=True)
class Config(Part):
    """The run's configuration as it ran (`RunConfig.to_dict()`)."""

    db_url: str | None = None
    workload: str | None = None
    preset: str | None
    ladder: LadderAsRun | None
    users: UsersAsRun | None = None
    search: SearchPlan | None = None
    write_share: float | None = None
    seed: int | None
    target: str | None = None
    workers: int | None = None
    pool_size: int | None = None
    generator_processes: int | None = None
    in_flight: int | None = None
    timeout: float | None = None
    precise_clock: bool | None = None
    continue_after_fail: bool | None = None
    weights: Mapping[str, float] | None = None
    pass_mark: Mapping[str, Any] | None = None
    scale: float | None = None
    sizes: Mapping[str, int] | None = None
    syscalls: bool | None = None
    out_dir: str | None = None
    service_host: str | None = None
    service_url: str | None = None
    allow_remote_target: bool | None = None
    cluster: str | None = None
    cluster_tls: str | None = None
    mix_seed: int | None = None
    faults: tuple[str, ...] | None = None
    integrity: bool | None = None
    transport: str | None = None
    added_latency_ms: float | None = None
    placement: Mapping[str, Any] | None = None
    app: Mapping[str, Any] | None = None
    requests_file: str | None = None
    warm_up_s: float | None = None
    calibrate: bool | None = None
    # The engines' run settings as the run had them (SQLite's one writer, "sqlite_writers": 0),
    # among the config's own keys, each under the key its engine declares (`RunSetting`).
    engine_settings: Mapping[str, int] = spread(run_setting_keys)


@dataclass(frozen=True, kw_only=True)
class EngineAsRun(Part):
    """The engine as it described itself at the start of the run (`EngineInfo.to_dict()`)."""

    engine: str | None = None
    url: str | None = None
    server_version: str | None = None
    driver: str | None = None
    driver_version: str | None = None
    transport: str | None = None
    isolation: str | None = None
    pool_size: int | None = None
    prepared_statements: str | None = None
    durable: bool | None = None
    durability: Mapping[str, Any] | None = None
    durability_note: str | None = None
    settings: Mapping[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class Service(Part):
    """The web service the load went to: started for the run, or one already running.

    Its fields are in the order the round's targets write them (run/load_target.py,
    run/app_target.py), which is the schema's: a service built in code writes its keys so."""

    workers: int | None = None
    pool_size: int | None = None
    # The engines' run settings the service ran with, among its own keys, as in `Config`.
    engine_settings: Mapping[str, int] = spread(run_setting_keys)
    url: str | None = None
    started_by_dbladder: bool | None = None
    agent: str | None = None  # a cluster run: the app agent it ran on
    stats: Mapping[str, Any] | None = None
    app: bool | None = None
    command: str | None = None  # the user's app (`--app`): its command
    sessions: int | None = None
    starts: int | None = None


@dataclass(frozen=True, kw_only=True)
class Seeding(Part):
    """How the data was loaded before the run: per table, and in all."""

    tables: Mapping[str, TableSeeding] = field(default_factory=dict)
    finish_seconds: float | None = None
    total_seconds: float | None = None
    database_bytes: int | None = None  # the database's size once loaded, where it was asked


@dataclass(frozen=True, kw_only=True)
class Data(Part):
    """The data the workload ran on: its seed and sizes."""

    seed: int | None = None
    sizes: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class WorkloadAsRun(Part):
    """The workload: its operations, which of them write, the mix sent, and the data."""

    name: str | None = None
    source: str | None = None
    operations: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    mix: Mapping[str, float] | None = None
    data: Data | None = None
    data_layer: DataLayer | None = None

    @property
    def write_share(self) -> float | None:
        """The share of the requests sent that were writes, from the mix; None if unknown."""
        if not isinstance(self.mix, Mapping):
            return None
        return round(sum(share for name, share in self.mix.items() if name in self.writes), 6)


@dataclass(frozen=True, kw_only=True)
class Spike(Part):
    """A spike's recovery: the seconds until p95 was back within `tolerance` (None: it never was)."""

    recovery_seconds: float | None = None
    tolerance: float | None = None
    note: str | None = None


@dataclass(frozen=True, kw_only=True)
class Generators(Part):
    """The load generator's processes: how many, whether sized to the machine, their connections."""

    processes: int | None = None
    sized_to_machine: bool | None = None
    cores: int | None = None
    connections_per_process: tuple[int, ...] | None = None


@dataclass(frozen=True, kw_only=True)
class Transport(Part):
    """The load's route to the database (`--transport`, `--added-latency`) and its round trip."""

    transport: str | None = None
    chosen: bool | None = None
    url: str | None = None
    # Written even when null (no relay), as run/database_route.py has always written it.
    added_latency_ms: float | None
    round_trip_us: RoundTrips | None = None
    relay: RelayRecord | None = None
    measured_on: str | None = None  # a cluster run: the app agent whose machine made the route


@dataclass(frozen=True, kw_only=True)
class Integrity(Part):
    """What survived the run: the acknowledged writes found, lost or corrupted, and the invariants."""

    checked: bool = False
    acknowledged: int = 0
    present: int | None = None
    lost: int = 0
    corrupted: int = 0
    unreadable: int = 0
    violations: Sequence[Any] = ()
    seconds: float = 0.0
    what: str | None = None
    passed: bool = False
    lost_ids: Sequence[Any] | None = None  # kept as read: a list, as the terminal prints it
    corrupted_ids: Sequence[Any] | None = None
    unacknowledged_present: int | None = None
    ids_reused: int | None = None
    invariants: Mapping[str, Any] | None = None
    rows_read: Mapping[str, Any] | None = None
    durability: str | None = None
    checked_on: str | None = None  # a cluster run: the agent whose machine holds the data and checked it


@dataclass(frozen=True, kw_only=True)
class Environment(Part):
    """The machine the run ran on: the platform and Python, its CPUs, memory and the filesystem of
    the data (`dbladder.observe.environment`); every figure is shown as it was recorded (`facts`),
    a newer release's too."""

    platform: str | None = None
    python: str | None = None
    cpu_model: str | None = None
    cpu_cores: int | None = None
    cpu_cores_physical: int | None = None
    cpu_count: int | None = None  # results from before `cpu_cores`
    cpu_quota: float | None = None
    memory_total_bytes: int | None = None
    memory_limit_bytes: int | None = None
    dependencies: Mapping[str, Any] | None = None
    data_filesystem: DataFilesystem | None = None
    data_size_bytes: int | None = None
    kernel: str | None = None
    os: str | None = None
    data_path: str | None = None
    python_implementation: str | None = None
    dbladder: str | None = None
    engine: Mapping[str, Any] | None = None  # the engine's settings as given (shown with the engine)

    @property
    def memory_bytes(self) -> float | None:
        """The memory the run could use: a cgroup limit below the machine's, else the machine's."""
        for value in (self.memory_limit_bytes, self.memory_total_bytes):
            if isinstance(value, int | float) and not isinstance(value, bool):
                return value
        return None

    def facts(self) -> dict[str, Any]:
        """Every figure of the machine in the order it was recorded."""
        return self.to_json()


@dataclass(frozen=True, kw_only=True)
class Fresh(Part):
    """How a comparison gave the run the data as seeded (`dbladder.data.fresh`)."""

    method: str | None = None
    seconds: float | None = None
    run: int | None = None
    checksum: Mapping[str, str] | None = None


@dataclass(frozen=True, kw_only=True)
class RunResult(Part):
    """One run's result document (docs/result-schema.md)."""

    schema: str = RESULT_SCHEMA
    kind: str
    """The plan that ran, as `PLANS` names it: "ladder", "users" or "search" (see `from_json`)."""
    model: str | None = None
    label: str | None = None
    run: int | None = None
    fresh: Fresh | None = None
    dbladder_version: str | None
    status: str | None
    started_at: str | None
    finished_at: str | None
    config: Config
    pass_mark: PassMarkSet
    engine: EngineAsRun | None
    service: Service | None
    seeding: Seeding | None
    ceiling_rps: float | None
    stopped_because: str | None
    levels: tuple[Level, ...] = ()
    flags: tuple[str, ...] = ()
    environment: Environment
    workload: WorkloadAsRun | None
    search: SearchAsRun | None = None
    spike: Spike | None = None
    generators: Generators | None = None
    transport: Transport | None = None
    peak_rps: float | None = None
    ceiling_users: int | None = None
    integrity: Integrity | None = None
    faults: tuple[FaultRecord, ...] | None = None
    database_server: Mapping[str, Any] | None = None
    native: NativeReference | None = None
    # Each role's CPUs and memory cap (`--cpus`, `--memory`) and whether the page cache was dropped.
    placement: RolePlacement | None = None
    # The database's size on disk at the start and the cap of the role that reads its files.
    storage: DatabaseSize | None = None
    # A cluster run's machines: the coordinator, then each agent (docs/cluster.md).
    machines: tuple[MachineRecord, ...] | None = None
    # The user's app (`--app`): its setup, its log, its failed answers, how it exited.
    app: AppSection | None = None
    data_size_bytes: int | None = None  # the database's size, in results from before `storage`
    # How fast the disk syncs (measured once), the level a lost load agent struck.
    fsync: Mapping[str, Any] | None = None
    incomplete_level: Mapping[str, Any] | None = None
    timeseries: tuple[Mapping[str, Any], ...] | None = None
    # Every --expect-* and how the run measured up to it (expectations.py).
    expectations: Checked | None = None
    settings: Mapping[str, Any] | None = None
    """Each option of the command that ran it: its value and where it came from (cli/config_file.py)."""
    # The warm-up before the first level (run/warm_up.py): its time, each request's first hit
    # against its settled latency; None when the run had none (older results, dbladder's service).
    warmup: WarmUpRecord | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """The result as typed values (`Part.from_json`). A result of a version that wrote "ladder"
        for every plan (`schema.KIND_ALWAYS_LADDER`: /3 and /2) reads as the plan its record shows,
        as the reports have always picked it (`plans.plan_class_of`: users when its model or config
        block says so, a search when its config block or search block does, else the ladder)."""
        result = super().from_json(data)
        if result.schema in KIND_ALWAYS_LADDER:  # their kind is always "ladder" (the schema says so)
            return replace(result, kind=plan_class_of(result).kind)
        return result

    def to_json(self) -> dict[str, Any]:
        """The result as JSON data (`Part.to_json`); one of a version that wrote "ladder" for every
        plan says "ladder" again, as it was read."""
        document = super().to_json()
        if self.schema in KIND_ALWAYS_LADDER and "kind" in document:
            document["kind"] = "ladder"
        return document

    @property
    def engine_name(self) -> str:
        """The engine's name ("sqlite", "postgresql"...), from its description or else the URL."""
        if self.engine is not None and self.engine.engine:
            return self.engine.engine
        return str(self.config.db_url or "?").split(":", 1)[0]


def as_result(result: RunResult | Mapping[str, Any]) -> RunResult:
    """A result as the typed RunResult: as it is, or read from result.json's data."""
    return result if isinstance(result, RunResult) else RunResult.from_json(result)


def read_result(document: Any, where: str = "the result") -> RunResult:
    """A result document as a RunResult; UnknownBundleVersion, in one line, when it is of a schema
    this release does not read (naming the dbladder that wrote it)."""
    version = document.get("schema") if isinstance(document, Mapping) else None
    if version not in RESULT_SCHEMAS_READ:
        raise UnknownBundleVersion(
            unknown_version(where, document, version, " or ".join(RESULT_SCHEMAS_READ))
        )
    return RunResult.from_json(document)


def unknown_version(where: str, document: Any, version: Any, known: str) -> str:
    """Why a document cannot be read, in one line: its schema, what this release reads, who wrote it."""
    writer = document.get("dbladder_version") if isinstance(document, Mapping) else None
    by = f"dbladder {writer}" if writer else "an unknown program (no dbladder_version)"
    return (
        f"{where} is schema {version!r}, which this dbladder ({__version__}) does not read ({known}); "
        f"it was written by {by}: use the dbladder release that wrote it"
    )
