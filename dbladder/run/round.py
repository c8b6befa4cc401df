"""`run_ladder`: one whole round, from fresh data to a saved result.

    config (RunConfig) -> seed the database (dbladder.data.seeding)
           -> start the service (dbladder.service)
           -> generator processes climb the ladder or run the users (dbladder.load.fleet)
           -> each level, once every process has finished it, becomes a row judged against the
              pass mark (dbladder.result.levels), with the machine's figures (observer.py)
           -> the run stops after the first failed level -> result.json (dbladder.result.files)
           -> with writes: every acknowledged write looked up, the invariants checked (integrity.py)
           -> the report bundle (dbladder.report.bundle)

`db_url` may be `managed:postgresql` (or mariadb, with settings): a throwaway server of dbladder's
own, started for the round and removed after it (dbladder.servers). `faults` kill or restart the
service or that server mid-level (faults.py); the run goes on through them.

The result is written after every level, so an interrupted or killed run leaves every finished
level on disk; Ctrl-C stops the load, keeps what was measured and stops the service. Progress
goes out through a `Progress` object: the library prints nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import ipaddress
import os
import platform
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from .. import __version__
from ..data.seeding import SeedReport, seed
from ..engines import opened
from ..engines.base import DEFAULT_POOL_SIZE, EngineInfo, EngineOptions
from ..errors import DbladderError, InvalidConfig, UsageError
from ..load.fleet import Fleet, LevelDone, ProcessSpec, spread
from ..load.recorder import LiveView
from ..observe import syscalls_unavailable
from ..plans import Outcome, Plan, Search, Stop, plan_to_config
from ..report.bundle import write_bundle
from ..result.files import write_json
from ..result.levels import level_row
from ..result.passmark import PassMark
from ..result.schema import RESULT_SCHEMA
from ..result.spike import spike_recovery
from ..servers import ManagedServer, is_managed_spec, managed_server_for, parse_managed_spec, server_for_url
from ..service import ServiceConfig, running_service
from ..service.server import RunningService
from ..urls import parse_url
from ..workloads.base import DataSpec, Mix, Workload
from ..workloads.registry import DEFAULT_WORKLOAD, load_workload
from .faults import (
    FaultActions,
    FaultInjector,
    add_faults,
    direct_probe,
    fault_problems,
    http_probe,
    parse_faults,
)
from .integrity import integrity_section, take_baseline
from .integrity import summary as integrity_summary
from .interrupts import Interrupted, noting_interrupts
from .observer import RunObserver, check_idle, idle_check_seconds
from .transport import database_route, load_transport, route_problems, route_words

TARGETS = ("http", "direct")

SEARCH_PLAN = "search"
"""The name a result gives the ceiling search as its preset: it is the plan when no preset is given."""


@dataclass(frozen=True)
class RunConfig:
    """Everything a round needs; `validate()` reports every problem at once."""

    # A database URL, or managed:ENGINE[?settings] for a server started for the round. Kept out of
    # repr(): it may hold a password.
    db_url: str = field(default="sqlite:///shop.db", repr=False)
    # The web app: a workload name, a .py file or module:attr (dbladder.workloads.registry).
    workload: str = DEFAULT_WORKLOAD
    # The plan (dbladder.plans): a ladder, users (the closed model of "Postgres vs MariaDB on two
    # dedicated CPUs") or the ceiling search, the default of `dbladder run`. `preset` names it in
    # the result.
    preset: str | None = None
    plan: Plan = field(default_factory=Search)
    # The share of requests that are writes; None keeps the workload's own weights.
    write_share: float | None = None
    # Operation weights by name, instead of the workload's; with write_share, rescaled to it.
    weights: dict[str, float] | None = None
    pass_mark: PassMark = field(default_factory=PassMark)
    # The data set's seed; None: use the data already in the database (its sizes are read from it).
    seed: int | None = 1
    # The workload's default sizes times `scale`, with `sizes` set as given (e.g. {"orders": 5000}).
    scale: float = 1.0
    sizes: dict[str, int] = field(default_factory=dict)
    target: str = "http"
    workers: int = 2
    pool_size: int = DEFAULT_POOL_SIZE
    sqlite_writers: int = 0
    # 0: sized to the machine (`generator_processes()`): in direct mode one process per core when
    # the engine runs inside the generator (SQLite), half the cores for a server on this host, whose
    # backends need cores of their own; one process over HTTP, where the service has the cores.
    generator_processes: int = 0
    in_flight: int = 1000  # per generator process
    timeout: float = 5.0  # per request, seconds
    precise_clock: bool = False
    syscalls: bool = False  # count system calls per process group for a few seconds per level
    continue_after_fail: bool = False
    out_dir: Path = Path("results")
    service_host: str = "127.0.0.1"
    # A service already running (http://host:port): the load goes there and nothing is started.
    # The database URL is still needed, to seed it and to size the mix to its data.
    service_url: str | None = None
    allow_remote_target: bool = False
    mix_seed: int = 1
    # Faults to cause during the load, as KIND@LEVEL[:SECOND] (faults.py).
    faults: tuple[str, ...] = ()
    # After a run with writes: every acknowledged write looked up, the invariants checked.
    integrity: bool = True
    # How the load reaches the database (run/transport.py): None keeps the URL's own way; with
    # added_latency_ms the load goes through the latency relay (0: the relay adding nothing).
    transport: str | None = None
    added_latency_ms: float | None = None

    def validate(self) -> list[str]:
        problems: list[str] = []
        url = None
        engine = None
        try:
            if is_managed_spec(self.db_url):
                engine = parse_managed_spec(self.db_url)[0]
            else:
                url = parse_url(self.db_url)
                engine = url.engine
        except DbladderError as exc:
            problems.append(f"db: {exc}")
            url = None
        problems += self.plan.validate()
        problems += self.pass_mark.validate()
        try:
            workload = load_workload(self.workload)
        except DbladderError as exc:
            problems.append(str(exc))
        else:
            if self.seed is not None and not (isinstance(self.seed, int) and 0 <= self.seed < 2**63):
                problems.append(f"seed must be a whole number from 0 to 2**63-1, not {self.seed!r}")
            if not (isinstance(self.scale, int | float) and 0 < self.scale <= 10_000):
                problems.append(f"scale must be above 0 and at most 10,000, not {self.scale!r}")
            else:
                problems += workload.validate_sizes(workload.scaled_sizes(self.scale, self.sizes))
            try:
                workload.mix(self.write_share, self.weights)
            except InvalidConfig as exc:
                problems += exc.problems
        if self.target not in TARGETS:
            problems.append(f"target must be one of {', '.join(TARGETS)}, not {self.target!r}")
        problems += route_problems(self.db_url, self.transport, self.added_latency_ms, self.service_url)
        for name, low, high in (
            ("workers", 1, 64),
            ("generator_processes", 0, 64),
            ("in_flight", 1, 100_000),
            ("pool_size", 1, 10_000),
        ):
            value = getattr(self, name)
            if not low <= value <= high:
                problems.append(f"{name} must be from {low} to {high}, not {value}")
        if self.sqlite_writers not in (0, 1):
            problems.append(
                f"sqlite_writers must be 0 (every connection writes) or 1, not {self.sqlite_writers}"
            )
        elif self.sqlite_writers and engine is not None and engine != "sqlite":
            problems.append(f"sqlite_writers=1 applies to SQLite only, not to {engine}")
        if not self.timeout > 0:
            problems.append(f"timeout must be above 0 seconds, not {self.timeout}")
        service = None
        if self.service_url is not None:
            try:
                service = parse_service_url(self.service_url)
            except UsageError as exc:
                problems.append(str(exc))
            if self.target != "http":
                problems.append("service_url goes with target http, not direct")
        if not self.allow_remote_target:
            if service is not None and not _is_loopback(service[0]):
                problems.append(
                    f"the service at {self.service_url} is not on a loopback address; "
                    "load goes to loopback only unless --allow-remote-target is given"
                )
            if not _is_loopback(self.service_host):
                problems.append(
                    f"the service would listen on {self.service_host}, which is not a loopback address; "
                    "load goes to loopback only unless --allow-remote-target is given"
                )
            if self.target == "direct" and url is not None and url.host and not _is_loopback(url.host):
                problems.append(
                    f"direct mode would send load to {url.host}, which is not a loopback address; "
                    "give --allow-remote-target to allow it"
                )
        problems += self._fault_problems(engine)
        return problems

    def _fault_problems(self, engine: str | None) -> list[str]:
        if not self.faults:
            return []
        try:
            faults = parse_faults(self.faults)
            levels = self.plan.scheduled()
        except DbladderError as exc:
            return [str(exc)]
        if not levels:
            return [
                "--fault needs a ladder or users plan (--preset NAME): a search's probes and their "
                "timing are not known before the run"
            ]
        return fault_problems(
            faults,
            db_url=self.db_url,
            target=self.target,
            service_url=self.service_url,
            sqlite_writers=self.sqlite_writers,
            levels=levels,
            engine=engine,
        )

    def checked(self) -> RunConfig:
        problems = self.validate()
        if problems:
            raise InvalidConfig(problems)
        return self

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for name, value in asdict(self).items():
            # The plan under its kind's key, as results have always kept it.
            data.update(plan_to_config(self.plan) if name == "plan" else {name: value})
        data["sizes"] = dict(self.sizes)
        data["db_url"] = self.db_url if is_managed_spec(self.db_url) else parse_url(self.db_url).redacted
        data["faults"] = list(self.faults)
        data["out_dir"] = str(self.out_dir)
        return data


def parse_service_url(url: str) -> tuple[str, int]:
    """(host, port) of an http://host:port service URL, or UsageError saying what is wrong."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "http" or not parts.hostname or port is None or parts.path not in ("", "/"):
        raise UsageError(f"service URL must look like http://127.0.0.1:8000, not {url!r}")
    return parts.hostname, port


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Progress(Protocol):
    """What a run tells its caller while it works (the CLI draws it; tests can record it)."""

    def message(self, text: str) -> None: ...

    def seeding(self, table: str, rows: int, planned: dict[str, int]) -> None: ...

    def live(self, view: LiveView) -> None: ...

    def level(self, row: dict[str, Any]) -> None: ...


