"""Each role of a run on its own CPUs and under its own memory cap, on one machine.

`--cpus ROLE=LIST` and `--memory ROLE=SIZE` become a `Placement` (`placement.py`), checked at
once against the machine; `cgroups.py` makes dbladder's own memory cgroups and removes them (and
those a killed run left); `confine.py` puts a process in its role's place before it execs, so its
children are born there; `caches.py` drops the page cache (`--drop-caches`).
"""

from __future__ import annotations

from .caches import drop_caches_problem, drop_page_cache
from .cgroups import MemoryCgroup, leftovers, memory_hierarchy, memory_problem, remove_leftovers
from .confine import confine_self, confiner, cpus_of, place_tree, placed_here
from .errors import BadPlacement, CgroupUnavailable, UnmanagedRole
from .placement import (
    MEMORY_FLOOR,
    ROLES,
    Placement,
    RoleLimits,
    format_cpus,
    format_size,
    parse_cpu_list,
    parse_placement,
    parse_size,
)

__all__ = [
    "MEMORY_FLOOR",
    "ROLES",
    "BadPlacement",
    "CgroupUnavailable",
    "MemoryCgroup",
    "Placement",
    "RoleLimits",
    "UnmanagedRole",
    "confine_self",
    "confiner",
    "cpus_of",
    "drop_caches_problem",
    "drop_page_cache",
    "format_cpus",
    "format_size",
    "leftovers",
    "memory_hierarchy",
    "memory_problem",
    "parse_cpu_list",
    "parse_placement",
    "parse_size",
    "place_tree",
    "placed_here",
    "remove_leftovers",
]
