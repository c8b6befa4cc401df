"""What ran out in a saturated level: each measured resource against its bound, in words.

A leaf of `diagnosis.py` (issue 22; issue 32: a cause for the levels a user meets). A level's
`Resources` hold what it measured: each role's CPU (`RoleCpu`: used, what it may use, what its
threads waited for a CPU, and each of its processes, `ProcessShare`), the pool's and the single
SQLite writer's queues, the writer's commits beside the disk's fsync rate, lock waits, iowait.
`findings` sets each against its bound (1.0: at it), most advanced first, and `named` picks the
one a saturated level ran out of; their words (`resource_words.py`: `finding_line`, the one named
with its figures; `ruled_out`, for a level where none reached its bound, each one's figure and
the bound it stayed under; `evidence_of`) are a module of their own.

How a role's CPU is judged. A worker of the service (and the single SQLite writer, and each
generator process) is one process running one event loop: its requests' Python runs on one
thread, which can use one core at most. So a process is at its limit when that thread ran or
waited to run nearly all the time (`busiest`, from the per-thread schedstat: CPU_AT_LIMIT of
the level), whatever the rest of the machine did; and a role of several such processes is at
its limit when its CPU used reaches what it may use, or every one of its loops is at its own.
One loop at its limit beside another with time to spare is a finding of its own: the service
cannot use the cores it is given ("one service worker at its limit: the service at 1.00 core of
its 2 workers: worker 1 0.92, worker 2 0.08").

Where a loop's time went, when its thread's states were sampled (`states`, observe/loops.py):
running (split, with its thread's run-queue wait, into running and waiting for a CPU), idle,
asleep (in dbladder's service, SQLite's busy handler waiting for the write lock: SQLite runs
inline and stops the loop), waiting for the disk, on a lock. A loop almost never idle is at its
limit whatever held it: loops busy all level but held more than running are "the service's
event loops at their limit, held by ..."; loops asleep most of the level are "the database's
write lock"; loops that mostly waited for a CPU on a machine at its limit are the machine's.

The time a role's threads waited for a CPU is not added to what it used as CPU it wanted: the
threads that hand a request to each other (granian's I/O threads and the loop) each wait a
moment at every handoff, on a machine with idle CPUs too, and summed over threads those moments
read as cores (two processes handing a byte back and forth, which can never use more than one
core between them, read 0.48-0.98 of a core used and 0.38-0.93 more waited:
benchmarks/handoff_waits.py). A thread's own wait counts in its `busiest` share: a loop that
waited for a CPU half the time did want it. A result from before the processes were sampled has
no `processes`: there the role's share is what it used plus what it waited, as it was read then.

The machine's CPUs (`host`) are the sum of the roles' and of whatever else ran: at their limit
they are named with each role's share of them ("the machine's CPUs at their limit: 1.96 of 2
cores busy: service 0.51 + generator 0.16 + other 1.29"), unless a role is at its own limit by
what it used or what held it (not by waiting for those CPUs), which is then the finding. The
host's iowait is likewise not named for a service whose sampled loops did not wait for the disk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

CPU_AT_LIMIT = 0.9  # a role's CPU, or a loop's thread, at this share of what it may use
# name -> the bound past which that resource is at its limit (a share, or a ratio for the writer)
RESOURCE_BOUNDS = {
    "pool": 0.5,  # of a request's time in the service, waiting for a connection
    "writer queue": 0.5,  # of a write's time, waiting behind the single SQLite writer
    "writer at the disk's fsync rate": 0.8,  # commits per second over fsyncs per second
    "lock waits": 0.5,  # of the active sessions' samples, waiting for a lock
    "disk": 0.2,  # iowait, as a share of the host's CPU time
    "write lock": 0.5,  # of the service's loops' time, asleep waiting for the database's write lock
}
ROLES = ("service", "database", "generator")
BLOCKED = ("sleep", "disk", "lock", "other")  # a loop's states that hold it off the CPU
HOST = "host CPU"  # the machine's CPUs, as the findings name them


@dataclass(frozen=True)
class ProcessShare:
    """One process of a role over the level: its role in the group ("worker", "writer", "server",
    or its name), cores used and waited for, the share of the level its busiest thread ran or
    waited to run (None when not measured) and of which it waited, and whether it runs one event
    loop (`loop`)."""

    role: str
    used: float
    waited: float = 0.0
    busiest: float | None = None
    loop: bool = False
    busiest_waited: float = 0.0
    states: Mapping[str, float] | None = None  # a loop's thread: each state's share (observe/loops.py)

    @property
    def busy(self) -> float | None:
        """The share of the level its loop was not idle: running, waiting for a CPU, or held (asleep
        on a lock, in a timed sleep, waiting for the disk); without its states, the share its
        busiest thread ran or waited to run."""
        if self.states is not None:
            return 1.0 - self.states.get("idle", 0.0)
        return self.busiest

    @property
    def at_limit(self) -> bool:
        """Busy nearly all the time: a loop that never waited for work."""
        return (self.busy or 0.0) >= CPU_AT_LIMIT

    @property
    def cpu_waiting(self) -> float:
        """The share of the level its loop's thread waited for a CPU: its busiest thread's wait (a
        loop's own thread is its busiest), within the time its states read it runnable."""
        if self.states is None:
            return self.busiest_waited
        return min(self.busiest_waited, self.states.get("running", 0.0))

    @property
    def starved(self) -> bool:
        """At its limit by waiting for a CPU more than by anything else: the machine's CPUs were
        busy, and that thread had its core's worth only in wanting it."""
        if not self.at_limit:
            return False
        if self.states is not None:
            waiting = self.cpu_waiting
            ran = self.states.get("running", 0.0) - waiting
            return waiting >= ran and all(waiting >= self.states.get(state, 0.0) for state in BLOCKED)
        return self.busiest is not None and self.busiest_waited * 2 >= self.busiest

    @property
    def held(self) -> bool:
        """At its limit, not starved, and more of the time held (asleep, on the disk, on a lock)
        than running or waiting to run."""
        if self.states is None or not self.at_limit or self.starved:
            return False
        running = self.states.get("running", 0.0)
        return (self.busy or 0.0) - running >= running


@dataclass(frozen=True)
class RoleCpu:
    """A role's CPU over the level: cores used, cores it may use (its --cpus, its event loops, or
    the host's), cores' worth of time its threads were runnable but waited for a CPU, and each of
    its processes (empty in a result from before they were sampled)."""

    used: float
    allowed: float
    waited: float = 0.0
    processes: tuple[ProcessShare, ...] = ()

    @property
    def loops(self) -> list[ProcessShare]:
        """Its event-loop processes whose busiest thread or states were measured."""
        return [p for p in self.processes if p.loop and p.busy is not None]

    @property
    def occupancy(self) -> float | None:
        """The least busy of its loops' share of the level (`ProcessShare.busy`) when each loop's
        states were sampled: every loop is at its limit when this is, whatever held it."""
        loops = [p for p in self.processes if p.loop]
        if not loops or any(p.states is None for p in loops):
            return None
        return min(p.busy or 0.0 for p in loops)

    @property
    def share(self) -> float:
        """How near it is to its limit (1.0: at it, module doc): the CPU it used over what it may
        use, or, when every loop it may run was measured, the least busy loop's share if that is
        more; without its processes, what it used plus what it waited."""
        if self.allowed <= 0:
            return 0.0
        if not self.processes:
            return (self.used + self.waited) / self.allowed
        used = self.used / self.allowed
        loops = [p for p in self.loops if p.busiest is not None]
        if loops and len(loops) >= self.allowed:
            return max(used, min(p.busiest or 0.0 for p in loops))
        return used

    @property
    def starved(self) -> bool:
        """At its limit only by its loops' waiting for a CPU (`ProcessShare.starved`), not by the
        cores it used: the machine's CPUs are then what ran out, if they are at their limit."""
        loops = self.loops
        used_up = self.allowed > 0 and self.used / self.allowed >= CPU_AT_LIMIT
        return (
            not used_up and any(p.starved for p in loops) and all(p.starved or not p.at_limit for p in loops)
        )


@dataclass(frozen=True)
class Resources:
    """What a level's resources did, each None (or empty) when it was not measured."""

    cpu: dict[str, RoleCpu] = field(default_factory=dict)  # "service", "database", "generator", "host"
    pool_wait_share: float | None = None
    writer_queue_share: float | None = None  # of a write's time in the writer, queued before it began
    writer_queue_mean_ms: float | None = None  # a write's mean time in that queue
    commits_per_second: float | None = None
    fsyncs_per_second: float | None = None  # the disk's, measured once (observe/disk.py)
    lock_wait_share: float | None = None
    lock_event: tuple[str, float] | None = None  # the lock wait event most seen, and its share
    iowait: float | None = None  # share of the host's CPU time
    schedule_lag_p99_ms: float | None = None
    dropped: int = 0
    sent_p95_ms: float | None = None  # latency from the send, of the answers with a status


def findings(resources: Resources) -> list[tuple[str, float]]:
    """Every measured resource by how far it is toward its bound (1.0: at it), furthest first.
    A role's CPU is "<role> CPU", the machine's "host CPU", one loop of a role at its limit while
    another had time to spare "<role> <process role>" (e.g. "service worker")."""
    ratios: dict[str, float] = {}
    for role, cpu in resources.cpu.items():
        if cpu.allowed > 0 and role != "generator":
            ratios[f"{role} CPU"] = cpu.share / CPU_AT_LIMIT
            uneven = _uneven(cpu)
            if uneven is not None:
                ratios[f"{role} {uneven.role}"] = (uneven.busy or 0.0) / CPU_AT_LIMIT
            elif cpu.occupancy is not None:
                ratios[f"{role} loops"] = cpu.occupancy / CPU_AT_LIMIT
    asleep = loops_asleep(resources.cpu.get("service"))
    if asleep is not None:
        ratios["write lock"] = sum(asleep) / len(asleep) / RESOURCE_BOUNDS["write lock"]
    figures = {
        "pool": resources.pool_wait_share,
        "writer queue": resources.writer_queue_share,
        "lock waits": resources.lock_wait_share,
        "disk": resources.iowait,
    }
    if resources.commits_per_second is not None and resources.fsyncs_per_second:
        figures["writer at the disk's fsync rate"] = (
            resources.commits_per_second / resources.fsyncs_per_second
        )
    for name, value in figures.items():
        if value is not None:
            ratios[name] = value / RESOURCE_BOUNDS[name]
    ranked = sorted(ratios.items(), key=lambda item: -item[1])
    if ratios.get("writer at the disk's fsync rate", 0.0) >= 1.0:
        # The writer commits as often as the disk syncs: the host's iowait is those same syncs
        # waited for, seen from the host (on an idle host it reads high at any sync rate), and
        # the writer is the finding that says why. The disk stays in the evidence, after it.
        ranked.sort(key=lambda item: item[0] == "disk")
    return ranked


def named(ranked: Sequence[tuple[str, float]], resources: Resources) -> str | None:
    """The resource a saturated level ran out of: the furthest past its bound, but for the CPU.
    The machine's CPUs are the sum of the roles' and of whatever else ran: when a role is at its
    own limit by what it used, that role is the finding; when the machine is at its limit and a
    role reached its own only by waiting for a CPU (`RoleCpu.starved`), the machine is. None when
    none reached its bound."""
    past = [name for name, ratio in ranked if ratio >= 1.0]
    if not past:
        return None
    machine_full = HOST in past

    def starved(name: str) -> bool:
        cpu = resources.cpu.get(name.split()[0])
        return cpu is not None and cpu.starved

    for name in past:
        role = name.split()[0] in ROLES
        if name == HOST and any(n != HOST and n.split()[0] in ROLES and not starved(n) for n in past):
            continue  # a role at its own limit, which the machine's figure only sums
        if role and machine_full and starved(name):
            continue  # the role only waited for CPUs that other work had
        if name.endswith(" loops") and f"{name.split()[0]} CPU" in past:
            continue  # its loops were busy running: its CPU is the finding
        if name == "disk" and len(past) > 1 and _loops_spared_by_disk(resources.cpu.get("service")):
            continue  # the host's iowait, others' perhaps: the service's loops did not wait for it
        return name
    return past[0]


def _loops_spared_by_disk(cpu: RoleCpu | None) -> bool:
    """The service's loops, sampled, waited for the disk under a tenth of the level each: the
    host's iowait (another program's, on a shared machine) is then not what held them."""
    loops = [p for p in (cpu.processes if cpu is not None else ()) if p.loop and p.states is not None]
    return bool(loops) and all((p.states or {}).get("disk", 0.0) < 0.1 for p in loops)


def loops_asleep(cpu: RoleCpu | None) -> list[float] | None:
    """Each of the service's loops' share of the level asleep in a timed sleep: in dbladder's
    service, SQLite's busy handler waiting for the write lock, with the loop stopped (it runs
    SQLite inline); None without their states."""
    loops = [p for p in (cpu.processes if cpu is not None else ()) if p.loop and p.states is not None]
    return [(p.states or {}).get("sleep", 0.0) for p in loops] if loops else None


def _uneven(cpu: RoleCpu) -> ProcessShare | None:
    """The loop of a role of several at its limit while another had time to spare (below half the
    time busy), and the role itself is not at its limit; None otherwise."""
    loops = cpu.loops
    if len(loops) < 2 or cpu.share >= CPU_AT_LIMIT:
        return None
    busiest = max(loops, key=lambda p: p.busy or 0.0)
    idlest = min(p.busy or 0.0 for p in loops)
    if busiest.at_limit and idlest < 0.5:
        return busiest
    return None
