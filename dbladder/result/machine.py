"""A level's machine figures, typed: the sampler's summary of its hold and the service's time.

`Machine` is `levels[].machine`, the sampler's flat summary (`dbladder.observe.summary.summarise`:
`host_usr`, `service_cpu_pct`, None where a figure does not exist); `ServiceBreakdown` is
`levels[].service_breakdown` (`dbladder.observe.breakdown`). Each declares every key its writer
writes (a process's figures and a loop's shares stay plain mappings, as the diagnosis reads them
from the level's row while the run is on; levels.csv keeps them in the JSON). A nested spelling
(`host.usr`, `groups.service.cpu_pct`) is read too: this module is the one place that knows where
each figure lives, and a figure that is missing or not a number reads as None, so a reporter says
"not measured" instead of showing a 0 it never measured.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ..formats import number
from .part import Part


@dataclass(frozen=True)
class HostCpu:
    """The host's CPU by kind, % of all CPUs (they add up to 100); None where not measured."""

    usr: float | None = None
    sys: float | None = None
    iowait: float | None = None
    idle: float | None = None
    steal: float | None = None

    def shares(self) -> dict[str, float | None]:
        """Each kind's share, in the order above."""
        return {field.name: getattr(self, field.name) for field in fields(self)}


@dataclass(frozen=True)
class GroupCpu:
    """A process group's CPU: % of one CPU (two busy processes read 200), and milliseconds per
    1,000 requests answered; None where not measured."""

    cpu_pct: float | None = None
    cpu_ms_per_1k: float | None = None


@dataclass(frozen=True, kw_only=True)
class Machine(Part):
    """The machine during a level's hold (`levels[].machine`, docs/result-schema.md): the window's
    coverage, the host, each process group (`generator`, `service`, `database`: CPU, the run queue,
    context switches, storage I/O, its processes), the service's event loops, and in a cluster run
    where a group's CPU was measured (`<group>_cpu_from`)."""

    seconds: float | None = None
    coverage: float | None = None
    samples: int | None = None
    requests: int | None = None
    groups: Sequence[str] | Mapping[str, Any] | None = None
    """The process groups sampled, by name; in the nested spelling, each one's figures."""
    host_usr: float | None = None
    host_sys: float | None = None
    host_iowait: float | None = None
    host_idle: float | None = None
    host_steal: float | None = None
    host_busy: float | None = None
    load1: float | None = None
    memory_used_bytes: float | None = None
    memory_available_bytes: float | None = None
    memory_available_min_bytes: float | None = None
    disk_write_bytes_per_s: float | None = None
    disk_write_ops_per_s: float | None = None
    host: Mapping[str, Any] | None = None  # the nested spelling of the host's figures
    generator_cpu_pct: float | None = None
    generator_cpu_ms_per_1k: float | None = None
    generator_cpu_wait_pct: float | None = None
    generator_vcsw_per_s: float | None = None
    generator_ivcsw_per_s: float | None = None
    generator_vcsw_per_request: float | None = None
    generator_ivcsw_per_request: float | None = None
    generator_read_bytes_per_s: float | None = None
    generator_write_bytes_per_s: float | None = None
    generator_processes: int | None = None
    generator_by_process: tuple[Mapping[str, Any], ...] | None = None
    service_cpu_pct: float | None = None
    service_cpu_ms_per_1k: float | None = None
    service_cpu_wait_pct: float | None = None
    service_vcsw_per_s: float | None = None
    service_ivcsw_per_s: float | None = None
    service_vcsw_per_request: float | None = None
    service_ivcsw_per_request: float | None = None
    service_read_bytes_per_s: float | None = None
    service_write_bytes_per_s: float | None = None
    service_processes: int | None = None
    service_by_process: tuple[Mapping[str, Any], ...] | None = None
    database_cpu_pct: float | None = None
    database_cpu_ms_per_1k: float | None = None
    database_cpu_wait_pct: float | None = None
    database_vcsw_per_s: float | None = None
    database_ivcsw_per_s: float | None = None
    database_vcsw_per_request: float | None = None
    database_ivcsw_per_request: float | None = None
    database_read_bytes_per_s: float | None = None
    database_write_bytes_per_s: float | None = None
    database_processes: int | None = None
    database_by_process: tuple[Mapping[str, Any], ...] | None = None
    service_loops: tuple[Mapping[str, Any], ...] | None = None
    service_cpu_from: str | None = None
    database_cpu_from: str | None = None
    # The service's breakdown, where the sampler merged it into the machine's figures.
    pool_wait_mean_ms: float | None = None
    database_mean_ms: float | None = None
    other_mean_ms: float | None = None

    @property
    def host_cpu(self) -> HostCpu:
        """The host's CPU by kind: the flat figure, else the nested one."""
        nested = self._nested_host
        return HostCpu(
            usr=_first(self.host_usr, nested.get("usr")),
            sys=_first(self.host_sys, nested.get("sys")),
            iowait=_first(self.host_iowait, nested.get("iowait")),
            idle=_first(self.host_idle, nested.get("idle")),
            steal=_first(self.host_steal, nested.get("steal")),
        )

    @property
    def load_average(self) -> float | None:
        """The host's 1-minute load average (the mean of the samples)."""
        return _first(self.load1, self._nested_host.get("load1"))

    def group(self, name: str) -> GroupCpu:
        """A process group's CPU (`generator`, `service`, `database`): the flat figures, else the
        nested ones."""
        flat = {
            "generator": (self.generator_cpu_pct, self.generator_cpu_ms_per_1k),
            "service": (self.service_cpu_pct, self.service_cpu_ms_per_1k),
            "database": (self.database_cpu_pct, self.database_cpu_ms_per_1k),
        }.get(name, (None, None))
        groups = self.groups if isinstance(self.groups, Mapping) else {}
        nested = groups.get(name)
        nested = nested if isinstance(nested, Mapping) else {}
        return GroupCpu(
            cpu_pct=_first(flat[0], nested.get("cpu_pct")),
            cpu_ms_per_1k=_first(flat[1], nested.get("cpu_ms_per_1k")),
        )

    @property
    def _nested_host(self) -> Mapping[str, Any]:
        return self.host if isinstance(self.host, Mapping) else {}


