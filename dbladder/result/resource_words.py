"""What ran out in a saturated level, in words: the line for the resource named, each resource's
figure against its bound for a level where none reached it, and the figures of the evidence
(`resources.py` judges them; this module only says them)."""

from __future__ import annotations

from collections.abc import Sequence

from .resources import BLOCKED, CPU_AT_LIMIT, HOST, ROLES, ProcessShare, Resources, RoleCpu, loops_asleep


def evidence_of(name: str, resources: Resources) -> dict[str, float]:
    """The named resource's own figures, beside its ratio to the bound."""
    figures: dict[str, float | None] = {}
    if name.startswith("writer"):
        figures = {
            "writer_queue_share": resources.writer_queue_share,
            "writer_queue_mean_ms": resources.writer_queue_mean_ms,
            "commits_per_second": resources.commits_per_second,
            "fsyncs_per_second": resources.fsyncs_per_second,
        }
    elif name == "pool":
        figures = {"pool_wait_share": resources.pool_wait_share}
    elif name == "write lock":
        loops = [(label, p) for label, p in _numbered(resources.cpu["service"].processes) if p.states]
        figures = {f"{label}.sleep": (p.states or {}).get("sleep", 0.0) for label, p in loops}
    elif name == "lock waits":
        figures = {"lock_wait_share": resources.lock_wait_share}
        if resources.lock_event is not None:
            figures["lock_event_share"] = resources.lock_event[1]
    elif name == HOST:
        figures = {f"cpu_used.{role}": cpu.used for role, cpu in resources.cpu.items()}
        figures |= {f"cpu_waited.{role}": cpu.waited for role, cpu in resources.cpu.items() if role != "host"}
    elif name.split()[0] in ROLES:
        cpu = resources.cpu[name.split()[0]]
        figures = {"cpu_used": cpu.used, "cpu_waited": cpu.waited, "cpu_allowed": cpu.allowed}
        for label, process in _numbered(cpu.processes):
            figures[f"{label}.cpu_used"] = process.used
            if process.busiest is not None:
                figures[f"{label}.busiest_thread"] = process.busiest
            figures |= {f"{label}.{state}": share for state, share in (process.states or {}).items()}
    return {key: value for key, value in figures.items() if value is not None}


def finding_line(name: str, resources: Resources) -> str:
    """The named resource at its limit, in words with its figures."""
    role = name.split()[0]
    if name == HOST:
        return _machine_line(resources)
    if name == f"{role} loops":
        cpu = resources.cpu[role]
        held = _holders(cpu)
        by = f", held by {_listed(held)}" if held else ""
        return f"the {role}'s event loops at their limit{by}: {_each_loop(cpu)}"
    if role in ROLES and name != f"{role} CPU":  # one loop of the role at its limit
        cpu = resources.cpu[role]
        each = _each_loop(cpu) if any(p.states is not None for p in cpu.loops) else _each(cpu)
        return f"one {name} at its limit: the {role} at {_cores(cpu.used)} of its {_loops_of(cpu)}: {each}"
    if role in ROLES:
        cpu = resources.cpu[role]
        line = f"the {name} at its limit: {cpu.used:.2f} of {cpu.allowed:g} cores"
        loops = cpu.loops
        if loops and len(loops) >= cpu.allowed and cpu.used / cpu.allowed < CPU_AT_LIMIT:
            # Each loop at its limit though the cores were not all used: its threads waited.
            kind = loops[0].role
            line += f", every {kind}'s busiest thread running or waiting to run: {_each(cpu)}"
        elif cpu.waited >= 0.05:
            line += f", and {cpu.waited:.2f} more waiting for a CPU"
        return line
    disk = ""
    if resources.commits_per_second is not None and resources.fsyncs_per_second:
        disk = (
            f"; {resources.commits_per_second:,.0f} commits/s against an fsync rate of "
            f"{resources.fsyncs_per_second:,.0f}/s"
        )
    if name == "pool":
        return f"the pool: {resources.pool_wait_share:.0%} of a request's time waiting for a connection"
    if name == "writer queue":
        mean = resources.writer_queue_mean_ms
        each = f" ({mean:,.1f} ms a write)" if mean is not None else ""
        return (
            f"writes queued behind the single writer: {resources.writer_queue_share:.0%} "
            f"of a write's time{each}{disk}"
        )
    if name == "writer at the disk's fsync rate":
        return f"the single writer at the disk's fsync rate{disk}"
    if name == "write lock":
        shares = " and ".join(f"{share:.0%}" for share in loops_asleep(resources.cpu.get("service")) or [])
        return (
            f"the database's write lock: the service's loops asleep waiting for it (SQLite's busy "
            f"handler) {shares} of the time"
        )
    if name == "lock waits":
        line = f"lock waits: {resources.lock_wait_share:.0%} of the active sessions waiting for a lock"
        if resources.lock_event is not None:
            event, share = resources.lock_event
            line += f" (wait event {event}: {share:.0%})"
        return line
    return f"the disk: iowait {resources.iowait:.0%} of the host's CPU"


