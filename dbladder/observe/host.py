"""The whole machine: CPU time by kind, load average, memory and disk writes.

A `HostReading` is the machine's cumulative counters at one instant (CPU seconds by kind since
boot, as /proc/stat counts them; bytes and operations written to disk since boot); the
difference of two readings is what happened between them (`host_delta`). The reader is
injectable, so a test can feed readings with CPU steal in them.

How /proc/stat's kinds are folded: usr = user + nice (guest time is already inside user),
sys = system + irq + softirq, then iowait, idle and steal as they are. The five add up to 100 %.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import psutil

CPU_KINDS = ("usr", "sys", "iowait", "idle", "steal")


@dataclass(frozen=True)
class HostReading:
    """Cumulative counters of the machine at one instant."""

    cpu_seconds: dict[str, float]  # by CPU_KINDS, summed over every CPU, since boot
    load1: float
    memory_used: int  # bytes
    memory_available: int  # bytes
    disk_write_bytes: int  # since boot, every disk (as psutil sums them)
    disk_write_ops: int


@dataclass(frozen=True)
class HostSample:
    """What the machine did between two readings: CPU shares in % of all CPUs, disk writes as counts."""

    usr: float
    sys: float
    iowait: float
    idle: float
    steal: float
    load1: float  # at the end of the interval
    memory_used: int  # bytes, at the end of the interval
    memory_available: int
    disk_write_bytes: int  # written during the interval
    disk_write_ops: int

    @property
    def busy(self) -> float:
        """CPU in use, % of all CPUs: everything but idle and iowait (steal counts: it is not ours)."""
        return 100.0 - self.idle - self.iowait


HostReader = Callable[[], HostReading]


def read_host() -> HostReading:
    """The machine's counters now: /proc/stat (through psutil), the load average, memory, disks."""
    times = psutil.cpu_times()
    memory = psutil.virtual_memory()
    disks = psutil.disk_io_counters(perdisk=False)
    return HostReading(
        cpu_seconds=cpu_kinds(times),
        load1=os.getloadavg()[0],
        memory_used=memory.total - memory.available,
        memory_available=memory.available,
        disk_write_bytes=disks.write_bytes if disks is not None else 0,
        disk_write_ops=disks.write_count if disks is not None else 0,
    )


def cpu_kinds(times: object) -> dict[str, float]:
    """psutil.cpu_times() folded into CPU_KINDS (fields a kernel lacks count as 0)."""

    def field(name: str) -> float:
        return float(getattr(times, name, 0.0))

    return {
        "usr": field("user") + field("nice"),
        "sys": field("system") + field("irq") + field("softirq"),
        "iowait": field("iowait"),
        "idle": field("idle"),
        "steal": field("steal"),
    }


def host_delta(before: HostReading, after: HostReading) -> HostSample:
    """What happened between two readings; CPU kinds as % of the CPU time that passed."""
    spent = {kind: max(after.cpu_seconds[kind] - before.cpu_seconds[kind], 0.0) for kind in CPU_KINDS}
    total = sum(spent.values())
    shares = {kind: 100.0 * spent[kind] / total if total > 0 else 0.0 for kind in CPU_KINDS}
    if total <= 0:
        shares["idle"] = 100.0  # no tick passed: nothing ran that the kernel counted
    return HostSample(
        usr=shares["usr"],
        sys=shares["sys"],
        iowait=shares["iowait"],
        idle=shares["idle"],
        steal=shares["steal"],
        load1=after.load1,
        memory_used=after.memory_used,
        memory_available=after.memory_available,
        # Counters can wrap or a disk can vanish: a negative difference is no data, not a negative.
        disk_write_bytes=max(after.disk_write_bytes - before.disk_write_bytes, 0),
        disk_write_ops=max(after.disk_write_ops - before.disk_write_ops, 0),
    )
