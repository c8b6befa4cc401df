"""Putting a process in its role's place: its memory cgroup and its CPUs, before it runs anything,
so that every process it forks later (PostgreSQL's backends, the service's workers) is born there.

    subprocess.Popen(command, preexec_fn=confiner(limits, group))   # in the child, before exec
    confine_self(limits, group)                                     # a process placing itself

CPUs are set with sched_setaffinity, which children inherit and which needs no privilege; memory
by joining the cgroup (writing the PID to its cgroup.procs), which children inherit as well.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path

from .cgroups import MemoryCgroup
from .placement import RoleLimits


def confine(cpus: tuple[int, ...] | None, procs: str | None) -> None:
    """Move this process into the cgroup whose `cgroup.procs` is `procs`, and onto `cpus`."""
    if procs is not None:
        Path(procs).write_text(str(os.getpid()))
    if cpus is not None:
        os.sched_setaffinity(0, cpus)


def confine_self(limits: RoleLimits, group: MemoryCgroup | None = None) -> None:
    """Place the calling process (and so every child it starts after) on its role's CPUs and cap."""
    confine(limits.cpus, str(group.procs) if group is not None else None)


def confiner(limits: RoleLimits, group: MemoryCgroup | None = None) -> Callable[[], None] | None:
    """A `preexec_fn` that places a subprocess before it execs, or None when there is nothing to do."""
    if limits.cpus is None and group is None:
        return None
    return functools.partial(confine, limits.cpus, str(group.procs) if group is not None else None)


def cpus_of(pid: int) -> tuple[int, ...]:
    """The CPUs a process may run on, as the kernel lists them (Cpus_allowed_list in /proc/PID/status)."""
    return tuple(sorted(os.sched_getaffinity(pid)))
