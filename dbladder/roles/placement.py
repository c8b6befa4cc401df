"""Which CPUs and how much memory each role of a run may use: `--cpus ROLE=LIST`, `--memory ROLE=SIZE`.

    placement = parse_placement(cpus=["generator=0", "database=1"], memory=["database=512M"])
    placement.of("database")      # RoleLimits(cpus=(1,), memory=536870912)

The roles are the three parts of a run on one machine: the load `generator`, the `service` (the
web app, its SQLite writer, the latency relay) and the `database` server. A CPU list is written as
taskset writes it (`0`, `1`, `0-3`, `0,2`); a size takes a unit (`512M`, `1G`, binary multiples as
the kernel's cgroup files count them). Every problem is found at once and reported on one line that
names the option, before anything starts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from .caches import drop_caches_problem
from .cgroups import memory_problem
from .errors import BadPlacement

T = TypeVar("T")

ROLES = ("generator", "service", "database")

UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
# Below this neither a database server (PostgreSQL's default 128 MB of shared buffers, InnoDB's
# buffer pool) nor a Python worker with its imports starts and stays up: a cap under it would
# measure an out-of-memory kill, not an engine.
MEMORY_FLOOR = 128 << 20

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT])(?:i?B)?\s*$", re.IGNORECASE)
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


@dataclass(frozen=True)
class RoleLimits:
    """One role's share of the machine: its CPUs (None: any) and its memory cap in bytes (None: none)."""

    cpus: tuple[int, ...] | None = None
    memory: int | None = None

    @property
    def limited(self) -> bool:
        return self.cpus is not None or self.memory is not None

    def option(self, role: str) -> str:
        """The option that gave the role these limits, as a refusal names it: `--cpus service`,
        `--memory service`, or both."""
        given = [
            name for name, value in (("--cpus", self.cpus), ("--memory", self.memory)) if value is not None
        ]
        return f"{' and '.join(given) or '--cpus'} {role}"

    def describe(self) -> dict[str, object]:
        """As a result carries it: the CPUs as taskset writes them and the cap in bytes (None: unset)."""
        return {"cpus": format_cpus(self.cpus) if self.cpus is not None else None, "memory": self.memory}


@dataclass(frozen=True)
class Placement:
    """Every role's limits, and whether the page cache is dropped before each run. Frozen and
    picklable, so a config carries it into every process it starts."""

    generator: RoleLimits = RoleLimits()
    service: RoleLimits = RoleLimits()
    database: RoleLimits = RoleLimits()
    drop_caches: bool = False

    def of(self, role: str) -> RoleLimits:
        if role not in ROLES:
            raise ValueError(f"no role {role!r}")
        limits: RoleLimits = getattr(self, role)
        return limits

    @property
    def limited(self) -> bool:
        return any(self.of(role).limited for role in ROLES)

    @property
    def needs_cgroups(self) -> bool:
        return any(self.of(role).memory is not None for role in ROLES)

    def describe(self) -> dict[str, object]:
        """Each role's CPUs and memory cap, and drop_caches, as JSON-ready data."""
        return {**{role: self.of(role).describe() for role in ROLES}, "drop_caches": self.drop_caches}


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """`0`, `0-3`, `0,2`, `0-1,3` -> sorted CPU numbers; ValueError with the reason when it is not one."""
    cpus: set[int] = set()
    for part in text.split(","):
        match = _RANGE.match(part.strip())
        if match is None:
            raise ValueError(f"{part.strip() or text!r} is not a CPU number or range (write 0, 0-3 or 0,2)")
        low = int(match.group(1))
        high = int(match.group(2)) if match.group(2) is not None else low
        if high < low:
            raise ValueError(f"{part.strip()} runs backwards (write {high}-{low})")
        cpus.update(range(low, high + 1))
    return tuple(sorted(cpus))


def format_cpus(cpus: Iterable[int]) -> str:
    """CPU numbers as taskset writes them: (0, 1, 2, 5) -> '0-2,5'."""
    ordered = sorted(set(cpus))
    runs: list[str] = []
    start = previous = None
    for cpu in [*ordered, None]:
        if cpu is not None and previous is not None and cpu == previous + 1:
            previous = cpu
            continue
        if start is not None:
            runs.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = cpu
    return ",".join(runs)