@dataclass(frozen=True, kw_only=True)
class ServiceBreakdown(Part):
    """Where the service's request time went during a level (`levels[].service_breakdown`,
    `dbladder.observe.breakdown`): each part's p50, p95 and mean ms per request (waiting for a
    pooled connection, holding one, the rest) and share of the time, the sleeps on SQLite's file
    lock, and with a single SQLite writer its queue (an older spelling, `<part>_ms` for the mean, is
    read too)."""

    timed_requests: int | None = None
    pool_wait_p50_ms: float | None = None
    pool_wait_p95_ms: float | None = None
    pool_wait_mean_ms: float | None = None
    database_p50_ms: float | None = None
    database_p95_ms: float | None = None
    database_mean_ms: float | None = None
    other_p50_ms: float | None = None
    other_p95_ms: float | None = None
    other_mean_ms: float | None = None
    service_mean_ms: float | None = None
    pool_wait_share: float | None = None
    database_share: float | None = None
    other_share: float | None = None
    busy_waits: int | None = None
    writer_writes: int | None = None
    writer_queue_mean_ms: float | None = None
    writer_busy_mean_ms: float | None = None
    writer_queue_share: float | None = None
    pool_wait_ms: float | None = None
    database_ms: float | None = None
    other_ms: float | None = None


@dataclass(frozen=True)
class TimeBreakdown:
    """The service's mean time per request in each part, ms; None where not measured."""

    pool_wait: float | None = None
    database: float | None = None
    other: float | None = None

    def parts(self) -> dict[str, float]:
        """The parts measured, in the order above."""
        found = {field.name: getattr(self, field.name) for field in fields(self)}
        return {name: value for name, value in found.items() if value is not None}


def time_breakdown(kept: ServiceBreakdown | None, merged: Machine | None) -> TimeBreakdown:
    """The service's time per request by part during a level: from its breakdown as the sampler
    kept it apart (`_mean_ms`, else an older `_ms`), else as merged into the machine's figures."""
    return TimeBreakdown(
        pool_wait=_first(
            kept and kept.pool_wait_mean_ms, kept and kept.pool_wait_ms, merged and merged.pool_wait_mean_ms
        ),
        database=_first(
            kept and kept.database_mean_ms, kept and kept.database_ms, merged and merged.database_mean_ms
        ),
        other=_first(kept and kept.other_mean_ms, kept and kept.other_ms, merged and merged.other_mean_ms),
    )


def _first(*values: Any) -> float | None:
    """The first of `values` that is a number, as a float; None when none is."""
    for value in values:
        found = number(value)
        if found is not None:
            return found
    return None
