"""The round's diagnosis step: what the database was doing during each level, and why a level failed.

`LevelDiagnosis` runs beside the machine sampler (observation.py starts and stops it): before the
load, on SQLite with writes, it measures the disk's fsync rate once (`observe.disk`); as the load
starts it opens the engine's activity probe (`engines.activity`) in a thread of its own; as each
level is judged it adds to the level's row

    activity    the probe's figures over the measured window (and `activity_seconds`, one set
                per second of it), as `ActivitySampler.window` gives them
    diagnosis   for a failed level, or a passing one that came close: `result.diagnosis.diagnose`
                of the level's seconds and its resources, as {kind, line, resource, evidence};
                a stall with what stood out in its seconds among the machine sampler's readings
                (`machine_moments`), the probe's seconds and the generator's lag (`row_moments`)

The resources come from the same level's figures: the machine sampler's CPU per role against what
each may use (`role_cores`: its --cpus, the service's event loops, else the host's cores), with
the time its threads waited for a CPU, and iowait; the service's pool wait share and the single
SQLite writer's queue share (its /stats); the probe's lock-wait share; the writes among the
answers of the window beside the fsync rate; the generator's schedule lag and dropped requests.
A probe that cannot connect costs the run nothing but that
figure: the warning goes in the run's flags.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..engine_registry import writer_processes
from ..engines.activity import ActivitySampler, create_probe
from ..errors import DbladderError
from ..observe.disk import fsync_rate, probe_seconds
from ..observe.loops import LOOP_ROLES, STATES
from ..observe.sampler import Sample
from ..result.diagnosis import Diagnosis, ProcessShare, Resources, RoleCpu, Users, diagnose
from ..result.passmark import PassMark
from ..result.resources import findings
from ..result.seconds import diagnosis_seconds
from ..result.stall_events import Moment
from ..roles.placement import Placement
from ..urls import DatabaseURL, parse_url
from .config import RunConfig

CLOSE_TO_PASS_MARK = 0.8
"""A passing level whose p95 reached this share of the pass mark's came close: it is diagnosed too."""


class LevelDiagnosis:
    """The activity probe and the fsync rate of one run, and each level's diagnosis (module doc)."""

    def __init__(
        self,
        database: str | DatabaseURL,
        pass_mark: PassMark,
        writes: Sequence[str] = (),
        data_folder: str | None = None,
        generator_cpu: bool = True,
        cores: dict[str, float] | None = None,
    ):
        self.database = parse_url(database) if isinstance(database, str) else database
        self.pass_mark = pass_mark
        self.writes = tuple(writes)
        self.data_folder = data_folder
        self.generator_cpu = generator_cpu
        self.cores = dict(cores or {})
        self._previous: dict[str, Any] | None = None  # the closed model's phase before
        self.fsync: dict[str, Any] | None = None
        self.warnings: list[str] = []
        self._sampler: ActivitySampler | None = None
        self._origin = 0.0

    def measure_disk(self) -> dict[str, Any] | None:
        """The disk's fsync rate in the data's folder, once, before the load (SQLite with writes):
        about a second of syncs, which would compete with the first level if taken during it."""
        if self.writes and self.data_folder is not None and self.fsync is None:
            self.fsync = fsync_rate(self.data_folder, probe_seconds()).to_dict()
        return self.fsync

    def start(self, origin: float) -> None:
        """Start the activity probe; `origin` is the run's time 0 on time.perf_counter()."""
        self._origin = origin
        sampler = ActivitySampler(create_probe(self.database))
        try:
            sampler.start()
        except (DbladderError, OSError, TimeoutError) as exc:
            self.warnings.append(f"the {self.database.kind.label} activity probe could not start: {exc}")
            return
        self._sampler = sampler

    def stop(self) -> None:
        if self._sampler is not None:
            self._sampler.stop()
            self.warnings += [f"activity probe: {warning}" for warning in self._sampler.warnings]

    def level(self, row: dict[str, Any], machine: Sequence[Moment] = ()) -> None:
        """Add the level's activity figures and, when it failed or came close, its diagnosis;
        `machine` holds the machine sampler's readings over the level (`machine_moments`)."""
        start = self._origin + row["start_s"] + row["warmup_s"]
        end = self._origin + row["start_s"] + row["hold_s"]
        if self._sampler is not None:
            # The reading that closes the window comes up to one interval after its end.
            deadline = time.monotonic() + self._sampler.interval + 0.5
            while time.monotonic() < deadline and not any(r.t >= end for r in self._sampler.readings()):
                time.sleep(0.02)
            row["activity"] = self._sampler.window(start, end).figures
            row["activity_seconds"] = [window.figures for window in self._sampler.windows(start, end)]
        resources = self.resources(row)
        # Every level's resources against their bounds: a search doubts a failure above a level
        # that passed with the resource that failed it well under its bound (plans/search.py).
        row["resource_shares"] = {name: round(share, 3) for name, share in findings(resources)}
        if needs_diagnosis(row, self.pass_mark):
            if not self.generator_cpu:  # a busy-waiting clock: the generator's CPU says nothing
                machine = [replace(m, figures=_without(m.figures, "generator CPU")) for m in machine]
            found = level_diagnosis(row, self.pass_mark, resources, self._previous, machine)
            row["diagnosis"] = found.to_dict()
        if row.get("users") is not None:
            self._previous = row

    def resources(self, row: dict[str, Any]) -> Resources:
        """What the level's resources did, from its own figures."""
        return level_resources(row, self.writes, self.fsync, self.generator_cpu, self.cores)


