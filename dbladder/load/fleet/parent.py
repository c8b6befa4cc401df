"""The fleet of generator processes, from the parent's side: start them, send them levels, merge.

Every process runs the plan's scheduled levels from one run start (so together they keep one
schedule) and then the levels the parent sends (`Fleet.start_level`: a search's probes, which
cost no process start); it reports each level as soon as all its requests have an outcome, and
the parent merges a level once every process has reported it (`Fleet.level_events`), so the
caller can judge it and stop the run after the first failed level without waiting for the rest.
Levels sit on one timeline from the fleet's origin, numbered in the order run.

The fleet sends the parts of the run its spec's range names (`parts.py`; on one machine, all of
them): its process k sends global part first + k of `total` and draws that part's mix stream, so
fleets on several machines with disjoint ranges send one schedule between them. Within the fleet,
processes are numbered from 0 (the processes' own messages carry their global part; `_receive`
turns it into the fleet's number).

Each process also hands over, every half second, the records of the writes answered 2xx
(`acknowledged.py`); the parent keeps them in `Fleet.acknowledged` for the integrity check after
the run, apart from the levels' figures.

On Ctrl-C the caller calls `stop()`, the processes cancel their schedules, and `finish()` still
collects what each one measured.
"""

from __future__ import annotations

import math
import multiprocessing
import queue
import signal
import time
from collections.abc import Iterator
from typing import Any

from ...errors import DbladderError
from ...plans import PlannedLevel
from ..acknowledged import AcknowledgedWrites
from ..live_view import LiveView, merge_live
from ..merge import merge_levels, merge_snapshots, merge_users_snapshots
from .base import FleetBase, LevelDone
from .child import child_main
from .spec import ProcessSpec
from .start_line import READY_TIMEOUT, StartLine

MERGES = {"open": merge_snapshots, "closed": merge_users_snapshots}
"""How the processes' snapshots merge, by the plan's model (the closed one adds a per-second series)."""


class GeneratorFailed(DbladderError):
    """A generator process died or never reported: the message names it and its last error."""


