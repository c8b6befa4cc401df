"""`run_round`: one whole round, from fresh data to a saved result.

    config (RunConfig) -> where the load runs and the data lives (place.py: this machine or a
           cluster's agents) and what it is sent to (targets.py), each chosen once
           -> seed the database where it lives (dbladder.data.seeding)
           -> start the target (dbladder's service, the user's app, one already running, or none)
           -> generator processes climb the plan's levels (dbladder.load.fleet)
           -> each level, once every process has finished it, becomes a row judged against the
              pass mark (dbladder.result.levels), with the machine's figures (observation.py)
           -> the run stops as its plan says -> result.json (dbladder.result.files)
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

import contextlib
import dataclasses
import os
import platform
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..app.errors import AppExited
from ..load.fleet import Fleet, GeneratorFailed, spread
from ..observe import syscalls_unavailable
from ..observe.disk import probe_seconds
from ..plans import Stop
from ..report.bundle import write_bundle
from ..report.integrity import integrity_line
from ..result.context import DatabaseSize, RolePlacement
from ..result.run import (
    EngineAsRun,
    Environment,
    Generators,
    Integrity,
    RunResult,
    Seeding,
    WorkloadAsRun,
)
from ..result.seconds import beside_samples
from ..roles import drop_page_cache
from ..servers import (
    ManagedServer,
    ServerLost,
    ServerWatch,
    is_managed_spec,
    managed_server_for,
    server_for_url,
)
from ..workloads.base import Workload
from .agent_data import AgentDataFailed
from .app_target import AppWatch
from .config import RunConfig
from .database_route import load_transport
from .diagnose import LevelDiagnosis, role_cores, service_loops
from .document import INTERRUPTED, Run, describe_load, ended_on_error, headline, make_out_dir, spike_figures
from .faults import FaultInjector, parse_faults
from .faults import describe as describe_faults
from .interrupts import Interrupted, noting_interrupts
from .levels import DatabaseLost, run_plan
from .load_target import LoadTarget
from .observation import RunObserver, check_idle, idle_check_seconds
from .place import Place, cluster_for, place_for
from .preparation import Prepared
from .progress import Progress, QuietProgress
from .role_groups import RoleGroups, role_groups
from .sizing import process_spec
from .storage_reads import database_size, reading_role_cap
from .targets import Target, target_for
from .this_machine import GeneratorCounts

if TYPE_CHECKING:
    from ..cluster.coordinator import Cluster


def run_round(
    config: RunConfig, progress: Progress | None = None, server: ManagedServer | None = None
) -> RunResult:
    """Run one round of the config's plan and return its result (also written to
    `config.out_dir / "result.json"`, with the report bundle beside it).

    Raises DbladderError for what the user can fix; a KeyboardInterrupt during the load is
    absorbed: the levels finished so far are kept, the result says "interrupted". With a
    `managed:` db_url a server is started for the round and removed after it; `server` is the
    managed server behind db_url when the caller started it (compare), so that a fault and the
    caller act on the same object.
    """
    config = config.checked()
    idle_check_seconds()  # a bad setting stops the run before it starts or writes anything
    probe_seconds()
    progress = progress or QuietProgress()
    make_out_dir(config.out_dir)
    if is_managed_spec(config.db_url):
        progress.message(f"starting a throwaway server for the run: {config.db_url}")
    with contextlib.ExitStack() as stack:
        # First the agents: a scheduler that does not answer stops the run before anything starts.
        cluster = stack.enter_context(cluster_for(config, progress))
        started = stack.enter_context(managed_server_for(config.db_url, limits=config.placement.database))
        groups = stack.enter_context(role_groups(config.placement))
        if started is not None:
            progress.message(f"{started.kind.title} server {started.name} on {started.url}")
        # An error that stops the round before its end leaves no result.json saying "running".
        with ended_on_error(config.out_dir / "result.json"):
            return _round(config, progress, started or server, groups, cluster)


@dataclass
class RoundSteps:
    """What the round's steps share: the config as served (its managed server's URL), the result
    being made, where the load runs and what it is sent to, and the data as prepared."""

    config: RunConfig
    run: Run
    place: Place
    target: Target
    groups: RoleGroups
    progress: Progress
    workload: Workload
    server: ManagedServer | None = None
    prepared: Prepared | None = None
    baseline: object = None


@dataclass
class Ended:
    """How the load ended: its status and why, the plan's stop, and what it left behind."""

    status: str = "complete"
    because: str = ""
    stop: Stop | None = None
    failure: GeneratorFailed | None = None
    lost: DatabaseLost | None = None
    final: dict[str, Any] | None = None
    watch: AppWatch | None = None
    flags: list[str] = field(default_factory=list)
    timeseries: list[dict[str, Any]] = field(default_factory=list)