def role_cores(
    placement: Placement, service_loops: int | None = None, host: int | None = None
) -> dict[str, float]:
    """The most CPU each role may use, in cores: its --cpus when it has them; the service, when
    dbladder runs it, no more than its event loops (`service_loops`: its workers and the single
    SQLite writer, each one process with one loop, so one core each at most); else the host's."""
    host = host or os.cpu_count() or 1
    cores = {}
    for role in ("generator", "service", "database"):
        cpus = placement.of(role).cpus
        cores[role] = float(min(len(cpus), host) if cpus is not None else host)
    if service_loops is not None:
        cores["service"] = min(cores["service"], float(service_loops))
    return cores


def service_loops(config: RunConfig) -> int | None:
    """The event loops of the service dbladder starts for a run (its workers and any writer process
    the engine's settings ask for); None when it starts none (direct mode, or a service already running)."""
    if config.target != "http" or config.service_url is not None:
        return None
    return config.workers + writer_processes(config.engine_settings)


def needs_diagnosis(row: dict[str, Any], pass_mark: PassMark) -> bool:
    """A failed level, or a passing one whose p95 came within CLOSE_TO_PASS_MARK of the mark."""
    return not row["passed"] or row["p95_ms"] >= CLOSE_TO_PASS_MARK * pass_mark.p95_ms


def level_diagnosis(
    row: dict[str, Any],
    pass_mark: PassMark,
    resources: Resources,
    previous: dict[str, Any] | None = None,
    machine: Sequence[Moment] = (),
) -> Diagnosis:
    """The level's diagnosis from its seconds; a level that failed though every second of it passed
    on its own (its failures at the timeout counted in the level's p95) cannot be told. A closed
    model's level (its row has "users") is set against `previous`, the row of the phase before.
    A stall is set beside `machine` (`machine_moments`) and the row's own per-second figures."""
    seconds = diagnosis_seconds(row.get("seconds") or [])
    users = None
    if row.get("users") is not None:
        users = Users(row["users"])
        if previous is not None and previous.get("users") is not None:
            users = Users(row["users"], previous["users"], previous["achieved_rps"], previous["p95_ms"])
    found = diagnose(
        seconds,
        row["offered_rps"],
        pass_mark.p95_ms,
        resources,
        max_fail_share=pass_mark.max_fail_pct / 100,
        users=users,
        moments=[*machine, *row_moments(row)],
        failures=row.get("failures") or {},
    )
    if found.kind == "passed" and not row["passed"]:
        reasons = "; ".join(row["reasons"])
        return Diagnosis(
            "cannot tell", f"cannot tell: every second passed on its own, yet the level did not ({reasons})"
        )
    if found.kind == "passed":  # a passing level that came close
        return Diagnosis(
            "passed",
            f"passed, close to the mark: p95 {row['p95_ms']:,.1f} ms of {pass_mark.p95_ms:g} ms, "
            f"every second under it",
            evidence={"p95_ms": row["p95_ms"]},
        )
    return found


