"""Validity flags: short reasons why a level's or a run's figures may not mean what they seem.

A flag is one line of text, meant to be printed next to the level in every table and saved with
it; an empty list means nothing was found. Level flags:

    "steal 7.2 % > 5 %"                 the hypervisor took CPU from this machine ("Postgres vs MariaDB on
    two dedicated CPUs"'s shared
                                        droplet: steal from 6 % to 50 %, runs an hour apart not comparable)
    "generator fell behind: schedule lag p99 3.1 ms > 2 ms"
                                        requests left late: the service saw less than the offered rate;
                                        flagged only when the lag is also at least LAG_SHARE_OF_MARK
                                        (10 %) of the pass mark's p95 (2.3 ms against a 250 ms mark
                                        is noise: the level keeps its `lag_p99_ms` all the same)
    "generator CPU saturated: 97 % of a CPU >= 90 %"
                                        a generator process had no time to spare
    "sampled 60 % of the hold"          the sampler missed part of the level: its averages are thin
    "strace attached for 3 s: latency inflated"
                                        system calls were counted with strace during the level

Run flags:

    "machine busy before the run: 35 % CPU (postgres 20 %)"
    "dataset 2.1 GB larger than database memory 1 GB"
    "steal 7.2 % > 5 %"                 over the whole run
    "3 of 10 levels flagged"
    "database CPU not observed: ..."    the database's processes could not be found
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..engines.dialect import dialect_of
from ..errors import UnknownEngine
from ..histogram import Histogram

MAX_STEAL_PCT = 5.0
MAX_LAG_P99_MS = 2.0
LAG_SHARE_OF_MARK = 0.1
MAX_GENERATOR_CPU_SHARE = 0.9
MIN_COVERAGE = 0.9


def level_flags(
    level_summary: dict[str, Any],
    generator_level: dict[str, Any] | None,
    *,
    syscalls: dict[str, Any] | None = None,
    max_steal_pct: float = MAX_STEAL_PCT,
    max_lag_p99_ms: float = MAX_LAG_P99_MS,
    max_generator_cpu_share: float | None = MAX_GENERATOR_CPU_SHARE,
    min_coverage: float = MIN_COVERAGE,
    pass_p95_ms: float | None = None,
) -> list[str]:
    """Flags of one level, from its `summarise()` dict and its merged generator level snapshot.

    The generator's CPU is judged from its own `cpu_share` (the busiest process) when the level
    snapshot has it, else from the sampler's generator group. Pass `max_generator_cpu_share=None`
    with a generator that busy-waits for due times (a precise clock): its CPU then reads near
    100 % at any rate, and only the schedule lag tells. `syscalls` is `count_syscalls()`'s result
    when it ran during this level. `pass_p95_ms`, the pass mark's p95: a schedule lag under
    LAG_SHARE_OF_MARK of it does not flag the level, whatever the generator's own limit says.
    """
    flags = []
    steal = level_summary.get("host_steal")
    if steal is not None and steal > max_steal_pct:
        flags.append(f"steal {steal:.1f} % > {max_steal_pct:g} %")
    if generator_level is not None and "schedule_lag" in generator_level:
        lag = Histogram.from_dict(generator_level["schedule_lag"])
        lag_p99_ms = lag.percentile(99) / 1000
        in_proportion = pass_p95_ms is None or lag_p99_ms >= LAG_SHARE_OF_MARK * pass_p95_ms
        if lag.count and lag_p99_ms > max_lag_p99_ms and in_proportion:
            flags.append(
                f"generator fell behind: schedule lag p99 {lag_p99_ms:.1f} ms > {max_lag_p99_ms:g} ms"
            )
    if max_generator_cpu_share is not None:
        share = _generator_cpu_share(level_summary, generator_level)
        if share is not None and share >= max_generator_cpu_share:
            bound = 100 * max_generator_cpu_share
            flags.append(f"generator CPU saturated: {100 * share:.0f} % of a CPU >= {bound:.0f} %")
    coverage = level_summary.get("coverage")
    if coverage is not None and coverage < min_coverage:
        flags.append(f"sampled {100 * coverage:.0f} % of the hold")
    if syscalls is not None and syscalls.get("tool") == "strace":
        flags.append(f"strace attached for {syscalls['seconds']:g} s: latency inflated")
    return flags


def _generator_cpu_share(summary: dict[str, Any], generator_level: dict[str, Any] | None) -> float | None:
    if generator_level is not None and generator_level.get("wall_seconds"):
        return float(generator_level["cpu_share"])
    pct, processes = summary.get("generator_cpu_pct"), summary.get("generator_processes")
    if pct is None or not processes:
        return None
    return pct / 100 / processes


def run_flags(
    idle: dict[str, Any] | None = None,
    *,
    run_summary: dict[str, Any] | None = None,
    dataset_bytes: int | None = None,
    database_memory_bytes: int | None = None,
    levels: Sequence[Sequence[str]] = (),
    database_warning: str | None = None,
    max_steal_pct: float = MAX_STEAL_PCT,
) -> list[str]:
    """Flags of a whole run.

    `idle` is `idle_check()`'s result; `run_summary` a `summarise()` over the whole run; the
    dataset and the database's memory in bytes where known (`database_memory()`); `levels` the
    flags of each level, to count the flagged ones; `database_warning` the warning of
    `database_processes()`.
    """
    flags = []
    if idle is not None and not idle["idle"]:
        busiest = ", ".join(f"{p['name']} {p['cpu_pct']:.0f} %" for p in idle.get("busiest", [])[:3])
        busy = f"machine busy before the run: {idle['busy_pct']:.0f} % CPU"
        flags.append(busy + (f" ({busiest})" if busiest else ""))
    too_big = (
        dataset_bytes is not None
        and database_memory_bytes is not None
        and dataset_bytes > database_memory_bytes
    )
    if too_big:
        flags.append(
            f"dataset {format_bytes(dataset_bytes or 0)} larger than database memory "
            f"{format_bytes(database_memory_bytes or 0)}"
        )
    if run_summary is not None:
        steal = run_summary.get("host_steal")
        if steal is not None and steal > max_steal_pct:
            flags.append(f"steal {steal:.1f} % > {max_steal_pct:g} %")
    flagged = sum(1 for level in levels if level)
    if flagged:
        flags.append(f"{flagged} of {len(levels)} levels flagged")
    if database_warning:
        flags.append(f"database CPU not observed: {database_warning}")
    return flags


def database_memory(engine_info: dict[str, Any], machine_memory_bytes: int) -> tuple[int | None, str]:
    """(bytes, basis) of the memory that can hold the database's pages, where it is known.

    MariaDB (InnoDB) caches pages in its buffer pool only; PostgreSQL (shared_buffers in front of
    the page cache) and SQLite read through the operating system's page cache, so for them it is
    the machine's memory, shared with everything else that runs on it.
    """
    engine = engine_info.get("engine")
    try:
        dialect = dialect_of(str(engine))
    except UnknownEngine:
        return None, f"unknown engine {engine!r}"
    return dialect.page_cache(engine_info.get("settings", {}), machine_memory_bytes)


def format_bytes(count: float) -> str:
    """A byte count as people read it: 2.1 GB, 512 MB, 3 kB (powers of 1,000)."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= size:
            return f"{count / size:.3g} {unit}"
    return f"{count:.0f} B"