class QuietProgress:
    """A Progress that ignores everything."""

    def message(self, text: str) -> None:
        pass

    def seeding(self, table: str, rows: int, planned: dict[str, int]) -> None:
        pass

    def live(self, view: LiveView) -> None:
        pass

    def level(self, row: dict[str, Any]) -> None:
        pass


@dataclass(frozen=True)
class Prepared:
    """The database as the load will find it: its engine's settings, how it was seeded, the mix."""

    engine: EngineInfo
    seeding: dict[str, Any] | None
    data: DataSpec
    mix: Mix


async def _prepare_database(config: RunConfig, workload: Workload, progress: Progress) -> Prepared:
    """Check the workload's SQL, seed (unless told not to), describe the engine, and read the sizes."""
    options = EngineOptions(pool_size=config.pool_size)
    async with opened(config.db_url, replace(options, pool_size=4)) as engine:
        seeding: SeedReport | None = None
        if config.seed is not None:
            data = DataSpec(config.seed, workload.scaled_sizes(config.scale, config.sizes))
            planned = workload.planned_rows(data.sizes)
            sizes = ", ".join(f"{count:,} {name}" for name, count in data.sizes.items())
            progress.message(f"seeding the {workload.name} workload: {sizes} (seed {data.seed})")
            seeding = await seed(
                engine, workload, data, lambda table, rows: progress.seeding(table, rows, planned)
            )
        else:
            data = DataSpec(0, await workload.sizes_in(engine))
        await workload.check_sql(engine)
        info = await engine.describe()
    info = replace(info, pool_size=config.pool_size)
    return Prepared(
        info, seeding.to_dict() if seeding else None, data, workload.mix(config.write_share, config.weights)
    )


