"""What a run ran on, recorded once per run, and whether the machine was idle before it started.

`environment(data_path, engine_info)` returns (JSON-ready):

    cpu_model            from /proc/cpuinfo ("model name"), else platform.processor()
    cpu_cores            logical CPUs this process may run on (affinity); cpu_cores_physical
    cpu_quota            CPUs allowed by a cgroup CPU quota, None without one
    memory_total_bytes   the machine's memory; memory_limit_bytes: a cgroup limit below it, or None
    kernel os            platform.release(), platform.platform()
    data_path            as given; data_filesystem: {"type", "device", "mountpoint", "options"}
                         of the mount holding it (None without a path)
    python               version; python_implementation
    dbladder             its version; dependencies: {name: installed version or None} for every
                         requirement of dbladder (extras included)
    engine               the engine's settings (`dbladder engines`), as given

`idle_check(seconds)` watches the machine for a moment before a run and returns:

    seconds busy_pct usr_pct sys_pct iowait_pct steal_pct load1 threshold_pct
    idle                 busy_pct below threshold_pct
    busiest              up to 5 {"pid", "name", "cpu_pct"} of the processes busiest meanwhile
"""

from __future__ import annotations

import os
import platform
import re
import time
from importlib.metadata import PackageNotFoundError, requires, version
from pathlib import Path
from typing import Any

import psutil

from ..engines.base import EngineInfo
from ..errors import UsageError
from .host import HostReader, host_delta, read_host

IDLE_THRESHOLD_PCT = 10.0
"""The most CPU (% of all CPUs) other work may use before a run for the machine to count as idle."""


def environment(data_path: str | None, engine_info: EngineInfo | dict[str, Any] | None) -> dict[str, Any]:
    """The machine, Python, dbladder's dependencies and the engine's settings; keys in the module doc."""
    memory = psutil.virtual_memory()
    limit = _cgroup_memory_limit()
    return {
        "cpu_model": _cpu_model(),
        "cpu_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu_cores_physical": psutil.cpu_count(logical=False),
        "cpu_quota": _cgroup_cpu_quota(),
        "memory_total_bytes": memory.total,
        "memory_limit_bytes": limit if limit is not None and limit < memory.total else None,
        "kernel": platform.release(),
        "os": platform.platform(),
        "data_path": data_path,
        "data_filesystem": filesystem(data_path) if data_path else None,
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "dbladder": _version("dbladder"),
        "dependencies": dependency_versions(),
        "engine": engine_info.to_dict() if isinstance(engine_info, EngineInfo) else engine_info,
    }


def dependency_versions(package: str = "dbladder") -> dict[str, str | None]:
    """{requirement name: installed version, or None} for every requirement of the package."""
    try:
        requirements = requires(package) or []
    except PackageNotFoundError:  # run from a source tree that was never installed
        return {}
    names = []
    for requirement in requirements:
        # "granian[uvloop]<3,>=2.8" or 'pytest>=8; extra == "test"': the name is what comes first.
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
        if match:
            names.append(match.group(1))
    return {name: _version(name) for name in dict.fromkeys(names)}


def filesystem(path: str) -> dict[str, str] | None:
    """The mount holding `path` (or the nearest existing folder above it): type, device, options."""
    target = Path(path).resolve()
    while not target.exists() and target != target.parent:
        target = target.parent
    best = None
    for partition in psutil.disk_partitions(all=True):
        mountpoint = Path(partition.mountpoint)
        if (target == mountpoint or mountpoint in target.parents) and (
            best is None or len(partition.mountpoint) > len(best.mountpoint)
        ):
            best = partition
    if best is None:
        return None
    return {"type": best.fstype, "device": best.device, "mountpoint": best.mountpoint, "options": best.opts}


def data_size_bytes(path: str) -> int:
    """Bytes of a SQLite database: the file and its -wal and -shm companions, as they are now."""
    return sum(
        os.path.getsize(candidate)
        for candidate in (path, path + "-wal", path + "-shm")
        if os.path.exists(candidate)
    )


def seconds_setting(variable: str, default: float, low: float, high: float) -> float:
    """Seconds from the environment variable `variable` (from `low` to `high`), else `default`;
    UsageError naming the variable for a bad value. For the lengths of a run's own measurements
    (the idle check, the disk's sync probe), which a suite of many short runs shortens."""
    setting = os.environ.get(variable)
    if setting is None:
        return default
    try:
        seconds = float(setting)
    except ValueError:
        seconds = -1.0
    if not low <= seconds <= high:
        raise UsageError(f"{variable} must be seconds from {low:g} to {high:g}, not {setting!r}")
    return seconds


def idle_check(
    seconds: float = 2.0,
    *,
    threshold_pct: float = IDLE_THRESHOLD_PCT,
    host_reader: HostReader = read_host,
) -> dict[str, Any]:
    """Watch the machine for `seconds`; whether it was idle enough to start a run (keys in the module doc)."""
    processes = _process_cpu()
    before = host_reader()
    time.sleep(seconds)
    after = host_reader()
    busiest = _busiest(processes, _process_cpu(), seconds)
    sample = host_delta(before, after)
    return {
        "seconds": seconds,
        "busy_pct": sample.busy,
        "usr_pct": sample.usr,
        "sys_pct": sample.sys,
        "iowait_pct": sample.iowait,
        "steal_pct": sample.steal,
        "load1": after.load1,
        "threshold_pct": threshold_pct,
        "idle": sample.busy < threshold_pct,
        "busiest": busiest,
    }


def _process_cpu() -> dict[tuple[int, float], tuple[str, float]]:
    found = {}
    for process in psutil.process_iter(["name", "create_time", "cpu_times"]):
        times = process.info["cpu_times"]
        if times is not None:
            found[(process.pid, process.info["create_time"])] = (
                process.info["name"] or "?",
                times.user + times.system,
            )
    return found


def _busiest(
    before: dict[tuple[int, float], tuple[str, float]],
    after: dict[tuple[int, float], tuple[str, float]],
    seconds: float,
) -> list[dict[str, Any]]:
    used = []
    for key, (name, cpu) in after.items():
        if key in before and key[0] != os.getpid():
            spent = cpu - before[key][1]
            if spent > 0:
                used.append((100.0 * spent / seconds, key[0], name))
    used.sort(reverse=True)
    return [{"pid": pid, "name": name, "cpu_pct": pct} for pct, pid, name in used[:5]]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cgroup_cpu_quota() -> float | None:
    """CPUs allowed by a cgroup quota (v2 cpu.max, v1 cfs_quota_us / cfs_period_us); None if none."""
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota_us = int(Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").read_text())
        period_us = int(Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota_us / period_us if quota_us > 0 else None


def _cgroup_memory_limit() -> int | None:
    for candidate in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(candidate).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            return int(text)
    return None


def _version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None
