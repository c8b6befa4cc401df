"""`run_ladder`: one whole round, from fresh data to a saved result.

    config (RunConfig) -> seed the database (dbladder.data.seeding)
           -> start the service (dbladder.service)
           -> generator processes climb the ladder or run the users (dbladder.load.fleet)
           -> each level, once every process has finished it, becomes a row judged against the
              pass mark (dbladder.result.levels), with the machine's figures (observation.py)
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
import os
import platform
from contextlib import AbstractContextManager
from typing import Any

from ..app.errors import AppExited
from ..load.fleet import Fleet, GeneratorFailed, PartRange, ProcessSpec, spread
from ..observe import syscalls_unavailable
from ..observe.database import DatabaseProcesses
from ..observe.disk import probe_seconds
from ..observe.processes import nothing
from ..report.bundle import write_bundle
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
from ..workloads.registry import load_workload
from .agent_data import AgentDataFailed, agent_words, baseline_on_agent, integrity_on_agent, prepare_on_agent
from .app_target import APP_LOG, app_probe, app_section, run_app_setup, watch_app
from .config import RunConfig
from .database_route import load_transport
from .diagnose import LevelDiagnosis, role_cores, service_loops
from .document import Run, describe_load, ended_on_error, make_out_dir, spike_figures
from .faults import (
    FaultActions,
    FaultInjector,
    add_faults,
    direct_probe,
    http_probe,
    parse_faults,
)
from .integrity import integrity_section, take_baseline
from .integrity import summary as integrity_summary
from .interrupts import noting_interrupts
from .levels import DatabaseLost, run_plan
from .load_target import check_remote_route, load_target, service_agent
from .observation import RunObserver, check_idle, idle_check_seconds
from .preparation import prepare_database
from .progress import Progress, QuietProgress
from .role_groups import RoleGroups, role_groups
from .sizing import generator_processes, process_spec
from .storage_reads import database_size, reading_role_cap
from .warm_up import calibrated, warm_up_target


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
    probe_seconds()
    progress = progress or QuietProgress()
    make_out_dir(config.out_dir)
    if is_managed_spec(config.db_url):
        progress.message(f"starting a throwaway server for the run: {config.db_url}")
    with contextlib.ExitStack() as stack:
        # First the agents: a scheduler that does not answer stops the run before anything starts.
        cluster = stack.enter_context(_cluster(config, progress)) if config.cluster else None
        started = stack.enter_context(managed_server_for(config.db_url, limits=config.placement.database))
        groups = stack.enter_context(role_groups(config.placement))
        if started is not None:
            progress.message(f"{started.kind.title} server {started.name} on {started.url}")
        # An error that stops the round before its end leaves no result.json saying "running".
        with ended_on_error(config.out_dir / "result.json"):
            return _run_ladder(config, progress, started or server, groups, cluster)


def _cluster(config: RunConfig, progress: Progress) -> Any:
    """The cluster of `config.cluster`, connected, its agents found and their clocks measured."""
    from ..cluster.coordinator import Cluster  # only a cluster run imports Dask

    assert config.cluster is not None
    progress.message(f"connecting to the cluster's scheduler at {config.cluster}")
    # A managed server is started here after the agents join: no db agent's host to find it on.
    db_url = None if is_managed_spec(config.db_url) else config.db_url
    return Cluster(config.cluster, tls=config.cluster_tls, db_url=db_url)


def _generator(
    config: RunConfig, spec: ProcessSpec, processes: int, groups: RoleGroups, cluster: Any
) -> AbstractContextManager[Any]:
    """The generator fleet: this machine's processes, or the load agents' fleets of a cluster."""
    if cluster is None:
        return groups.started_in("generator", Fleet(spec, processes))
    from ..cluster.fleet import ClusterFleet

    return ClusterFleet(cluster, spec, cluster_counts(config, cluster))


def cluster_counts(config: RunConfig, cluster: Any) -> dict[str, int]:
    """The generator processes of each load agent: as configured, or one per agent over HTTP and
    sized to the agent's cores in direct mode (as `generator_processes` sizes them to this one's)."""
    agents = cluster.of_role("load")
    if config.generator_processes:
        return {agent.name: config.generator_processes for agent in agents}
    if config.target != "direct":
        return {agent.name: 1 for agent in agents}
    share = max(1, config.pool_size // max(1, len(agents)))
    return {agent.name: max(1, min(agent.machine["cores"] or 1, share, 64)) for agent in agents}


def _run_ladder(
    config: RunConfig,
    progress: Progress,
    server: ManagedServer | None,
    groups: RoleGroups,
    cluster: Any = None,
) -> dict[str, Any]:
    served = dataclasses.replace(config, db_url=server.url) if server is not None else config
    # A route the app agent's machine cannot make is refused before anything is written or seeded.
    check_remote_route(served, cluster)
    # So is a fault no agent may cause: a server stopped by the db agent on its machine, or none.
    db_agent, db_record = _server_agent(served, cluster)
    run = Run(config, config.out_dir / "result.json")
    run.update(placement=config.placement.describe())
    config = served
    if server is None and config.url.kind.has_server:
        server = server_for_url(config.url)  # one of dbladder's own servers, if it is
    if server is not None:  # a managed server: its settings travel with the result
        run.update(database_server=server.record())
    elif db_record is not None:  # found on the db agent's machine, where its faults act
        run.update(database_server=db_record | {"agent": db_agent.name})
    run.save()
    progress.message("checking that the machine is quiet before the run")
    idle = check_idle()
    workload = config.round_workload()
    if config.app is not None:  # the app's own setup makes its data: nothing is seeded
        run.update(app={"setup_s": run_app_setup(config, progress), "log": APP_LOG})
    preparing = dataclasses.replace(config, seed=None) if config.app else config
    seeder = (
        cluster.data_agent(config.url.kind.has_server) if cluster is not None and not config.app else None
    )
    if seeder is not None:  # seeded where the engine keeps its data: the db host, or the app's for SQLite
        progress.message(f"preparing the data on {agent_words(seeder)}")
        prepared = prepare_on_agent(cluster, seeder, preparing)
    else:
        prepared = asyncio.run(prepare_database(preparing, workload, progress))
    # SQLite's file on the app agent's machine: not this machine's to open, size or check.
    remote_file = seeder is not None and not config.url.kind.has_server
    engine_info, mix = prepared.engine, prepared.mix
    described = {
        "name": workload.name,
        "source": workload.source,
        "operations": [op.name for op in workload.operations],
        "writes": [op.name for op in workload.operations if op.write],
        "mix": mix.to_dict(),
        "data": prepared.data.to_dict(),
    }
    run.update(workload=described)
    check = config.integrity and workload.write_share(mix) > 0
    baseline = None
    if check and seeder is not None:  # checked where the data is, as it was seeded (agent_data.py)
        baseline = baseline_on_agent(cluster, seeder, config)
    elif check:
        baseline = take_baseline(config.url, workload)
    if (data_layer := workload.data_layer(engine_info.engine)) is not None:
        run.update(workload=described | {"data_layer": data_layer})
    sqlite_path = None if remote_file else config.url.path  # a server's files are not ours to measure
    data_path = os.path.abspath(sqlite_path) if sqlite_path else None
    observer = RunObserver(engine_info, config.url, data_path, config.precise_clock, config.syscalls)
    # The activity probe would open SQLite's file here: on the app agent's machine, there is none.
    observer.diagnosis = (
        None
        if remote_file
        else LevelDiagnosis(
            config.url,
            config.pass_mark,
            [op.name for op in workload.operations if op.write] if workload.write_share(mix) > 0 else [],
            os.path.dirname(data_path) if data_path else None,
            generator_cpu=not config.precise_clock,
            cores=role_cores(config.placement, service_loops(config)),
        )
    )
    if observer.diagnosis is not None and (fsync := observer.diagnosis.measure_disk()) is not None:
        run.update(fsync=fsync)
    if config.syscalls and (unavailable := syscalls_unavailable()):
        progress.message(unavailable)
        run.flag(unavailable)
    observer.idle = idle
    if cluster is not None:
        observer.clocks = cluster.level_clocks
        cluster.notify = progress.message  # a db agent lost: one line, the run goes on
    if cluster is not None and (cluster.of_role("db") or cluster.of_role("app")):
        observer.hosts = cluster.host_figures  # a db or app agent's host is sampled where it runs
        for name, found in cluster.found.items():
            if found.get("warning"):
                run.flag(f"db agent {name}: {found['warning']}")
            if found.get("pid") is not None:  # found on its host: nothing of it to find here
                observer.database = DatabaseProcesses(nothing, f"db agent {name}: {found['how']}")
    observer.storage_url = None if remote_file else config.url
    run.update(
        storage={
            "size_bytes": database_size(observer.storage_url) if observer.storage_url else None,
            "memory_cap_bytes": reading_role_cap(config),
        }
    )
    run.update(
        environment={"platform": platform.platform(), **observer.environment()},
        engine=engine_info.to_dict(),
        seeding=prepared.seeding,
    )
    if engine_info.durability_warning:
        run.flag(engine_info.durability_warning)
    run.save()

    run.update(**config.plan.headline([]))
    status, stop = "complete", None
    failure: GeneratorFailed | None = None
    lost: DatabaseLost | None = None
    faults = parse_faults(config.faults)
    # A fault may stop the server on purpose: then only a kill for memory is a loss.
    watch = ServerWatch(server, process_may_go=bool(faults)) if server is not None else None
    fault_levels = {fault.level - 1 for fault in faults}
    counts = cluster_counts(config, cluster) if cluster is not None else None
    processes = sum(counts.values()) if counts else generator_processes(config)
    connections = spread(config.pool_size, processes)
    if cluster is not None:
        run.update(machines=cluster.machines())
        for line in _machine_lines(cluster, counts or {}):
            progress.message(line)
    run.update(
        generators={
            "processes": processes,
            "sized_to_machine": config.generator_processes == 0,
            "cores": os.cpu_count(),
            "connections_per_process": connections if config.target == "direct" else None,
        }
    )
    if config.target == "direct":
        progress.message(
            f"direct mode: {processes} generator process(es) on {os.cpu_count()} core(s), "
            f"{config.pool_size} connections in all ({', '.join(map(str, connections))})"
        )
    if config.placement.drop_caches:
        progress.message("dropping the page cache (--drop-caches)")
        drop_page_cache()
    with load_target(config, progress, groups, cluster, workload) as target:
        run.update(service=target.description)
        if target.transport is not None:
            run.update(transport=target.transport)
            if run.result.engine is not None and (
                config.transport is not None or config.added_latency_ms is not None
            ):
                # The engine described itself over the URL as given; the load went by this route.
                engine = run.result.engine.updated({"transport": load_transport(target.transport)})
                run.update(engine=engine)
        if (warmed := warm_up_target(config, target, workload, prepared.data.sizes, progress)) is not None:
            run.update(warmup=warmed)
        config = calibrated(config, run, target, workload, mix, prepared.data.sizes, progress)
        first = next(iter(counts.values())) if counts else processes
        parts = PartRange(0, first, processes) if counts else None  # a cluster's agents share the parts
        spec = process_spec(config, prepared, target, first, parts)
        progress.message(describe_load(config, workload, mix))
        if target.workload is not None:  # the app: a read of its request file, on a session
            probe = app_probe(target.host, target.port, load_workload(target.workload))
        elif config.target == "http":
            probe = http_probe(target.host, target.port, workload, prepared.data.sizes)
        else:
            probe = direct_probe(config.url, workload, prepared.data.sizes)
        with (
            noting_interrupts() as interrupted,
            _generator(config, spec, processes, groups, cluster) as fleet,
        ):
            actions = (
                FaultActions(target.service, server)
                if cluster is None
                else _agent_actions(config, cluster, fleet.origin, db_agent, target.service)
            )
            injector = FaultInjector(faults, spec.levels(), fleet.origin, actions, probe)
            service = target.service
            observer.start(
                spec.levels(),
                fleet.origin,
                lambda: fleet.pids,
                (lambda: service.pid) if service else None,
                target.stats or getattr(service, "stats", None),  # the user's app has no /stats
            )
            try:
                with injector, watch_app(target, fleet) as app_watch:
                    stopped_because, stop = run_plan(
                        config,
                        fleet,
                        run,
                        observer,
                        progress,
                        interrupted,
                        fault_levels,
                        watch.lost if watch is not None else None,
                    )
            except DatabaseLost as exc:  # keep the levels before it; the struck one is flagged
                lost = exc
                fleet.stop()
            except GeneratorFailed as exc:  # a generator process died: keep what finished before it
                failure = exc
                fleet.stop()
            except KeyboardInterrupt:
                status, stopped_because = "interrupted", "interrupted by the user (Ctrl-C)"
                progress.message("interrupted: stopping the load and saving the finished levels")
                fleet.stop()
            try:
                final = fleet.finish()
            except KeyboardInterrupt:
                status, stopped_because = "interrupted", "interrupted by the user (Ctrl-C)"
                final = None
            except GeneratorFailed as exc:
                failure, final = failure or exc, None
            finally:
                run_flags, timeseries = observer.stop()
        if interrupted:  # also when the KeyboardInterrupt itself was lost (run/interrupts.py)
            status, stopped_because = "interrupted", "interrupted by the user (Ctrl-C)"
        elif lost is not None:
            status, stopped_because = "database lost", str(lost)
            progress.message(stopped_because)
        elif app_watch is not None and app_watch.exited:  # the fleet stopped because the app did
            failure, status = None, "app exited"
            stopped_because = f"level {len(run.result.levels) + 1}: {app_watch.words}"
            progress.message(stopped_because)
        elif failure is not None:
            status, stopped_because = "generator failed", str(failure)
            if fleet.struck is not None:  # a lost load agent: its level neither passed nor failed
                run.update(incomplete_level=fleet.struck)
        run.flag(*run_flags)
        if cluster is not None:
            run.flag(*_lost_agent_flags(cluster, run.result.to_json()["levels"]))
        if faults:
            with run.editing() as document:  # the faults' records go into the struck levels' rows too
                lines = add_faults(document, injector)
            for line in lines:
                progress.message(f"fault {line}")
        if final is not None:
            if final["errors"]:
                run.flag("generator errors: " + "; ".join(final["errors"]))
            if final["late_start"] > 0.05:
                run.flag(f"the generator started {final['late_start']:.2f} s late")
            if config.plan.is_spike and "per_second" in final:
                run.update(spike=spike_figures(final, config.pass_mark))
    # The service's totals and the relay's figures went into their descriptions as each stopped.
    run.update(service=target.description)
    if config.app is not None:
        run.update(app=app_section(run.result.to_json().get("app"), fleet.acknowledged, app_watch))
    if target.transport is not None:
        run.update(transport=target.transport)
    # After the service has stopped: no request still in its hands can change the data meanwhile.
    agent_failed = None
    if check and lost is None:  # a lost server has no data left to check
        where = f" on {agent_words(seeder)}" if seeder is not None else ""
        progress.message(
            f"checking the {fleet.acknowledged.count:,} acknowledged writes and the invariants{where}"
        )
        with run.editing() as document:  # a check that cannot read the database flags the run
            if seeder is not None:
                section, agent_failed = integrity_on_agent(
                    cluster, seeder, config, prepared, fleet.acknowledged, baseline, document
                )
            else:
                section = integrity_section(
                    config.url, workload, prepared.data, fleet.acknowledged, baseline, engine_info, document
                )
        run.update(integrity=section)
        progress.message(integrity_summary(section))
    result = run.finish(status, stopped_because, stop if status == "complete" else None)
    # The reports are built from the files just written, as `dbladder report` would rebuild them.
    write_bundle(result, config.out_dir, beside_samples(timeseries, result["levels"]))
    if failure is not None and status == "generator failed":
        raise GeneratorFailed(f"{failure}; the levels finished before it are in {run.path}")
    if status == "database lost":
        raise ServerLost(f"{stopped_because}; the levels finished before it are in {run.path}")
    if status == "app exited":
        raise AppExited(f"{stopped_because}; the levels finished before it are in {run.path}")
    if agent_failed is not None:
        raise AgentDataFailed(f"{agent_failed}; the finished levels are in {run.path}")
    return result


def _server_agent(config: RunConfig, cluster: Any) -> tuple[Any, dict[str, Any] | None]:
    """The db agent that stops the server for the run's faults, and the server's record (None,
    None: no cluster, or no such fault); FaultRefused in one line when no agent may."""
    if cluster is None or not config.faults:
        return None, None
    from .cluster_faults import server_agent

    return server_agent(cluster, parse_faults(config.faults), config.db_url)


def _agent_actions(
    config: RunConfig, cluster: Any, origin: float, db_agent: Any, service: Any
) -> FaultActions:
    """A cluster run's faults: on the app agent's service (or this machine's), on the db agent's server."""
    from .cluster_faults import AgentFaultActions

    return AgentFaultActions(
        cluster, origin, config.db_url, service_agent(config, cluster), db_agent, service
    )


def _lost_agent_flags(cluster: Any, levels: list[dict[str, Any]]) -> list[str]:
    """A flag per db or app agent lost during the run, from the first level it was not measured in."""
    flags = []
    for name, cause in cluster.lost.items():
        missed = [
            row["index"] + 1 for row in levels if row.get("hosts", {}).get(name, {}).get("measured") is False
        ]
        since = f" from level {missed[0]} on" if missed else ""
        flags.append(f"agent {name} was lost ({cause}): its host's figures are not measured{since}")
    return flags


def _machine_lines(cluster: Any, counts: dict[str, int]) -> list[str]:
    """A line per agent of the run: its role, machine and clock offset."""
    lines = []
    for agent in cluster.agents:
        offset = cluster.offsets.get(agent.name)
        if offset is None:
            continue
        what = f"{counts[agent.name]} generator process(es)" if agent.name in counts else "host samples"
        lines.append(
            f"{agent.role} agent {agent.name} on {agent.machine['host']} ({agent.machine['cores']} cores): "
            f"{what}, clock offset {offset.offset * 1000:+.3f} ms +- {offset.bound * 1000:.3f} ms"
        )
    return lines