def level_resources(
    row: dict[str, Any],
    writes: Sequence[str] = (),
    fsync: dict[str, Any] | None = None,
    generator_cpu: bool = True,
    cores: dict[str, float] | None = None,
) -> Resources:
    """A level's `Resources` from its row: machine, service breakdown, activity, generator.
    `generator_cpu` off leaves the generator's CPU out: a clock that busy-waits before each due
    time (MonotonicClock) keeps it near a full core at any rate. `cores` holds what a role may
    use at most (`role_cores`); a role not in it may use the host's."""
    machine = row.get("machine") or {}
    host = float(os.cpu_count() or 1)
    cores = cores or {}
    cpu: dict[str, RoleCpu] = {}
    for role in ("service", "database"):
        pct = machine.get(f"{role}_cpu_pct")
        if pct is not None and machine.get(f"{role}_processes"):
            waited = (machine.get(f"{role}_cpu_wait_pct") or 0.0) / 100
            processes = process_shares(
                machine.get(f"{role}_by_process"),
                LOOP_ROLES if role == "service" else (),
                machine.get(f"{role}_loops"),
            )
            cpu[role] = RoleCpu(pct / 100, min(cores.get(role, host), host), waited, processes)
    pct = machine.get("generator_cpu_pct")
    if generator_cpu and pct is not None and machine.get("generator_processes"):
        # Each generator process is one event loop: one core's worth at most.
        allowed = min(float(machine["generator_processes"]), cores.get("generator", host), host)
        waited = (machine.get("generator_cpu_wait_pct") or 0.0) / 100
        processes = process_shares(machine.get("generator_by_process"), None)
        cpu["generator"] = RoleCpu(pct / 100, allowed, waited, processes)
    if machine.get("host_busy") is not None:
        cpu["host"] = RoleCpu(machine["host_busy"] / 100 * host, host)
    iowait = machine.get("host_iowait")
    activity = row.get("activity") or {}
    breakdown = row.get("service_breakdown") or {}
    commits = None
    if writes and fsync is not None and row.get("operations"):
        # Commits in the window: the successful answers that arrived in it (achieved_rps), times
        # the writes' share of the level's successful answers. Counting the writes due in the
        # level instead would add, at saturation, those answered long after the window ended.
        ok = {
            name: operation["requests"] * (1 - operation["fail_pct"] / 100)
            for name, operation in row["operations"].items()
        }
        if (everything := sum(ok.values())) > 0:
            commits = row["achieved_rps"] * sum(ok[name] for name in writes if name in ok) / everything
    events = {name: share for name, share in activity.items() if name.startswith("share.event.Lock:")}
    top_event = max(events.items(), key=lambda item: item[1], default=None)
    return Resources(
        cpu=cpu,
        pool_wait_share=breakdown.get("pool_wait_share"),
        writer_queue_share=breakdown.get("writer_queue_share"),
        writer_queue_mean_ms=breakdown.get("writer_queue_mean_ms"),
        commits_per_second=commits,
        fsyncs_per_second=fsync["per_second"] if fsync is not None else None,
        lock_wait_share=activity.get("lock_wait_share"),
        lock_event=(top_event[0].removeprefix("share.event."), top_event[1]) if top_event else None,
        iowait=iowait / 100 if iowait is not None else None,
        schedule_lag_p99_ms=row.get("lag_p99_ms"),
        dropped=row.get("dropped", 0),
        sent_p95_ms=(row.get("sent") or {}).get("p95_ms"),
    )


MIN_LOOP_READINGS = 50
"""Readings of a loop's state (observe/loops.py) below which its shares are left unread: half a
second's worth, a share known to within about 7 %."""


def process_shares(
    rows: Sequence[dict[str, Any]] | None,
    loops: Sequence[str] | None,
    states: Sequence[dict[str, Any]] | None = None,
) -> tuple[ProcessShare, ...]:
    """A group's processes over the level (`machine["<group>_by_process"]`) as the diagnosis reads
    them; `loops` names the roles that run one event loop each (None: every process does, as the
    generator's); `states` are the loops' sampled states (`machine["<group>_loops"]`), by pid.
    Empty for a level from before they were sampled."""
    sampled = {
        entry["pid"]: {state: entry[state] for state in STATES}
        for entry in states or ()
        if entry.get("readings", 0) >= MIN_LOOP_READINGS
    }
    return tuple(
        ProcessShare(
            row["role"],
            row["cpu_pct"] / 100,
            row["cpu_wait_pct"] / 100,
            row["busiest_thread_pct"] / 100 if row.get("busiest_thread_pct") is not None else None,
            loops is None or row["role"] in loops,
            (row.get("busiest_thread_wait_pct") or 0.0) / 100,
            sampled.get(row["pid"]),
        )
        for row in rows or ()
    )


def machine_moments(samples: Sequence[Sample], start: float, end: float) -> list[Moment]:
    """The machine sampler's readings that overlap a level's measured window [start, end) (on
    time.perf_counter()), as moments of that window: CPU steal and iowait as shares of the host's
    CPU, and each role's CPU in cores, used or runnable and waiting for one (a role with no
    process in a reading has none)."""
    moments = []
    for sample in samples:
        if sample.t <= start or sample.start >= end:
            continue
        figures = {"steal": sample.host.steal / 100, "iowait": sample.host.iowait / 100}
        for role, group in sample.groups.items():
            if group.processes and sample.interval > 0:
                figures[f"{role} CPU"] = group.cpu_pct / 100 + group.cpu_wait_seconds / sample.interval
        moments.append(Moment(sample.start - start, sample.t - start, figures))
    return moments


# the activity probe's figure -> the stall's name for it (result/stall_events.py)
ACTIVITY_MOMENTS = {
    "checkpoints": "checkpoints",
    "buffers_written_checkpoint": "buffers written by checkpoints",
    "lock_wait_share": "lock waits",
}


def row_moments(row: dict[str, Any]) -> list[Moment]:
    """A level's own per-second figures as moments: the activity probe's (`activity_seconds`) and
    the generator's largest schedule lag of each second."""
    moments = []
    for number, figures in enumerate(row.get("activity_seconds") or []):
        picked = {name: figures[key] for key, name in ACTIVITY_MOMENTS.items() if key in figures}
        if picked:
            moments.append(Moment(number, number + 1, picked))
    for number, second in enumerate(row.get("seconds") or []):
        if second.get("lag_max_ms") is not None:
            moments.append(Moment(number, number + 1, {"schedule lag ms": second["lag_max_ms"]}))
    return moments


def _without(figures: Mapping[str, float], name: str) -> dict[str, float]:
    return {key: value for key, value in figures.items() if key != name}