@dataclass
class Target:
    """Where the load goes: host and port (none in direct mode), and the service if dbladder runs it."""

    host: str = ""
    port: int = 0
    description: dict[str, Any] | None = None
    service: RunningService | None = None
    db_url: str = ""  # the URL the load uses (another transport, or the latency relay)
    transport: dict[str, Any] | None = None  # how it gets there, for the result (None: as given)


@contextlib.contextmanager
def _target(config: RunConfig, progress: Progress) -> Iterator[Target]:
    """The target of the load, reaching the database by the route `--transport` and
    `--added-latency` choose (the relay, if any, outlives the service)."""
    with database_route(config.db_url, config.transport, config.added_latency_ms) as route:
        if config.transport is not None or config.added_latency_ms is not None:
            progress.message(f"the load reaches the database over {route_words(route.description)}")
        with _load_target(replace(config, db_url=route.url), progress) as target:
            target.db_url, target.transport = route.url, route.description
            yield target


@contextlib.contextmanager
def _load_target(config: RunConfig, progress: Progress) -> Iterator[Target]:
    """The target of the load: a service started for the round, one already running, or none (direct)."""
    if config.target == "direct":
        yield Target()
        return
    if config.service_url is not None:
        host, port = parse_service_url(config.service_url)
        progress.message(f"load goes to the service already running at {config.service_url}")
        yield Target(host, port, {"url": config.service_url, "started_by_dbladder": False})
        return
    service_config = ServiceConfig(
        config.db_url,
        workload=config.workload,
        host=config.service_host,
        port=0,
        workers=config.workers,
        pool_size=config.pool_size,
        pool_timeout=config.timeout,
        sqlite_writers=config.sqlite_writers,
    )
    with running_service(service_config) as service:
        progress.message(
            f"service on {service.url}: {config.workers} worker(s), pool {config.pool_size}"
            + (", one SQLite writer" if config.sqlite_writers else "")
        )
        description = {
            "workers": config.workers,
            "pool_size": config.pool_size,
            "sqlite_writers": config.sqlite_writers,
            "url": service.url,
        }
        yield Target(service.config.host, service.config.port, description, service)
        with contextlib.suppress(DbladderError, OSError):
            description["stats"] = service.stats()["totals"]