def _round(
    config: RunConfig,
    progress: Progress,
    server: ManagedServer | None,
    groups: RoleGroups,
    cluster: Cluster | None = None,
) -> RunResult:
    """The round's steps, in order: the place and the target chosen and checked, the data
    prepared, the machine observed, the load sent, the writes checked, the result finished."""
    served = dataclasses.replace(config, db_url=server.url) if server is not None else config
    place = place_for(served, cluster)
    target = target_for(served, place.load)
    target.check()  # a route the service's machine cannot make: refused before anything is written
    place.data.check(served)  # so is a fault no agent may cause
    run = Run(config, config.out_dir / "result.json")
    run.update(placement=RolePlacement.from_json(config.placement.describe()))
    if server is None and served.url.kind.has_server:
        server = server_for_url(served.url)  # one of dbladder's own servers, if it is
    if (record := place.data.server_record(server)) is not None:  # its settings travel with the result
        run.update(database_server=record)
    run.save()
    progress.message("checking that the machine is quiet before the run")
    idle = check_idle()
    state = RoundSteps(served, run, place, target, groups, progress, served.round_workload(), server)
    state.prepared = place.data.prepare(target.make_data(run, progress), state.workload, progress)
    observer = _observed(state, idle)
    run.update(**headline(served.plan.headline([])))
    fleet, ended, started = _load(state, observer)
    # The service's totals and the relay's figures went into their descriptions as each stopped.
    _describe_route(run, started)
    target.finish(run, fleet.acknowledged, ended.watch)
    agent_failed = _check_integrity(state, fleet, ended)
    run.finish(ended.status, ended.because, ended.stop if ended.status == "complete" else None)
    result = run.result.to_json()
    # The reports are built from the files just written, as `dbladder report` would rebuild them.
    write_bundle(result, config.out_dir, beside_samples(ended.timeseries, result["levels"]))
    _raise_for(ended, agent_failed, run)
    return run.result


def _observed(state: RoundSteps, idle: dict[str, Any]) -> RunObserver:
    """The data and the engine described in the result, the integrity check's baseline taken, and
    the observer of the machine made ready for the load."""
    config, run, prepared, workload = state.config, state.run, state.prepared, state.workload
    assert prepared is not None
    writes = workload.write_share(prepared.mix) > 0
    described = _workload_section(workload, prepared)
    run.update(workload=WorkloadAsRun.from_json(described))
    if config.integrity and writes:  # checked where the data is, as it was seeded
        state.baseline = state.place.data.baseline(config, workload)
    if (data_layer := workload.data_layer(prepared.engine.engine)) is not None:
        run.update(workload=WorkloadAsRun.from_json(described | {"data_layer": data_layer}))
    local = state.place.data.data_url(config.url)  # None: the data's files are another machine's
    sqlite_path = local.path if local is not None else None  # a server's files are not ours to measure
    data_path = os.path.abspath(sqlite_path) if sqlite_path else None
    observer = RunObserver(prepared.engine, config.url, data_path, config.precise_clock, config.syscalls)
    # The activity probe would open SQLite's file: on another machine, there is none here.
    observer.diagnosis = (
        LevelDiagnosis(
            config.url,
            config.pass_mark,
            [op.name for op in workload.operations if op.write] if writes else [],
            os.path.dirname(data_path) if data_path else None,
            generator_cpu=not config.precise_clock,
            cores=role_cores(config.placement, service_loops(config)),
        )
        if local is not None
        else None
    )
    if observer.diagnosis is not None and (fsync := observer.diagnosis.measure_disk()) is not None:
        run.update(fsync=fsync)
    if config.syscalls and (unavailable := syscalls_unavailable()):
        state.progress.message(unavailable)
        run.flag(unavailable)
    observer.idle = idle
    state.place.load.observe(observer, run, state.progress)
    observer.storage_url = local
    _describe_storage(state, observer, prepared)
    return observer


def _workload_section(workload: Workload, prepared: Prepared) -> dict[str, Any]:
    """The result's `workload`: its operations, the mix and the data as prepared."""
    return {
        "name": workload.name,
        "source": workload.source,
        "operations": [op.name for op in workload.operations],
        "writes": [op.name for op in workload.operations if op.write],
        "mix": prepared.mix.to_dict(),
        "data": prepared.data.to_dict(),
    }