class Fleet(FleetBase):
    """N generator processes sharing one plan. Use as a context manager; follow `level_events()`.

    Entering starts the processes and returns once every one is ready (or READY_TIMEOUT passed);
    the schedule starts `start_delay` seconds later, at `origin`.
    """

    def __init__(self, spec: ProcessSpec, processes: int, start_delay: float = 0.25):
        if processes < 1:
            raise ValueError(f"processes must be 1 or more, not {processes}")
        self.spec = spec
        self.processes = processes
        self.parts = spec.parts_of(processes)
        """The run's parts this fleet sends: process k sends part parts.first + k of parts.total."""
        self.start_delay = start_delay
        context = multiprocessing.get_context("spawn")  # no fork of a process that may hold a loop
        self._events = context.Queue()
        self._stop = context.Event()
        self._start_line = StartLine(context)
        self.origin = time.perf_counter() + start_delay
        """The run start (a time.perf_counter() value); final once the fleet is entered."""
        self._scheduled = spec.plan.scheduled()
        self._started = len(self._scheduled)
        self._commands: list[Any] = [context.Queue() for _ in range(processes)]
        start_line, events, stop = self._start_line, self._events, self._stop
        self._children = [
            context.Process(
                target=child_main,
                args=(spec, part, self.parts.total, start_line, events, stop, self._commands[number]),
                daemon=True,
            )
            for number, part in enumerate(self.parts.parts)
        ]
        self._levels: dict[int, dict[int, dict[str, Any]]] = {}
        self._live: dict[int, dict[str, Any]] = {}
        self._done: dict[int, dict[str, Any]] = {}
        self.errors: dict[int, str] = {}
        self.acknowledged = AcknowledgedWrites()
        """The records of every write answered 2xx so far, from every process (for the integrity check)."""
        self._next_level = 0
        self._ready: set[int] = set()
        self._deadline = math.inf  # set once the schedule starts; until then READY_TIMEOUT bounds the wait

    def __enter__(self) -> Fleet:
        self.launch()
        self.release()
        return self

    def launch(self) -> None:
        """Start the processes and wait until every one is ready (or READY_TIMEOUT passed); the
        schedule waits for `release`. Entering the fleet does both; a load agent of a cluster
        (dbladder.cluster) releases its fleet at the run start the coordinator sets for every machine."""
        for child in self._children:
            child.start()
        try:
            self._wait_until_ready()
        except BaseException:
            # Ctrl-C while waiting: `with` calls no __exit__ when __enter__ fails, so stop them here.
            self.release()
            self.__exit__()
            raise

    def release(self, origin: float | None = None) -> None:
        """Let every process go: the schedule starts at `origin` (a time.perf_counter() value),
        by default `start_delay` seconds from now."""
        self.origin = time.perf_counter() + self.start_delay if origin is None else origin
        self._start_line.release(self.origin)
        ahead = max(0.0, self.origin - time.perf_counter())
        self._deadline = time.monotonic() + ahead + self.spec.duration + self.spec.timeout + 30

    def _wait_until_ready(self) -> None:
        """Until every process said it is ready or failed (a dead one counts as failed), or
        READY_TIMEOUT passed."""
        give_up = time.monotonic() + READY_TIMEOUT
        while len(self._ready) + len(self.errors) < self.processes and time.monotonic() < give_up:
            self._receive()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
        for child in self._children:
            child.join(timeout=2)
            if child.is_alive():
                child.terminate()
                child.join(timeout=2)

    def stop(self) -> None:
        """Ask every process to stop sending; they report what they measured."""
        self._stop.set()
        self._end_commands()
        self._deadline = min(self._deadline, time.monotonic() + self.spec.timeout + 10)

    def _send_level(self, level: PlannedLevel, start_delay: float) -> None:
        for commands in self._commands:
            if commands is not None:
                commands.put(level)
        self._deadline = time.monotonic() + start_delay + level.hold + self.spec.timeout + 30

    def _end_commands(self) -> None:
        for commands in self._commands:
            if commands is not None:
                commands.put(None)
        self._commands = [None] * self.processes

    @property
    def pids(self) -> list[int]:
        """The generator processes' PIDs (those started so far)."""
        return [child.pid for child in self._children if child.pid is not None]

    @property
    def finished(self) -> bool:
        return len(self._done) + len(self.errors) >= self.processes

    def events(self) -> Iterator[LevelDone | LiveView]:
        """Levels as every process finishes them, and the live view about once a second, until
        every level started so far has been reported (or the processes have all ended)."""
        last_live = 0.0
        # Once a process has failed, no level can be merged from every process any more.
        while not self.finished and not self.errors and self._next_level < self._started:
            message = self._receive()
            if message is None:
                continue
            kind, part, *payload = message
            if kind == "level":
                index, snapshot = payload
                self._levels.setdefault(index, {})[part] = snapshot
                while len(self._levels.get(self._next_level, {})) == self.processes:
                    parts = self._levels.pop(self._next_level)
                    done = LevelDone(self._next_level, merge_levels(list(parts.values())))
                    # Counted before the yield: a caller may stop iterating at this level.
                    self._next_level += 1
                    yield done
            elif kind == "live":
                self._live[part] = payload[0]
                if time.monotonic() - last_live >= 1.0:
                    last_live = time.monotonic()
                    yield self._merged_live()

    def finish(self) -> dict[str, Any]:
        """Wait (bounded) for every process's final snapshot; the merged snapshot of the run."""
        self._end_commands()
        self._deadline = min(self._deadline, time.monotonic() + self.spec.timeout + 30)
        while not self.finished:
            self._receive()
        if not self._done:
            detail = "; ".join(f"process {part}: {error}" for part, error in sorted(self.errors.items()))
            raise GeneratorFailed(f"no generator process reported a result ({detail or 'none answered'})")
        merged = MERGES[self.spec.plan.model](self._done.values())
        merged["missing_parts"] = self.processes - len(self._done)
        merged["interrupted"] = merged["interrupted"] or self._stop.is_set() or merged["missing_parts"] > 0
        merged["errors"] = [self.errors[part] for part in sorted(self.errors)]
        return merged

    def failure(self) -> str | None:
        """One line naming the first generator process that failed and its last error; None if none did."""
        if not self.errors:
            return None
        part = min(self.errors)
        pid = self._children[part].pid
        where = "" if self.parts.is_whole else f", part {self.parts.first + part + 1} of {self.parts.total}"
        return (
            f"generator process {part + 1} of {self.processes} (pid {pid}{where}) failed: {self.errors[part]}"
        )

    def _receive(self) -> tuple[Any, ...] | None:
        for part, child in enumerate(self._children):
            # Killed (a signal, the OOM killer): it could not say so itself. A process that ends by
            # itself exits 0 after its last message, even when it failed.
            if child.exitcode not in (None, 0) and part not in self._done:
                self.errors.setdefault(part, _exit_words(child.exitcode))
        try:
            message: tuple[Any, ...] = self._events.get(timeout=0.25)
        except queue.Empty:
            if time.monotonic() > self._deadline or not any(child.is_alive() for child in self._children):
                # Bounded: a process that has not reported by now never will.
                for part in range(self.processes):
                    if part not in self._done:
                        self.errors.setdefault(part, "did not report before the deadline")
            return None
        # A process names itself by its global part; the fleet counts its own processes from 0.
        kind, part = message[0], message[1] - self.parts.first
        message = (kind, part, *message[2:])
        if kind == "ready":
            self._ready.add(part)
        elif kind == "acknowledged":
            self.acknowledged.extend(message[2])
        elif kind == "done":
            self._done[part] = message[2]
        elif kind == "error":
            self.errors[part] = message[2]
        return message

    def _merged_live(self) -> LiveView:
        return merge_live(list(self._live.values()))

    struck: dict[str, Any] | None = None
    """The level a lost part of the run struck (a cluster's load agent: dbladder.cluster); on one
    machine a failed process is the run's failure and no level is marked."""


def _exit_words(code: int) -> str:
    """How a process ended, in words: "killed by SIGKILL", "exited with code 3"."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


def run_processes(spec: ProcessSpec, processes: int, start_delay: float = 0.25) -> dict[str, Any]:
    """Run the whole plan's scheduled levels over `processes` generator processes; the merged snapshot."""
    with Fleet(spec, processes, start_delay) as fleet:
        return fleet.finish()
