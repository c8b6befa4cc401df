"""Where each event loop's time went: its thread's state, sampled a hundred times a second.

A worker of the service (and the single SQLite writer) runs one event loop on its main thread.
Its CPU says how much of the time that thread ran; not what held it the rest of the time. SQLite
runs inline, so a write that waits for the database's lock sleeps in the busy handler with the
loop stopped, and a read or an fsync that waits for the disk blocks it as well: a loop can be
busy all the time while using half a core. The kernel says, for a thread at any instant, whether
it runs or waits to run (R), sleeps (S) or waits uninterruptibly (D), and for a sleeping thread
where (/proc/PID/task/TID/wchan). `LoopSampler` reads both for each loop's thread every
INTERVAL seconds, in a thread of its own, and files each reading under one of STATES:

    running   R: on a CPU, or runnable and waiting for one
    idle      asleep in epoll/poll/select: the loop had nothing to do
    sleep     asleep in a timed sleep (clock_nanosleep): in a worker, SQLite's busy handler
              waiting for the write lock (dbladder's engine counts those sleeps, busy_waits)
    disk      D: waiting for the disk (a page read, a write-back, an fsync)
    lock      asleep on a futex: a lock, the GIL among them
    other     anything else (another sleep, a thread between states)

`shares(start, end)` gives, per process, each state's share of the readings in [start, end)
(time.perf_counter(), the schedule's clock) and how many readings there were. A loop is at its
limit when it was idle almost never, whatever held it.

Measured on this 2-core machine (load 3-5, other work sharing it), the service's two workers at
their limit on SQLite with 20 % writes, each loop read about: running 57 %, asleep in the busy
handler 15-20 %, waiting for the disk 20-25 %, idle 1 % (issue 32). A reading costs two small
/proc reads (about 15 us each): 100 a second for each of two loops is about half a percent of a
core.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from .processes import Labeler, Resolver

INTERVAL = 0.01
STATES = ("running", "idle", "sleep", "disk", "lock", "other")
LOOP_ROLES = ("worker", "writer")
"""The processes (by `Labeler` role) that each run one event loop on their main thread."""
BUCKET = 0.1  # readings are kept counted per tenth of a second: a window's edges within that


def state_of(stat: str, wchan: str) -> str:
    """A thread's state, from its /proc stat state letter and its wchan (module doc)."""
    if stat == "R":
        return "running"
    if stat == "D":
        return "disk"
    if "epoll" in wchan or "poll" in wchan or "select" in wchan:
        return "idle"
    if "nanosleep" in wchan:
        return "sleep"
    if "futex" in wchan:
        return "lock"
    return "other"


def read_state(pid: int) -> str | None:
    """The state of a process's main thread now; None once it has gone."""
    task = Path(f"/proc/{pid}/task/{pid}")
    try:
        stat = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
        wchan = (task / "wchan").read_text() if stat not in ("R", "D") else ""
    except (OSError, IndexError):
        return None
    return state_of(stat, wchan)


class LoopSampler:
    """Samples the state of each event loop of a group (`resolver`'s processes whose `labeler` role
    is in LOOP_ROLES) every `interval` seconds until stopped; see the module doc."""

    def __init__(
        self,
        resolver: Resolver,
        labeler: Labeler,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.perf_counter,
    ):
        self._resolver = resolver
        self._labeler = labeler
        self._interval = interval
        self._clock = clock
        self._roles: dict[int, str] = {}
        self._counts: dict[tuple[int, int], Counter[str]] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dbladder-loops", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=5)

    def shares(self, start: float, end: float) -> list[dict[str, object]]:
        """Each loop's readings in [start, end): {"pid", "role", "readings", and each of STATES as
        a share of them}, in the order the loops started (by pid)."""
        first, last = int(start / BUCKET), int(end / BUCKET)
        totals: dict[int, Counter[str]] = {}
        with self._lock:
            for (pid, bucket), counted in self._counts.items():
                if first <= bucket < last:
                    totals.setdefault(pid, Counter()).update(counted)
        result: list[dict[str, object]] = []
        for pid in sorted(totals):
            readings = sum(totals[pid].values())
            entry: dict[str, object] = {"pid": pid, "role": self._roles.get(pid, "?"), "readings": readings}
            result.append(entry | {state: totals[pid][state] / readings for state in STATES})
        return result

    def _run(self) -> None:
        loops: list[int] = []
        refreshed = 0.0
        while not self._stopping.wait(self._interval):
            now = self._clock()
            if now - refreshed >= 1.0:  # processes come and go (a worker replaced, a restart)
                loops = self._loops()
                refreshed = now
            bucket = int(now / BUCKET)
            for pid in loops:
                state = read_state(pid)
                if state is not None:
                    with self._lock:
                        self._counts.setdefault((pid, bucket), Counter())[state] += 1

    def _loops(self) -> list[int]:
        try:
            pids = self._resolver()
        except Exception:  # a sampler must never take the run down with it
            return []
        for pid in pids:
            if pid not in self._roles:
                self._roles[pid] = self._labeler(pid)
        return [pid for pid in pids if self._roles.get(pid) in LOOP_ROLES]