class Run:
    """One round in progress: its result document, saved after every level."""

    def __init__(self, config: RunConfig, path: Path):
        self.config = config
        self.path = path
        self.result: dict[str, Any] = {
            "schema": RESULT_SCHEMA,
            "kind": "ladder",
            "model": config.plan.model,
            "dbladder_version": __version__,
            "status": "running",
            "started_at": _now(),
            "finished_at": None,
            "config": config.to_dict(),
            "pass_mark": asdict(config.pass_mark),
            "engine": None,
            "service": None,
            "seeding": None,
            "ceiling_rps": None,
            "stopped_because": None,
            "levels": [],
            "flags": [],
            "environment": {},
        }

    def save(self) -> None:
        write_json(self.path, self.result)

    def add_level(self, level: dict[str, Any], observer: RunObserver) -> dict[str, Any]:
        row = level_row(level, self.config.pass_mark)
        observer.level(level, row)  # the machine's figures, the service's time, and the flags
        self.result["levels"].append(row)
        self._figures()
        self.save()
        return row

    def finish(self, status: str, stopped_because: str, stop: Stop | None = None) -> dict[str, Any]:
        """The result, finished: `stop` is why the plan stopped, when it was the plan that did."""
        self.result["status"] = status
        self.result["stopped_because"] = stopped_because
        self.result["finished_at"] = _now()
        self._figures(stop)
        self.save()
        return self.result

    def _figures(self, stop: Stop | None = None) -> None:
        """The headline figures: the plan's (the ceiling, or the users held), and the most answers
        per second any level achieved."""
        levels = self.result["levels"]
        self.result["peak_rps"] = max((level["achieved_rps"] for level in levels), default=None)
        self.result.update(self.config.plan.headline([outcome_of(level) for level in levels], stop))


