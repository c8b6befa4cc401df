"""A window of samples (a level's hold) as one flat, JSON-ready dict, with per-request figures.

`summarise(samples, start, end, requests)` averages the samples over [start, end) (perf_counter
seconds). A sample that straddles an edge counts by its overlap: rates and percentages are
weighted by the seconds it shares with the window, counts (CPU seconds, context switches, bytes)
are prorated by that share. Keys, every one always present (None where a figure does not exist,
e.g. per request with no requests, or a group that had no process, as SQLite's database):

    seconds                  seconds of the window covered by samples
    coverage                 seconds / (end - start); below about 0.9 the sampler missed part of it
    samples                  how many samples overlap the window
    requests                 as given: the requests answered in the window
    host_usr host_sys host_iowait host_idle host_steal
                             % of all CPUs (they add up to 100); see host.py for the folding
    host_busy                100 - idle - iowait
    load1                    1-minute load average, mean of the samples
    memory_used_bytes        mean
    memory_available_bytes   mean; memory_available_min_bytes: the lowest
    disk_write_bytes_per_s disk_write_ops_per_s
                             whole machine, every disk
    groups                   the group names, in the sampler's order

and for every group G (e.g. generator, service, database):

    G_cpu_pct                % of one CPU, summed over the group's processes (200 = two CPUs)
    G_cpu_ms_per_1k          CPU milliseconds per 1,000 requests
    G_cpu_wait_pct           % of one CPU its threads were runnable but waited for one (the run
                             queue): with G_cpu_pct, the CPU the group wanted
    G_vcsw_per_s G_ivcsw_per_s
                             voluntary / involuntary context switches per second
    G_vcsw_per_request G_ivcsw_per_request
                             the same per request: sleeping on a lock or on I/O shows in vcsw
    G_read_bytes_per_s G_write_bytes_per_s
                             storage I/O of the group's processes
    G_processes              most processes the group had in one sample
    G_by_process             each process's own share (up to BY_PROCESS, those that wanted the
                             most CPU, in the order they started): {"pid", "role" (the service's
                             server, worker, writer...; else its name), "cpu_pct",
                             "cpu_wait_pct", "busiest_thread_pct": % of the window its busiest
                             thread ran or waited to run (a thread at 100 % is at its limit: one
                             core), "busiest_thread_wait_pct": of which it waited}; empty without
                             processes

So `service_cpu_ms_per_1k`, `database_cpu_ms_per_1k`, `generator_cpu_pct`, `service_cpu_pct`,
`database_cpu_pct` and `service_vcsw_per_request` are there when the groups have those names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .sampler import Sample

GROUP_KEYS = (
    "cpu_pct",
    "cpu_ms_per_1k",
    "cpu_wait_pct",
    "vcsw_per_s",
    "ivcsw_per_s",
    "vcsw_per_request",
    "ivcsw_per_request",
    "read_bytes_per_s",
    "write_bytes_per_s",
    "processes",
    "by_process",
)
"""Per-group keys of a summary, each prefixed with the group name and "_"."""
BY_PROCESS = 8
"""Processes a group's `by_process` keeps at most: a PostgreSQL backend per connection would
otherwise put a hundred in every level."""
HOST_KEYS = (
    "host_usr",
    "host_sys",
    "host_iowait",
    "host_idle",
    "host_steal",
    "host_busy",
    "load1",
    "memory_used_bytes",
    "memory_available_bytes",
    "memory_available_min_bytes",
    "disk_write_bytes_per_s",
    "disk_write_ops_per_s",
)
"""Host keys of a summary."""


def summarise(samples: Sequence[Sample], start: float, end: float, requests: int) -> dict[str, Any]:
    """The samples' averages over [start, end) and per-request figures; keys in the module docstring."""
    if not end > start:
        raise ValueError(f"a window needs end > start, not [{start}, {end})")
    overlapping = []
    for sample in samples:
        shared = min(sample.t, end) - max(sample.start, start)
        if shared > 0 and sample.interval > 0:
            overlapping.append((sample, shared))
    seconds = sum(shared for _, shared in overlapping)
    groups = list(dict.fromkeys(name for sample in samples for name in sample.groups))
    summary: dict[str, Any] = {
        "seconds": seconds,
        "coverage": seconds / (end - start),
        "samples": len(overlapping),
        "requests": requests,
        "groups": groups,
    }
    summary.update(_host(overlapping, seconds))
    for group in groups:
        summary.update(_group(group, overlapping, seconds, requests))
    return summary


