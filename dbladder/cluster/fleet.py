"""`ClusterFleet`: a generator fleet over the load agents' machines with the interface of one
machine's `Fleet`.

The schedule is split by numbering the parts across every process on every machine
(dbladder.load.fleet.parts): load agent i runs a fleet of its processes with parts
[first_i, first_i + count_i) of the total, so the union of what they send is exactly one machine's
schedule at that rate. Each agent merges its own processes' level snapshots; the coordinator merges
the agents' with the same `merge_levels`, which only adds counts and merges histograms, so the
result is the same as one fleet of every process.

One run start for all: the coordinator measures each agent's clock offset (clocks.py) and sends
each its origin translated into its own clock. Level starts are offsets from the origin, so a
search's probe starts at the same instant everywhere; the clocks are measured again before each
level. A load agent that stops answering (killed, stopped) or does not report a level by the
level's deadline strikes the run: the level is marked incomplete with the agent's name and the
cause, and the run stops as it does when a generator process dies on one machine.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from typing import Any

from ..load.acknowledged import AcknowledgedWrites
from ..load.fleet import (
    MERGES,
    READY_TIMEOUT,
    FleetBase,
    GeneratorFailed,
    LevelDone,
    ProcessSpec,
    fleet_specs,
    merge_live,
    split_parts,
)
from ..load.live_view import LiveView
from ..load.merge import merge_levels
from ..plans import PlannedLevel
from .coordinator import CALL_TIMEOUT, CLOCK_LEAD, Cluster, NoAgentOfRole, cause_of

POLL_INTERVAL = 0.2
"""Seconds between the coordinator's polls of the load agents while a level runs: a level done
is seen up to this late, and a poll is one small call an agent answers from memory."""
LEVEL_GRACE = 10.0
"""Seconds past a level's end and the request timeout within which every agent must have
reported it: an agent reports a level within half a second of its last outcome, so one that has
not by then is stopped or hung."""


class ClusterFleet(FleetBase):
    """The load agents' fleets as one: the interface of `Fleet` for the round (dbladder.run).

    `counts` is the generator processes of each load agent, by name. Entering starts every
    agent's fleet, waits until each is ready and releases them all at one run start, `origin`
    (a time.perf_counter() value of this process).
    """

    def __init__(self, cluster: Cluster, spec: ProcessSpec, counts: dict[str, int], start_delay: float = 1.0):
        self.cluster = cluster
        self.spec = spec
        self.names = list(counts)
        if not self.names:
            raise NoAgentOfRole(
                f"no load agent is connected to {cluster.address}: start one on each load machine with "
                f"`dbladder agent --scheduler {cluster.address} --role load`"
            )
        self.ranges = dict(zip(self.names, split_parts(list(counts.values())), strict=True))
        self.specs = dict(zip(self.names, fleet_specs(spec, list(self.ranges.values())), strict=True))
        self.processes = sum(counts.values())
        self.start_delay = start_delay
        self.origin = time.perf_counter() + start_delay
        self.acknowledged = AcknowledgedWrites()
        self.errors: dict[str, str] = {}
        """The agents lost, by name: why."""
        self.struck: dict[str, Any] | None = None
        """The level a lost agent struck: index, rate, agent, cause."""
        self._actors = {name: cluster.actor(name) for name in self.names}
        self._pending: dict[str, Any] = {}
        self._scheduled = spec.plan.scheduled()
        self._levels_run: dict[int, PlannedLevel] = {level.index: level for level in self._scheduled}
        self._started = len(self._scheduled)
        self._next_level = 0
        self._reported: dict[int, dict[str, dict[str, Any]]] = {}
        self._live: dict[str, dict[str, Any]] = {}
        self._stopped = False
        self._finals: dict[str, dict[str, Any]] = {}
        self._clocked: set[int] = {0}  # the run start's measurement is the first level's

    @property
    def pids(self) -> list[int]:
        """No generator process runs on this machine."""
        return []

    def __enter__(self) -> ClusterFleet:
        try:
            launched = {
                name: self._actors[name].launch(self.specs[name], self.ranges[name].count)
                for name in self.names
            }
            for name, future in launched.items():
                answer = self._answer(name, future, READY_TIMEOUT + 30)
                if answer is not None and answer["errors"]:
                    part, error = min(answer["errors"].items())
                    self._lose(name, f"generator process {part + 1} failed to start: {error}", None)
            if self.errors:
                raise GeneratorFailed(self.failure() or "a load agent failed to start")
            self.origin = time.perf_counter() + self.start_delay
            offsets = self.cluster.offsets()
            released = {
                name: self._actors[name].release(self.origin + offsets[name].offset) for name in self.names
            }
            for name, future in released.items():
                self._answer(name, future, CALL_TIMEOUT)
            if self.errors:
                raise GeneratorFailed(self.failure() or "a load agent failed to start")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        closing = {name: self._actors[name].close() for name in self._alive()}
        for name, future in closing.items():
            self._answer(name, future, CALL_TIMEOUT, lose=False)

    def _alive(self) -> list[str]:
        return [name for name in self.names if name not in self.errors]

    def _answer(self, name: str, future: Any, timeout: float, lose: bool = True) -> Any:
        """The agent's answer, or None with the agent lost (unless not `lose`) when it fails or
        does not answer in time."""
        try:
            return future.result(timeout=timeout)
        except GeneratorFailed:
            raise
        except Exception as exc:
            if lose:
                self._lose(
                    name, cause_of(exc), self._next_level if self._next_level < self._started else None
                )
            return None

    def _lose(self, name: str, cause: str, index: int | None) -> None:
        if name in self.errors:
            return
        self.errors[name] = cause
        if index is not None and self.struck is None and index in self._levels_run:
            level = self._levels_run[index]
            self.struck = {"index": index, "rate": level.rate, "agent": name, "cause": cause}

    def stop(self) -> None:
        """Ask every agent still answering to stop sending."""
        self._stopped = True
        stopping = {name: self._actors[name].stop() for name in self._alive()}
        for name, future in stopping.items():
            self._answer(name, future, CALL_TIMEOUT, lose=False)

    probe_delay = 0.5  # a probe starts this far ahead on every machine, from the one run start

    def _before_probe(self, planned: PlannedLevel) -> None:
        self.cluster.measure_clocks(skip=self.errors)  # before the probe, which starts after it
        self._clocked.add(planned.index)

    def _send_level(self, level: PlannedLevel, start_delay: float) -> None:
        self._levels_run[level.index] = level
        sent = {name: self._actors[name].start_level(level) for name in self._alive()}
        for name, future in sent.items():
            self._answer(name, future, CALL_TIMEOUT)

    def _deadline(self, index: int) -> float:
        """The time (this process's clock) by which every agent must have reported level `index`."""
        level = self._levels_run.get(index)
        if level is None:
            return math.inf
        return self.origin + level.start + level.hold + self.spec.timeout + LEVEL_GRACE

    def events(self) -> Iterator[LevelDone | LiveView]:
        """Levels as every agent finishes them and the merged live view about once a second, until
        every level started has been reported or an agent is lost."""
        last_live = 0.0
        while not self.errors and self._next_level < self._started:
            self._measure_clocks_due()
            self._poll()
            while not self.errors and len(self._reported.get(self._next_level, {})) == len(self.names):
                parts = self._reported.pop(self._next_level)
                done = LevelDone(self._next_level, merge_levels([parts[name] for name in self.names]))
                self._next_level += 1
                yield done
            if self.errors:
                return
            if self._live and time.monotonic() - last_live >= 1.0:
                last_live = time.monotonic()
                yield merge_live(list(self._live.values()))
            if self._next_level < self._started and time.perf_counter() > self._deadline(self._next_level):
                missing = [n for n in self.names if n not in self._reported.get(self._next_level, {})]
                for name in missing:
                    self._lose(
                        name,
                        f"did not report level {self._next_level + 1} by its deadline "
                        f"(the level's end + {self.spec.timeout:g} s timeout + {LEVEL_GRACE:g} s): "
                        "stopped, hung or cut off",
                        self._next_level,
                    )
            time.sleep(POLL_INTERVAL)

    def _measure_clocks_due(self) -> None:
        """Measure every agent's clock for the levels starting within CLOCK_LEAD seconds (once for
        all of them), before each level of the schedule as before each probe."""
        now = time.perf_counter() - self.origin
        due = [
            i
            for i, level in self._levels_run.items()
            if i not in self._clocked and level.start - CLOCK_LEAD <= now
        ]
        if due:
            self.cluster.measure_clocks(skip=self.errors)
            self._clocked.update(due)

    def _poll(self) -> None:
        """Ask every agent that has no poll outstanding; read the answers that have come."""
        for name in self._alive():
            if name not in self._pending:
                try:
                    self._pending[name] = self._actors[name].poll()
                except Exception as exc:  # the actor's worker already known lost
                    self._lose(name, cause_of(exc), self._next_level)
        for name, future in list(self._pending.items()):
            if not future.done():
                continue  # a stopped agent never answers: the level's deadline catches it
            del self._pending[name]
            answer = self._answer(name, future, CALL_TIMEOUT)
            if answer is None:
                continue
            for event in answer["events"]:
                if event[0] == "level":
                    self._reported.setdefault(event[1], {})[name] = event[2]
                else:
                    self._live[name] = event[1]
            if answer["acknowledged"] is not None:
                self.acknowledged.extend(answer["acknowledged"])
            if answer["failure"] is not None:
                self._lose(name, answer["failure"], self._next_level)

    def failure(self) -> str | None:
        """One line naming the first load agent lost, the level it struck and why."""
        if not self.errors:
            return None
        name = next(name for name in self.names if name in self.errors)
        agent = self.cluster.agent(name)
        during = ""
        if self.struck is not None and self.struck["agent"] == name:
            during = f" during level {self.struck['index'] + 1} ({self.struck['rate']:,.0f} req/s)"
        return f"load agent {name} ({agent.address}) was lost{during}: {self.errors[name]}"

    def finish(self) -> dict[str, Any]:
        """Every agent's final snapshot (bounded), merged as one fleet's processes' are."""
        finishing = {name: self._actors[name].finish() for name in self._alive()}
        for name, future in finishing.items():
            answer = self._answer(name, future, self.spec.timeout + 40)
            if answer is not None:
                self._finals[name] = answer["final"]
                if answer["acknowledged"] is not None:
                    self.acknowledged.extend(answer["acknowledged"])
        if not self._finals:
            raise GeneratorFailed(self.failure() or "no load agent reported a result")
        merged = MERGES[self.spec.plan.model](self._finals.values())
        missing = sum(self.ranges[name].count for name in self.names if name not in self._finals)
        merged["missing_parts"] = merged.get("missing_parts", 0) + missing
        merged["interrupted"] = merged["interrupted"] or self._stopped or missing > 0
        merged["errors"] = [
            *(error for final in self._finals.values() for error in final.get("errors", [])),
            *(f"load agent {name}: {cause}" for name, cause in self.errors.items()),
        ]
        return merged