def _describe_storage(state: RoundSteps, observer: RunObserver, prepared: Prepared) -> None:
    """The database's size and memory cap, the machine and the engine in the result, saved."""
    run = state.run
    size = database_size(observer.storage_url) if observer.storage_url else None
    cap = reading_role_cap(state.config)
    run.update(storage=DatabaseSize.from_json({"size_bytes": size, "memory_cap_bytes": cap}))
    run.update(
        environment=Environment.from_json({"platform": platform.platform(), **observer.environment()}),
        engine=EngineAsRun.from_json(prepared.engine.to_dict()),
        seeding=Seeding.from_json(prepared.seeding) if prepared.seeding is not None else None,
    )
    if prepared.engine.durability_warning:
        run.flag(prepared.engine.durability_warning)
    run.save()


def _describe_generators(state: RoundSteps, generators: GeneratorCounts) -> None:
    """The result's `generators`, and in direct mode a line on how the connections are spread."""
    config, processes = state.config, generators.processes
    connections = spread(config.pool_size, processes)
    direct = config.target == "direct"
    state.run.update(
        generators=Generators.from_json(
            {
                "processes": processes,
                "sized_to_machine": config.generator_processes == 0,
                "cores": os.cpu_count(),
                "connections_per_process": connections if direct else None,
            }
        )
    )
    if direct:
        state.progress.message(
            f"direct mode: {processes} generator process(es) on {os.cpu_count()} core(s), "
            f"{config.pool_size} connections in all ({', '.join(map(str, connections))})"
        )


def _describe_target(state: RoundSteps, started: LoadTarget) -> None:
    """The started target and the load's route in the result (the engine's transport as it went)."""
    run, config = state.run, state.config
    _describe_route(run, started)
    if started.transport is None:
        return
    if run.result.engine is not None and (
        config.transport is not None or config.added_latency_ms is not None
    ):
        # The engine described itself over the URL as given; the load went by this route.
        run.update(engine=run.result.engine.updated({"transport": load_transport(started.transport)}))


def _describe_route(run: Run, started: LoadTarget) -> None:
    """The service's description and the load's route to the database, as they are now (their
    totals and the relay's figures go into them as each stops)."""
    run.update(service=started.described)
    if started.transport is not None:
        run.update(transport=started.transport)


def _load(state: RoundSteps, observer: RunObserver) -> tuple[Fleet, Ended, LoadTarget]:
    """The plan's levels sent to the target by the generator fleet, the faults caused on the way."""
    config, place, progress, prepared = state.config, state.place.load, state.progress, state.prepared
    assert prepared is not None
    faults = parse_faults(config.faults)
    # A fault may stop the server on purpose: then only a kill for memory is a loss.
    watch = ServerWatch(state.server, process_may_go=bool(faults)) if state.server is not None else None
    generators = place.generators(config)
    place.describe(state.run, progress, generators)
    _describe_generators(state, generators)
    if config.placement.drop_caches:
        progress.message("dropping the page cache (--drop-caches)")
        drop_page_cache()
    with state.target.started(progress, state.groups.hook("service"), state.workload) as started:
        _describe_target(state, started)
        # The target warmed, a search's start calibrated on it: the rest of the round goes by its plan.
        config = state.config = state.target.warm_up(
            config, state.run, started, state.workload, prepared, progress
        )
        spec = process_spec(config, prepared, started, generators.first, generators.parts)
        progress.message(describe_load(config, state.workload, prepared.mix))
        probe = state.target.probe(started, state.workload, prepared)
        with noting_interrupts() as interrupted, place.fleet(spec, generators, state.groups) as fleet:
            actions = place.fault_actions(config, fleet.origin, started, state.server)
            injector = FaultInjector(faults, spec.levels(), fleet.origin, actions, probe)
            service = started.service
            observer.start(
                spec.levels(),
                fleet.origin,
                lambda: fleet.pids,
                (lambda: service.pid) if service else None,
                started.stats or getattr(service, "stats", None),  # the user's app has no /stats
            )
            lost = watch.lost if watch is not None else None
            levels = {fault.level - 1 for fault in faults}
            ended = _drive(state, fleet, observer, interrupted, injector, started, levels, lost)
        _ended_words(state, ended, interrupted, fleet)
        _record_load(state, ended, injector if faults else None)
    return fleet, ended, started