def parse_size(text: str) -> int:
    """`512M`, `1G`, `1.5G`, `512MiB` -> bytes (binary multiples); ValueError for a size without a unit."""
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(f"{text.strip()!r} is not a size with a unit (write 512M or 1G)")
    return int(float(match.group(1)) * UNITS[match.group(2).upper()])


def format_size(size: int) -> str:
    """Bytes as the options write them: 536870912 -> '512M', 1610612736 -> '1.5G'."""
    for unit in ("T", "G", "M", "K"):
        if size >= UNITS[unit]:
            value = size / UNITS[unit]
            return f"{value:.10g}{unit}" if value == int(value) else f"{value:.3g}{unit}"
    return f"{size}B"


def _machine_cpus() -> tuple[set[int], set[int]]:
    """(every CPU this machine has online, the CPUs this process may run on)."""
    allowed = os.sched_getaffinity(0)
    try:
        online = set(parse_cpu_list(Path("/sys/devices/system/cpu/online").read_text().strip()))
    except (OSError, ValueError):
        online = set(range(os.cpu_count() or 1))
    return online, allowed


def _split(option: str, text: str, problems: list[str]) -> tuple[str, str] | None:
    role, equals, value = text.partition("=")
    role = role.strip().lower()
    if not equals or not value.strip():
        problems.append(f"{option} {text}: write ROLE=VALUE, ROLE one of {', '.join(ROLES)}")
        return None
    if role not in ROLES:
        problems.append(f"{option} {text}: no role {role!r}; the roles are {', '.join(ROLES)}")
        return None
    return role, value.strip()


def _cpus_problem(text: str, cpus: tuple[int, ...], online: set[int], allowed: set[int]) -> str | None:
    missing = [cpu for cpu in cpus if cpu not in online]
    if missing:
        return (
            f"--cpus {text}: CPU {format_cpus(missing)} does not exist "
            f"(this machine has CPUs {format_cpus(online)})"
        )
    refused = [cpu for cpu in cpus if cpu not in allowed]
    if refused:
        return (
            f"--cpus {text}: CPU {format_cpus(refused)} is not allowed to this process "
            f"(it may run on {format_cpus(allowed)})"
        )
    return None


def _memory_floor_problem(text: str, size: int) -> str | None:
    if size < MEMORY_FLOOR:
        return (
            f"--memory {text}: below {format_size(MEMORY_FLOOR)} a server or a worker cannot start; "
            f"give at least {format_size(MEMORY_FLOOR)}"
        )
    return None


def _by_role(
    option: str,
    texts: Sequence[str],
    parse: Callable[[str], T],
    twice: str,
    check: Callable[[str, T], str | None],
    problems: list[str],
) -> dict[str, T]:
    """Each ROLE=VALUE of an option, its value parsed and checked, once per role (`twice` says why a
    second one is refused); every problem goes to `problems`, and the role is left out."""
    found: dict[str, T] = {}
    for text in texts:
        split = _split(option, text, problems)
        if split is None:
            continue
        role, value = split
        try:
            parsed = parse(value)
        except ValueError as exc:
            problems.append(f"{option} {text}: {exc}")
            continue
        if role in found:
            problems.append(f"{option} {text}: {role} {twice}")
            continue
        problem = check(text, parsed)
        if problem is not None:
            problems.append(problem)
            continue
        found[role] = parsed
    return found


def parse_placement(
    cpus: Sequence[str] = (), memory: Sequence[str] = (), drop_caches: bool = False
) -> Placement:
    """The placement the options ask for, checked against this machine and this process; every
    problem at once, on one line, as BadPlacement (exit 2)."""
    problems: list[str] = []
    online, allowed = _machine_cpus()
    chosen_cpus = _by_role(
        "--cpus",
        cpus,
        parse_cpu_list,
        "is given CPUs twice; give it one list (0,2)",
        lambda text, numbers: _cpus_problem(text, numbers, online, allowed),
        problems,
    )
    caps = _by_role("--memory", memory, parse_size, "is given a cap twice", _memory_floor_problem, problems)
    if caps:
        problems.extend(filter(None, [memory_problem()]))
    if drop_caches:
        problems.extend(filter(None, [drop_caches_problem()]))
    if problems:
        raise BadPlacement("; ".join(problems))
    limits = {role: RoleLimits(chosen_cpus.get(role), caps.get(role)) for role in ROLES}
    return Placement(**limits, drop_caches=drop_caches)