def ruled_out(ranked: Sequence[tuple[str, float]], resources: Resources) -> str:
    """Each measured resource's figure and the bound it stayed under, furthest toward it first:
    why none of them is the one that ran out."""
    if not ranked:
        return "no resource was measured"
    return "; ".join(f"{_under(name, resources)} ({ratio:.2f} of its bound)" for name, ratio in ranked)


def _under(name: str, resources: Resources) -> str:
    role = name.split()[0]
    if name == HOST:
        host = resources.cpu["host"]
        return f"the machine's CPUs {host.used:.2f} of {host.allowed:g} cores busy"
    if name == f"{role} loops":
        busiest = max(p.busy or 0.0 for p in resources.cpu[role].loops)
        return f"the {role}'s event loops busy {busiest:.0%} of the time at most"
    if role in ROLES and name != f"{role} CPU":
        cpu = resources.cpu[role]
        return f"one {name} at its limit beside idle ones ({_each(cpu)})"
    if role in ROLES:
        cpu = resources.cpu[role]
        text = f"{name} {cpu.used:.2f} of {cpu.allowed:g} cores"
        threads = [p for p in cpu.loops if p.busiest is not None]
        if threads:
            top = max(threads, key=lambda p: p.busiest or 0.0)
            share = top.busiest or 0.0
            text += f", its busiest {top.role}'s thread running or waiting {share:.0%} of the time"
        elif cpu.waited >= 0.05 and not cpu.processes:
            text += f" and {cpu.waited:.2f} waiting"
        return text
    if name == "pool":
        return f"pool: {resources.pool_wait_share:.0%} of a request's time waiting for a connection"
    if name == "writer queue":
        return f"writer queue: {resources.writer_queue_share:.0%} of a write's time"
    if name == "writer at the disk's fsync rate":
        return (
            f"writer: {resources.commits_per_second:,.0f} commits/s against the disk's "
            f"{resources.fsyncs_per_second:,.0f} fsyncs/s"
        )
    if name == "lock waits":
        return f"lock waits: {resources.lock_wait_share:.0%} of the active sessions"
    if name == "write lock":
        asleep = loops_asleep(resources.cpu.get("service")) or [0.0]
        return f"write lock: the service's loops asleep waiting for it {max(asleep):.0%} of the time at most"
    return f"disk: iowait {resources.iowait:.0%} of the host's CPU"


