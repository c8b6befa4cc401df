"""Figures as the reports show them: number formats, and the optional machine figures of a level.

Machine figures (host CPU by kind, CPU per process group, the service's time breakdown) exist only
when a run sampled the machine. Every accessor here returns None (or an empty dict) when a figure
is missing, so a reporter says "not measured" instead of showing a 0 it never measured.

The sampler's level summary is typed (`dbladder.result.machine`: the flat and the nested
spellings read there); this module picks each figure the reports show out of it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# The number formats live in the shared leaf, which the plans' words use too; named here for the reports.
from ..formats import ms as ms
from ..formats import number as number
from ..formats import pct as pct
from ..formats import plain as plain
from ..formats import rate as rate
from ..result.level import Level
from ..result.machine import time_breakdown

HOST_KINDS = ("usr", "sys", "iowait", "idle", "steal")
"""Host CPU kinds, % of all CPUs; they add up to 100."""
GROUPS = ("service", "database", "generator")
"""Process groups the sampler measures, each in % of one CPU."""


def host_cpu(level: Level) -> dict[str, float] | None:
    """The host's CPU shares by HOST_KINDS for a level (% of all CPUs), or None when not measured."""
    if level.machine is None:
        return None
    shares = level.machine.host_cpu.shares()
    if all(value is None for value in shares.values()):
        return None
    return {kind: value for kind, value in shares.items() if value is not None}


def host_steal(level: Level) -> float | None:
    """The host's CPU taken by other tenants during a level (% of all CPUs), or None when not measured."""
    return level.machine.host_cpu.steal if level.machine is not None else None


def group_cpu(level: Level, group: str) -> float | None:
    """A process group's CPU during a level, % of one CPU (two busy processes read 200), or None."""
    return level.machine.group(group).cpu_pct if level.machine is not None else None


def group_cpu_per_1k(level: Level, group: str) -> float | None:
    """A group's CPU milliseconds per 1,000 requests answered in a level, or None."""
    return level.machine.group(group).cpu_ms_per_1k if level.machine is not None else None


def generator_cpu(level: Level) -> float | None:
    """The load generator's CPU, % of one CPU: the sampler's group figure, else the generator's own."""
    sampled = group_cpu(level, "generator")
    if sampled is not None:
        return sampled
    share = number(level.generator.cpu_share) if level.generator is not None else None
    return None if share is None else 100 * share


BREAKDOWN_PARTS = ("pool_wait", "database", "other")
"""Where a request's time inside the service went: waiting for a connection, holding one, the rest."""


def breakdown(level: Level) -> dict[str, float]:
    """The service's mean time per request in each of BREAKDOWN_PARTS during a level, ms.

    The sampler may keep the breakdown apart (`service_breakdown`) or merged into the level's
    machine summary; parts without a figure are left out.
    """
    return time_breakdown(level.service_breakdown, level.machine).parts()


def load_average(level: Level) -> float | None:
    """The host's 1-minute load average during a level (mean of the samples), or None."""
    return level.machine.load_average if level.machine is not None else None


def heading(key: str) -> str:
    """A column heading from a field name: `pool_wait_ms` -> "pool wait ms"."""
    return re.sub(r"_+", " ", key).strip()


def any_level(levels: Iterable[Level], predicate: Any) -> bool:
    """Whether `predicate(level)` gives a figure for any level."""
    return any(predicate(level) not in (None, {}) for level in levels)