def outcome_of(row: dict[str, Any], excused: bool = False) -> Outcome:
    """A level's row as its plan sees it."""
    return Outcome(
        row["offered_rps"],
        row["passed"],
        tuple(row["reasons"]),
        excused,
        row["achieved_rps"],
        row.get("users"),
    )


def describe_load(config: RunConfig, workload: Workload, mix: Mix) -> str:
    """One line saying what load a round sends."""
    target = f"{workload.name}: {workload.write_share(mix):.0%} writes, target {config.target}"
    return f"{config.plan.describe()}, {target}"


def _spike_figures(final: dict[str, Any], pass_mark: PassMark) -> dict[str, Any] | None:
    """A spike ("Postgres vs MariaDB on two dedicated CPUs"): the seconds until p95 was back within
    20 % with failures under the pass mark's bound."""
    try:
        recovery = spike_recovery(final, max_fail_pct=pass_mark.max_fail_pct)
    except ValueError as exc:
        return {"recovery_seconds": None, "note": str(exc)}
    return {"recovery_seconds": recovery, "tolerance": 0.2}


def generator_processes(config: RunConfig) -> int:
    """How many generator processes a round runs: as configured, or sized to the machine (0)."""
    if config.generator_processes:
        return config.generator_processes
    if config.target != "direct":
        return 1
    cores = os.cpu_count() or 1
    if parse_url(config.db_url).engine != "sqlite":
        # A server on this host needs cores of its own: with PostgreSQL on 2 cores, one process
        # holding all 8 connections passed 10,000 req/s (p95 30 ms) where two processes of 4 or 8
        # failed at 7,700 and 10,000 (p95 40-555 ms), docs/direct.md.
        cores = max(1, cores // 2)
    return max(1, min(cores, config.pool_size, 64))


def process_spec(config: RunConfig, prepared: Prepared, target: Target, processes: int) -> ProcessSpec:
    """What every generator process of the round is given: the one place the config reaches them."""
    # A user whose request finds no free connection is dropped: leave room for every user.
    in_flight = max(config.in_flight, -(-config.plan.peak_users // processes))
    return ProcessSpec(
        config.plan,
        workload=config.workload,
        mix=prepared.mix,
        sizes=dict(prepared.data.sizes),
        mix_seed=config.mix_seed,
        host=target.host,
        port=target.port,
        in_flight=in_flight,
        timeout=config.timeout,
        target=config.target,
        db_url=target.db_url,
        connections=config.pool_size,
        precise_clock=config.precise_clock,
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def make_out_dir(path: Path) -> None:
    """Create the output folder, or UsageError saying why it cannot be."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the output folder {path}: {exc.strerror}") from None


def default_out_dir(root: Path = Path("results")) -> Path:
    """A new timestamped folder under `root`."""
    return root / datetime.now().strftime("%Y%m%d-%H%M%S")


def _rows(
    events: Iterable[LevelDone | LiveView],
    run: Run,
    observer: RunObserver,
    progress: Progress,
    interrupted: Interrupted,
) -> Iterator[dict[str, Any]]:
    """The result row of each level as the fleet finishes it, added to the run and reported; the
    live views in between go to `progress`. Stops at a Ctrl-C noted by `interrupted`."""
    for event in events:
        interrupted.check()
        if not isinstance(event, LevelDone):
            progress.live(event)
            continue
        row = run.add_level(event.level, observer)
        progress.level(row)
        yield row


def _run_plan(
    config: RunConfig,
    fleet: Fleet,
    run: Run,
    observer: RunObserver,
    progress: Progress,
    interrupted: Interrupted,
    fault_levels: set[int],
) -> tuple[str, Stop | None]:
    """Run level after level as the plan asks, each a level of the result; why the run stopped,
    and the plan's own reason when it was the plan that stopped it.

    A level with a fault is expected to fail, and continue-after-fail asks to go on through every
    failure: both are excused, so a ladder goes on. After each level the fleet rests the plan's
    `settle` seconds (a search's: so that a failed probe's backlog, the service still working
    through requests that timed out, does not count against the next one).
    """
    plan = config.plan
    shown: list[Outcome] = []
    started = time.monotonic()
    while (planned := plan.next_level(shown, time.monotonic() - started)) is not None:
        level = fleet.start_level(planned)
        observer.watch(level)
        for row in _rows(fleet.level_events(level.index), run, observer, progress, interrupted):
            excused = config.continue_after_fail or row["index"] in fault_levels
            shown.append(outcome_of(row, excused))
        if len(shown) <= level.index:  # the fleet stopped before the level reported
            return f"the generator stopped before level {level.index + 1} finished", None
        time.sleep(plan.settle)
    fleet.end_schedule()
    stop = plan.stop(shown, time.monotonic() - started)
    return stop.words, stop


def run_ladder(
    config: RunConfig, progress: Progress | None = None, server: ManagedServer | None = None
) -> dict[str, Any]:
    """Run one round and return its result (also written to `config.out_dir / "result.json"`).

    Raises DbladderError for what the user can fix; a KeyboardInterrupt during the load is
    absorbed: the levels finished so far are kept, the result says "interrupted". With a
    `managed:` db_url a server is started for the round and removed after it; `server` is the
    managed server behind db_url when the caller started it (compare), so that a fault and the
    caller act on the same object.
    """
    config = config.checked()
    idle_check_seconds()  # a bad setting stops the run before it starts or writes anything
    progress = progress or QuietProgress()
    make_out_dir(config.out_dir)
    if is_managed_spec(config.db_url):
        progress.message(f"starting a throwaway server for the run: {config.db_url}")
    with managed_server_for(config.db_url) as started:
        if started is not None:
            progress.message(f"{started.kind.title} server {started.name} on {started.url}")
        return _run_ladder(config, progress, started or server)


def _run_ladder(config: RunConfig, progress: Progress, server: ManagedServer | None) -> dict[str, Any]:
    run = Run(config, config.out_dir / "result.json")
    if server is not None:
        config = dataclasses.replace(config, db_url=server.url)
    else:
        server = server_for_url(config.db_url) if parse_url(config.db_url).engine != "sqlite" else None
    if server is not None:  # a managed server: its settings travel with the result
        run.result["database_server"] = server.record()
    run.save()
    progress.message("checking that the machine is quiet before the run")
    idle = check_idle()
    workload = load_workload(config.workload)
    prepared = asyncio.run(_prepare_database(config, workload, progress))
    engine_info, mix = prepared.engine, prepared.mix
    run.result["workload"] = {
        "name": workload.name,
        "source": workload.source,
        "operations": [op.name for op in workload.operations],
        "writes": [op.name for op in workload.operations if op.write],
        "mix": mix.to_dict(),
        "data": prepared.data.to_dict(),
    }
    check = config.integrity and workload.write_share(mix) > 0
    baseline = take_baseline(config.db_url, workload) if check else None
    if (data_layer := workload.data_layer(engine_info.engine)) is not None:
        run.result["workload"]["data_layer"] = data_layer
    sqlite_path = parse_url(config.db_url).path  # None for a server: its files are not ours to measure
    data_path = os.path.abspath(sqlite_path) if sqlite_path else None
    observer = RunObserver(engine_info, data_path, config.precise_clock, config.syscalls)
    if config.syscalls and (unavailable := syscalls_unavailable()):
        progress.message(unavailable)
        run.result["flags"].append(unavailable)
    observer.idle = idle
    run.result["environment"] = {"platform": platform.platform(), **observer.environment()}
    run.result["engine"] = engine_info.to_dict()
    run.result["seeding"] = prepared.seeding
    if engine_info.durability_warning:
        run.result["flags"].append(engine_info.durability_warning)
    run.save()

    run.result.update(config.plan.headline([]))
    status, stop = "complete", None
    faults = parse_faults(config.faults)
    fault_levels = {fault.level - 1 for fault in faults}
    processes = generator_processes(config)
    connections = spread(config.pool_size, processes)
    run.result["generators"] = {
        "processes": processes,
        "sized_to_machine": config.generator_processes == 0,
        "cores": os.cpu_count(),
        "connections_per_process": connections if config.target == "direct" else None,
    }
    if config.target == "direct":
        progress.message(
            f"direct mode: {processes} generator process(es) on {os.cpu_count()} core(s), "
            f"{config.pool_size} connections in all ({', '.join(map(str, connections))})"
        )
    with _target(config, progress) as target:
        run.result["service"] = target.description
        if target.transport is not None:
            run.result["transport"] = target.transport  # the relay's figures are added as it stops
            if config.transport is not None or config.added_latency_ms is not None:
                # The engine described itself over the URL as given; the load went by this route.
                run.result["engine"]["transport"] = load_transport(target.transport)
        spec = process_spec(config, prepared, target, processes)
        progress.message(describe_load(config, workload, mix))
        probe = (
            http_probe(target.host, target.port, workload, prepared.data.sizes)
            if config.target == "http"
            else direct_probe(config.db_url, workload, prepared.data.sizes)
        )
        with noting_interrupts() as interrupted, Fleet(spec, processes) as fleet:
            injector = FaultInjector(
                faults, spec.levels(), fleet.origin, FaultActions(target.service, server), probe
            )
            service = target.service
            observer.start(
                spec.levels(),
                fleet.origin,
                lambda: fleet.pids,
                (lambda: service.pid) if service else None,
                service.stats if service else None,
            )
            try:
                with injector:
                    stopped_because, stop = _run_plan(
                        config, fleet, run, observer, progress, interrupted, fault_levels
                    )
            except KeyboardInterrupt:
                status, stopped_because = "interrupted", "interrupted by the user (Ctrl-C)"
                progress.message("interrupted: stopping the load and saving the finished levels")
                fleet.stop()
            try:
                final = fleet.finish()
            except KeyboardInterrupt:
                status, stopped_because = "interrupted", "interrupted by the user (Ctrl-C)"
                final = None
            finally:
                run_flags, timeseries = observer.stop()
        if interrupted:  # also when the KeyboardInterrupt itself was lost (run/interrupts.py)
            status, stopped_because = "interrupted", "interrupted by the user (Ctrl-C)"
        run.result["flags"] += run_flags
        if faults:
            for line in add_faults(run.result, injector):
                progress.message(f"fault {line}")
        if final is not None:
            if final["errors"]:
                run.result["flags"].append("generator errors: " + "; ".join(final["errors"]))
            if final["late_start"] > 0.05:
                run.result["flags"].append(f"the generator started {final['late_start']:.2f} s late")
            if config.plan.is_spike and "per_second" in final:
                run.result["spike"] = _spike_figures(final, config.pass_mark)
    # After the service has stopped: no request still in its hands can change the data meanwhile.
    if check:
        progress.message(f"checking the {fleet.acknowledged.count:,} acknowledged writes and the invariants")
        run.result["integrity"] = integrity_section(
            config.db_url, workload, prepared.data, fleet.acknowledged, baseline, engine_info, run.result
        )
        progress.message(integrity_summary(run.result["integrity"]))
    result = run.finish(status, stopped_because, stop if status == "complete" else None)
    # The reports are built from the files just written, as `dbladder report` would rebuild them.
    write_bundle(result, config.out_dir, timeseries)
    return result