def _machine_line(resources: Resources) -> str:
    """The machine's CPUs at their limit, with each role's share of them and what else ran."""
    host = resources.cpu["host"]
    parts = [(role, cpu.used) for role, cpu in resources.cpu.items() if role != "host" and cpu.used >= 0.005]
    other = host.used - sum(used for _, used in parts)
    if other >= 0.005:
        parts.append(("other", other))
    shares = " + ".join(f"{role} {used:.2f}" for role, used in parts)
    line = f"the machine's CPUs at their limit: {host.used:.2f} of {host.allowed:g} cores busy"
    if shares:
        line += f": {shares}"
    waits = [
        (role, cpu.waited) for role, cpu in resources.cpu.items() if role != "host" and cpu.waited >= 0.05
    ]
    if waits:
        line += " (threads waiting for a CPU besides: " + ", ".join(f"{r} {w:.2f}" for r, w in waits) + ")"
    service = resources.cpu.get("service")
    loops = [p for p in (service.processes if service is not None else ()) if p.loop and p.states is not None]
    if loops:
        waited = " and ".join(f"{p.cpu_waiting:.0%}" for p in loops)
        line += f"; the service's event loops waited for a CPU {waited} of the time"
    return line


def _numbered(processes: Sequence[ProcessShare]) -> list[tuple[str, ProcessShare]]:
    """Each process with its label: its role, numbered when the role has several ("worker 1")."""
    counts: dict[str, int] = {}
    for process in processes:
        counts[process.role] = counts.get(process.role, 0) + 1
    seen: dict[str, int] = {}
    labelled = []
    for process in processes:
        seen[process.role] = seen.get(process.role, 0) + 1
        label = f"{process.role} {seen[process.role]}" if counts[process.role] > 1 else process.role
        labelled.append((label, process))
    return labelled


def _each(cpu: RoleCpu) -> str:
    """Each loop of a role: its cores used, and how much of the time its busiest thread was busy."""
    return ", ".join(
        f"{label} {process.used:.2f}"
        + (f" (busiest thread {process.busiest:.0%} of the time)" if process.busiest is not None else "")
        for label, process in _numbered(cpu.processes)
        if process.loop
    )


# A loop's state (observe/loops.py) -> what held it, in words.
HELD_BY = {
    "sleep": "timed sleeps (SQLite's busy handler, waiting for the write lock)",
    "disk": "the disk",
    "lock": "a lock (the GIL among them)",
    "other": "other waits",
}
STATE_WORDS = {
    "running": "running",
    "waiting for a CPU": "waiting for a CPU",
    "sleep": "asleep",
    "disk": "waiting for the disk",
    "lock": "on a lock",
    "other": "otherwise waiting",
}


def _holders(cpu: RoleCpu) -> list[str]:
    """What held a role's loops besides running, most first: each state at 10 % or more of the
    level in the loops together."""
    loops = [p for p in cpu.processes if p.loop and p.states is not None]
    totals = {state: sum((p.states or {}).get(state, 0.0) for p in loops) / len(loops) for state in HELD_BY}
    return [HELD_BY[state] for state, share in sorted(totals.items(), key=lambda i: -i[1]) if share >= 0.1]


def _each_loop(cpu: RoleCpu) -> str:
    """Each loop: how busy it was, and its time by state."""
    described = []
    for label, process in _numbered(cpu.processes):
        if not process.loop or process.states is None:
            continue
        shares = dict(process.states)
        waiting = process.cpu_waiting
        shares = {"running": shares.get("running", 0.0) - waiting, "waiting for a CPU": waiting} | {
            state: share for state, share in shares.items() if state in BLOCKED
        }
        parts = [f"{STATE_WORDS[state]} {share:.0%}" for state, share in shares.items() if share >= 0.02]
        spent = f" ({', '.join(parts)})" if parts else ""
        described.append(f"{label} busy {process.busy or 0.0:.0%} of the time{spent}")
    return ", ".join(described)


def _listed(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _loops_of(cpu: RoleCpu) -> str:
    kinds: dict[str, int] = {}
    for process in cpu.processes:
        if process.loop:
            kinds[process.role] = kinds.get(process.role, 0) + 1
    return " and ".join(f"{count} {kind}{'s' if count > 1 else ''}" for kind, count in kinds.items())


def _cores(used: float) -> str:
    return f"{used:.2f} core{'s' if round(used, 2) != 1 else ''}"
