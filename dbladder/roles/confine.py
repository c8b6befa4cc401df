"""Putting a process in its role's place: its memory cgroup and its CPUs, before it runs anything,
so that every process it forks later (PostgreSQL's backends, the service's workers) is born there.

    subprocess.Popen(command, preexec_fn=confiner(limits, group))   # in the child, before exec
    confine_self(limits, group)                                     # a process placing itself

CPUs are set with sched_setaffinity, which children inherit and which needs no privilege; memory
by joining the cgroup (writing the PID to its cgroup.procs), which children inherit as well.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
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


@contextlib.contextmanager
def placed_here(limits: RoleLimits, role: str) -> Iterator[MemoryCgroup | None]:
    """This process (and every child it starts in the block) on the role's CPUs and, with a cap, in
    a memory cgroup of its own made for the block; on the way out it leaves the group, which is
    then removed (also after Ctrl-C), and gets its CPUs back."""
    before = os.sched_getaffinity(0)
    group = MemoryCgroup.create(role, limits.memory) if limits.memory is not None else None
    try:
        confine_self(limits, group)
        yield group
    finally:
        if group is not None:
            group.leave()
            group.remove()
        os.sched_setaffinity(0, before)


def confiner(limits: RoleLimits, group: MemoryCgroup | None = None) -> Callable[[], None] | None:
    """A `preexec_fn` that places a subprocess before it execs, or None when there is nothing to do."""
    if limits.cpus is None and group is None:
        return None
    return functools.partial(confine, limits.cpus, str(group.procs) if group is not None else None)


def threads_of(pid: int) -> list[int]:
    """The thread ids of a process (its own pid among them); empty when it has gone."""
    try:
        return [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def place_tree(pid: int, limits: RoleLimits, group: MemoryCgroup | None = None) -> list[int]:
    """Put a running process, every thread of it and every process below it in the role's place:
    for a process dbladder starts through code it does not own (the service's server, the
    generator's multiprocessing children), placed from outside right after the start. CPUs are
    per thread, so each thread is set; a thread or child started meanwhile inherits from its
    parent, so the tree is walked until a walk finds nothing new. The processes placed."""
    placed: set[int] = set()
    done: set[int] = set()
    while True:
        found = [pid, *_descendants(pid)]
        fresh = [(p, t) for p in found for t in threads_of(p) if t not in done]
        if not fresh:
            return sorted(placed)
        for process, thread in fresh:
            try:
                if group is not None and process not in placed:
                    group.procs.write_text(str(process))
                if limits.cpus is not None:
                    os.sched_setaffinity(thread, limits.cpus)
            except (ProcessLookupError, FileNotFoundError):
                pass  # it ended meanwhile
            except OSError as exc:
                if exc.errno != 3:  # ESRCH: gone
                    raise
            placed.add(process)
            done.add(thread)


def _descendants(pid: int) -> list[int]:
    children: list[int] = []
    queue = [pid]
    while queue:
        parent = queue.pop()
        for tid in threads_of(parent):
            try:
                text = Path(f"/proc/{parent}/task/{tid}/children").read_text()
            except OSError:
                continue
            for child in text.split():
                children.append(int(child))
                queue.append(int(child))
    return children


def cpus_of(pid: int) -> tuple[int, ...]:
    """The CPUs a process may run on, as the kernel lists them (Cpus_allowed_list in /proc/PID/status)."""
    return tuple(sorted(os.sched_getaffinity(pid)))
