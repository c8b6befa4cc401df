"""What the machine did at each level: host and per-process CPU, waits, and where each request's time went.

The orchestrator's use, in order:

    idle = idle_check()                                      # before the run (environment.py)
    env = environment(data_path, engine_info)                # once per run
    database = database_processes(engine_info)               # database.py; .warning when unreliable
    sampler = Sampler({"generator": ..., "service": session(service.pid), "database": database})
    sampler.start()
    ... each level: /stats before and after its hold, and its generator snapshot ...
    samples = sampler.stop()
    row["machine"] = summarise(samples, hold_start, hold_end, requests)     # summary.py
    row["service_breakdown"] = service_breakdown(stats_before, stats_after) # breakdown.py
    row["flags"] += level_flags(row["machine"], generator_level)            # flags.py
    run = run_flags(idle, run_summary=..., levels=[...], database_warning=database.warning)

(`dbladder/report/figures.py` reads a level's "machine" and "service_breakdown" blocks.)

Times are time.perf_counter() seconds, the clock of the generator's schedule. Library code here
never prints: warnings are returned (Sampler.warnings, DatabaseProcesses.warning, flags).
"""

from .breakdown import NoTiming, service_breakdown
from .database import DatabaseProcesses, database_processes
from .environment import data_size_bytes, environment, idle_check
from .flags import database_memory, format_bytes, level_flags, run_flags
from .host import HostReading, HostSample, read_host
from .processes import GroupSample, Resolver, fixed, nothing, process_tree, session
from .sampler import Sample, Sampler
from .summary import summarise
from .syscalls import count_syscalls, per_request, syscall_tool, syscalls_unavailable

__all__ = [
    "DatabaseProcesses",
    "GroupSample",
    "HostReading",
    "HostSample",
    "NoTiming",
    "Resolver",
    "Sample",
    "Sampler",
    "count_syscalls",
    "data_size_bytes",
    "database_memory",
    "database_processes",
    "environment",
    "fixed",
    "format_bytes",
    "idle_check",
    "level_flags",
    "nothing",
    "per_request",
    "process_tree",
    "read_host",
    "run_flags",
    "service_breakdown",
    "session",
    "summarise",
    "syscall_tool",
    "syscalls_unavailable",
]
