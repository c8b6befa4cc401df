"""Each role of a round in its place (`--cpus`, `--memory`, `--drop-caches`, dbladder.roles): the
memory cgroups of the generator and the service, made for the round and removed after it (also
after Ctrl-C), and the hooks that put a process there. The database's place is its managed
server's (dbladder.servers), which owns its cgroup."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TypeVar

from ..roles import MemoryCgroup, Placement, confine_self, confiner, remove_leftovers
from ..servers import placement_refusal

T = TypeVar("T")


@dataclass
class RoleGroups:
    """The round's placement and the cgroups made for its generator and service."""

    placement: Placement
    groups: dict[str, MemoryCgroup] = field(default_factory=dict)

    def hook(self, role: str) -> Callable[[], None] | None:
        """A preexec hook that places a process dbladder starts for `role` (None: nothing to do)."""
        return confiner(self.placement.of(role), self.groups.get(role))

    @contextlib.contextmanager
    def started_in(self, role: str, context: AbstractContextManager[T]) -> Iterator[T]:
        """Enter `context` (the generator's Fleet, which starts its processes) with this thread on
        the role's CPUs and this process in its cgroup, so every process it starts is born there;
        then back to this process's own place, and the block runs inside `context`."""
        with contextlib.ExitStack() as stack:
            limits, group = self.placement.of(role), self.groups.get(role)
            before = os.sched_getaffinity(0)
            try:
                confine_self(limits, group)
                entered = stack.enter_context(context)
            finally:
                if group is not None:
                    group.leave()
                os.sched_setaffinity(0, before)
            yield entered


@contextlib.contextmanager
def role_groups(placement: Placement) -> Iterator[RoleGroups]:
    """The generator's and the service's cgroups for the block (those a killed round left removed
    first); each removed after it, once its processes have ended."""
    made = RoleGroups(placement)
    try:
        if placement.needs_cgroups:
            remove_leftovers()
        for role in ("generator", "service"):
            cap = placement.of(role).memory
            if cap is not None:
                made.groups[role] = MemoryCgroup.create(role, cap)
        yield made
    finally:
        for group in made.groups.values():
            group.remove()


def placement_problems(placement: Placement, db_url: str, target: str, service_url: str | None) -> list[str]:
    """What the round cannot place: a database dbladder does not start, a service it does not run."""
    problems = [p for p in [placement_refusal(db_url, placement.database)] if p is not None]
    if placement.service.limited:
        option = placement.service.option("service")
        if target == "direct":
            problems.append(f"{option}: direct mode runs no service; give the generator its place")
        elif service_url is not None:
            problems.append(f"{option}: the service at {service_url} is not one dbladder started")
    return problems