def _mean(values: list[tuple[float, float]], seconds: float) -> float | None:
    """The mean of (value, weight in seconds) pairs; None without any."""
    return sum(value * weight for value, weight in values) / seconds if values and seconds > 0 else None


def _host(overlapping: list[tuple[Sample, float]], seconds: float) -> dict[str, Any]:
    def mean(name: str) -> float | None:
        return _mean([(getattr(sample.host, name), shared) for sample, shared in overlapping], seconds)

    def rate(name: str) -> float | None:
        if not overlapping or seconds <= 0:
            return None
        # Prorate each interval's count by its share of the window, then divide by the window.
        counted = sum(getattr(sample.host, name) * shared / sample.interval for sample, shared in overlapping)
        return counted / seconds

    usr, sys, iowait, idle, steal = (mean(kind) for kind in ("usr", "sys", "iowait", "idle", "steal"))
    return {
        "host_usr": usr,
        "host_sys": sys,
        "host_iowait": iowait,
        "host_idle": idle,
        "host_steal": steal,
        "host_busy": None if idle is None or iowait is None else 100.0 - idle - iowait,
        "load1": mean("load1"),
        "memory_used_bytes": mean("memory_used"),
        "memory_available_bytes": mean("memory_available"),
        "memory_available_min_bytes": min(
            (sample.host.memory_available for sample, _ in overlapping), default=None
        ),
        "disk_write_bytes_per_s": rate("disk_write_bytes"),
        "disk_write_ops_per_s": rate("disk_write_ops"),
    }


def _group(
    group: str, overlapping: list[tuple[Sample, float]], seconds: float, requests: int
) -> dict[str, Any]:
    present = [
        (sample.groups[group], sample, shared) for sample, shared in overlapping if group in sample.groups
    ]
    most = max((figures.processes for figures, _, _ in present), default=0)
    keys = [f"{group}_{key}" for key in GROUP_KEYS]
    if not most or seconds <= 0:
        result: dict[str, Any] = dict.fromkeys(keys)
        result[f"{group}_processes"] = 0
        result[f"{group}_by_process"] = []
        return result

    def counted(name: str) -> float:
        return sum(getattr(figures, name) * shared / sample.interval for figures, sample, shared in present)

    cpu_seconds = counted("cpu_seconds")
    vcsw, ivcsw = counted("vcsw"), counted("ivcsw")
    per_request = requests > 0
    return {
        f"{group}_cpu_pct": 100.0 * cpu_seconds / seconds,
        f"{group}_cpu_ms_per_1k": cpu_seconds * 1_000_000 / requests if per_request else None,
        f"{group}_cpu_wait_pct": 100.0 * counted("cpu_wait_seconds") / seconds,
        f"{group}_vcsw_per_s": vcsw / seconds,
        f"{group}_ivcsw_per_s": ivcsw / seconds,
        f"{group}_vcsw_per_request": vcsw / requests if per_request else None,
        f"{group}_ivcsw_per_request": ivcsw / requests if per_request else None,
        f"{group}_read_bytes_per_s": counted("read_bytes") / seconds,
        f"{group}_write_bytes_per_s": counted("write_bytes") / seconds,
        f"{group}_processes": most,
        f"{group}_by_process": _by_process(present, seconds),
    }


def _by_process(present: list[tuple[Any, Sample, float]], seconds: float) -> list[dict[str, Any]]:
    """Each process's CPU over the window, prorated as the group's is (`by_process` in the doc)."""
    totals: dict[int, list[Any]] = {}
    for figures, sample, shared in present:
        weight = shared / sample.interval
        for process in figures.by_process:
            entry = totals.setdefault(process.pid, [process.role, 0.0, 0.0, 0.0, 0.0])
            entry[1] += process.cpu_seconds * weight
            entry[2] += process.wait_seconds * weight
            entry[3] += process.busiest_thread_seconds * weight
            entry[4] += process.busiest_thread_wait_seconds * weight
    wanted = sorted(totals, key=lambda pid: -(totals[pid][1] + totals[pid][2]))[:BY_PROCESS]
    return [
        {
            "pid": pid,
            "role": totals[pid][0],
            "cpu_pct": 100.0 * totals[pid][1] / seconds,
            "cpu_wait_pct": 100.0 * totals[pid][2] / seconds,
            "busiest_thread_pct": 100.0 * totals[pid][3] / seconds,
            "busiest_thread_wait_pct": 100.0 * totals[pid][4] / seconds,
        }
        for pid in sorted(wanted)
    ]