def _drive(
    state: RoundSteps,
    fleet: Fleet,
    observer: RunObserver,
    interrupted: Interrupted,
    injector: FaultInjector,
    started: LoadTarget,
    fault_levels: set[int],
    lost: Callable[[], str | None] | None,
) -> Ended:
    """The plan run on the fleet until it stops, the processes finished and the observer stopped."""
    ended = Ended()
    try:
        with injector, state.target.watching(started, fleet) as ended.watch:
            ended.because, ended.stop = run_plan(
                state.config, fleet, state.run, observer, state.progress, interrupted, fault_levels, lost
            )
    except DatabaseLost as exc:  # keep the levels before it; the struck one is flagged
        ended.lost = exc
        fleet.stop()
    except GeneratorFailed as exc:  # a generator process died: keep what finished before it
        ended.failure = exc
        fleet.stop()
    except KeyboardInterrupt:
        ended.status, ended.because = "interrupted", INTERRUPTED
        state.progress.message("interrupted: stopping the load and saving the finished levels")
        fleet.stop()
    try:
        ended.final = fleet.finish()
    except KeyboardInterrupt:
        ended.status, ended.because = "interrupted", INTERRUPTED
    except GeneratorFailed as exc:
        ended.failure = ended.failure or exc
    finally:
        ended.flags, ended.timeseries = observer.stop()
    return ended


def _ended_words(state: RoundSteps, ended: Ended, interrupted: Interrupted, fleet: Fleet) -> None:
    """The status and the reason the load ended with, said when it was not the plan's stop."""
    if interrupted:  # also when the KeyboardInterrupt itself was lost (run/interrupts.py)
        ended.status, ended.because = "interrupted", INTERRUPTED
    elif ended.lost is not None:
        ended.status, ended.because = "database lost", str(ended.lost)
        state.progress.message(ended.because)
    elif ended.watch is not None and ended.watch.exited:  # the fleet stopped because the app did
        ended.failure, ended.status = None, "app exited"
        ended.because = f"level {len(state.run.result.levels) + 1}: {ended.watch.words}"
        state.progress.message(ended.because)
    elif ended.failure is not None:
        ended.status, ended.because = "generator failed", str(ended.failure)
        if fleet.struck is not None:  # a lost load agent: its level neither passed nor failed
            state.run.update(incomplete_level=fleet.struck)


def _record_load(state: RoundSteps, ended: Ended, injector: FaultInjector | None) -> None:
    """The load's flags, the faults' records and the generator's own figures in the result."""
    run = state.run
    run.flag(*ended.flags)
    run.flag(*state.place.load.flags(run.result.levels))
    if injector is not None:  # the faults' records go into the struck levels' rows too
        run.add_faults(injector.records, injector.records_for)
        for line in describe_faults(injector.records):
            state.progress.message(f"fault {line}")
    final = ended.final
    if final is None:
        return
    if final["errors"]:
        run.flag("generator errors: " + "; ".join(final["errors"]))
    if final["late_start"] > 0.05:
        run.flag(f"the generator started {final['late_start']:.2f} s late")
    if state.config.plan.is_spike and "per_second" in final:
        run.update(spike=spike_figures(final, state.config.pass_mark))


def _check_integrity(state: RoundSteps, fleet: Fleet, ended: Ended) -> Exception | None:
    """After the target has stopped (no request still in its hands can change the data): every
    acknowledged write looked up where the data lives; the failure of the machine that checked."""
    config, prepared, run = state.config, state.prepared, state.run
    assert prepared is not None
    if not (config.integrity and state.workload.write_share(prepared.mix) > 0) or ended.lost is not None:
        return None  # a lost server has no data left to check
    state.progress.message(
        f"checking the {fleet.acknowledged.count:,} acknowledged writes and the invariants"
        + state.place.data.data_words()
    )
    faults = [record.to_json() for record in run.result.faults or ()]
    checked = state.place.data.integrity(
        config, state.workload, prepared, fleet.acknowledged, state.baseline, faults
    )
    run.flag(*checked.flags)  # a check that cannot read the database flags the run
    section = Integrity.from_json(checked.section)
    run.update(integrity=section)
    state.progress.message(integrity_line(section))
    return checked.failure


def _raise_for(ended: Ended, agent_failed: Exception | None, run: Run) -> None:
    """The load's end as an error, once the result and the reports are written."""
    where = f"the levels finished before it are in {run.path}"
    if ended.failure is not None and ended.status == "generator failed":
        raise GeneratorFailed(f"{ended.failure}; {where}")
    if ended.status == "database lost":
        raise ServerLost(f"{ended.because}; {where}")
    if ended.status == "app exited":
        raise AppExited(f"{ended.because}; {where}")
    if agent_failed is not None:
        raise AgentDataFailed(f"{agent_failed}; the finished levels are in {run.path}")
