"""The run's side of a cluster: find the agents and check them (`Cluster`), and `ClusterFleet`, a
generator fleet over the load agents' machines with the interface of one machine's `Fleet`.

The schedule is split by numbering the parts across every process on every machine
(dbladder.load.fleet.parts): load agent i runs a fleet of its processes with parts
[first_i, first_i + count_i) of the total, so the union of what they send is exactly one machine's
schedule at that rate. Each agent merges its own processes' level snapshots; the coordinator merges
the agents' with the same `merge_levels`, which only adds counts and merges histograms, so the
result is the same as one fleet of every process.

One run start for all: the coordinator measures each agent's clock offset (clocks.py) and sends
each its origin translated into its own clock. Level starts are offsets from the origin, so a
search's probe starts at the same instant everywhere. A load agent that stops answering (killed,
stopped) or does not report a level by the level's deadline strikes the run: the level is marked
incomplete with the agent's name and the cause, and the run stops as it does when a generator
process dies on one machine.
"""

from __future__ import annotations

import dataclasses
import math
import time
import uuid
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dask
from distributed import Client

from ..errors import DbladderError
from ..load.acknowledged import AcknowledgedWrites
from ..load.fleet import (
    MERGES,
    READY_TIMEOUT,
    GeneratorFailed,
    LevelDone,
    ProcessSpec,
    fleet_specs,
    merge_live,
    split_parts,
)
from ..load.live_view import LiveView
from ..load.recorder import merge_levels
from ..plans import Level
from . import clocks
from .agent import DbAgent, LoadAgent, SchedulerUnreachable, describe
from .security import security
from .settings import CONNECT_TIMEOUT, DASK_SETTINGS, machine, version_words, versions

HOST_KEYS = ("usr", "sys", "iowait", "idle", "steal", "load1", "memory_used")
"""A db agent's per-second sample fields that a level's window averages."""
POLL_INTERVAL = 0.5
"""Seconds between the coordinator's polls of the load agents while a level runs."""
LEVEL_GRACE = 10.0
"""Seconds past a level's end and the request timeout within which every agent must have
reported it: an agent reports a level within half a second of its last outcome, so one that has
not by then is stopped or hung."""
CALL_TIMEOUT = 15.0
"""Seconds a short call to an agent (a start, a level, a stop) may take."""
PING_TIMEOUT = 3.0
"""Seconds a clock ping may take during the run (a round trip is a few ms): a stopped agent holds
the coordinator's loop this long at most."""
CLOCK_LEAD = 1.0
"""Seconds before a level's start at which the coordinator measures the clocks for it."""


class AgentRefused(DbladderError):
    """An agent the run cannot use: another version, or no agent of a needed role."""


@dataclass(frozen=True)
class Agent:
    """One dbladder agent connected to the scheduler."""

    name: str
    role: str
    address: str
    machine: dict[str, Any]


class Cluster:
    """The coordinator's connection to a scheduler and its agents; a context manager.

    Entering connects (a scheduler that does not answer: one line within a few seconds), finds
    the dbladder agents among the workers, refuses any whose versions differ from this
    coordinator's, places an actor on each agent of the roles the run uses, and measures each
    one's clock offset.
    """

    def __init__(self, address: str, roles: tuple[str, ...] = ("load", "db"), tls: Path | None = None):
        self.address = address
        self.tls = tls
        self.roles = roles
        self.client: Client | None = None
        self.agents: list[Agent] = []
        self.actors: dict[str, Any] = {}
        self.offsets: dict[str, clocks.ClockOffset] = {}
        self.lost: dict[str, str] = {}
        """Agents of other roles than load that stopped answering, by name: why (their figures
        are not measured from then on)."""
        self.clock_history: list[tuple[float, dict[str, clocks.ClockOffset]]] = []
        """Every measurement of the agents' clock offsets: when (this process's
        time.perf_counter()) and each agent's offset; the first is the run start's (`offsets`)."""
        self.notify: Callable[[str], None] = lambda line: None
        """Where a line goes when an agent other than a load agent is lost (the run's progress)."""
        self._futures: list[Any] = []  # an actor lives while its future is held

    def __enter__(self) -> Cluster:
        dask.config.set(DASK_SETTINGS)
        try:
            self.client = Client(
                self.address,
                timeout=CONNECT_TIMEOUT,
                direct_to_workers=True,
                set_as_default=True,
                security=security(self.tls),
            )
        except (OSError, TimeoutError) as exc:
            raise SchedulerUnreachable(
                f"no scheduler answered at {self.address} ({exc or type(exc).__name__}): start one "
                "there with `dbladder scheduler`, or check the address"
            ) from None
        try:
            self.agents = self._find_agents()
            if "load" in self.roles and not self.of_role("load"):
                raise AgentRefused(
                    f"no load agent is connected to {self.address}: start one on each load machine with "
                    f"`dbladder agent --scheduler {self.address} --role load`"
                )
            for agent in self.agents:
                if agent.role in self.roles:
                    self.actors[agent.name] = self._place(
                        LoadAgent if agent.role == "load" else DbAgent, agent
                    )
            for agent in self.agents:
                if agent.name in self.actors:
                    self.offsets[agent.name] = self.measure(agent)
            self.clock_history.append((time.perf_counter(), dict(self.offsets)))
            for agent in self.of_role("db"):
                if agent.name in self.actors:
                    self.actors[agent.name].start().result(timeout=CALL_TIMEOUT)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.client is not None:
            self.client.close(timeout=5)
            self.client = None

    def _find_agents(self) -> list[Agent]:
        assert self.client is not None
        described = self.client.run(describe, on_error="return")
        workers = self.client.scheduler_info()["workers"]
        names = {address: worker.get("name") for address, worker in workers.items()}
        return agents_of(described, names, versions())

    def _place(self, cls: type, agent: Agent) -> Any:
        """An actor of `cls` on `agent`, never moved to another worker."""
        assert self.client is not None
        future = self.client.submit(
            cls,
            workers=[agent.address],
            allow_other_workers=False,
            actor=True,
            pure=False,
            key=f"{cls.__name__}-{agent.name}-{uuid.uuid4().hex[:8]}",
        )
        self._futures.append(future)
        return future.result(timeout=CALL_TIMEOUT)

    def measure(self, agent: Agent, timeout: float = CALL_TIMEOUT) -> clocks.ClockOffset:
        """The agent's clock offset from this process's, by the fastest of a few dozen pings."""
        actor = self.actors[agent.name]
        return clocks.measure(lambda: actor.clock().result(timeout=timeout))

    def measure_clocks(self, skip: Collection[str] = ()) -> dict[str, clocks.ClockOffset]:
        """Every agent's clock offset now (before a level), kept in `clock_history`. An agent that
        does not answer is left out: a db or app agent is then lost; a load agent, not in `skip`
        (those already lost), is the fleet's to strike the level for (its poll finds it gone)."""
        found = {}
        for agent in self.agents:
            if agent.name not in self.actors or agent.name in self.lost or agent.name in skip:
                continue
            try:
                found[agent.name] = self.measure(agent, timeout=PING_TIMEOUT)
            except Exception as exc:
                if agent.role != "load":
                    self.lose(agent, _cause(exc))
        self.clock_history.append((time.perf_counter(), found))
        return found

    def clocks_at(self, moment: float) -> dict[str, clocks.ClockOffset]:
        """The offsets measured last at or before `moment` (this process's time.perf_counter()),
        the run start's for an agent not measured then."""
        chosen = dict(self.offsets)
        for measured_at, found in self.clock_history:
            if measured_at <= moment:
                chosen.update(found)
        return chosen

    def level_clocks(self, level_start: float, window_start: float) -> dict[str, Any]:
        """A level's row `clocks`: the last measurement before its measured window (taken before
        the level or, when the coordinator was busy at its start, in its warm-up): when, in
        seconds from the level's start (negative: before it), and each agent's offset and bound."""
        taken = [entry for entry in self.clock_history if entry[0] <= window_start] or self.clock_history[:1]
        measured_at, found = taken[-1]
        return {
            "measured_s": measured_at - level_start,
            "agents": {name: offset.to_dict() for name, offset in found.items()},  # those that answered
        }

    def lose(self, agent: Agent, cause: str) -> None:
        """A db or app agent stopped answering: its figures are not measured from now on (one line
        through `notify`, once)."""
        if agent.name in self.lost:
            return
        self.lost[agent.name] = cause
        self.notify(
            f"{agent.role} agent {agent.name} ({agent.address}) was lost: {cause}; its host's "
            "figures are not measured from now on, the run goes on"
        )

    def host_figures(self, start: float, end: float, wait: float = 2.0) -> dict[str, dict[str, Any]]:
        """Each db agent's host over [start, end] (this process's time.perf_counter()): the means of
        its per-second samples whose middle falls in the window, placed by the agent's clock
        offset measured before the level. An agent that has no sample in the window is left out;
        one lost (now or before) is marked `measured: false` with the cause, from then on."""
        figures: dict[str, dict[str, Any]] = {}
        offsets = self.clocks_at(start)
        for agent in self.of_role("db"):
            actor = self.actors.get(agent.name)
            if actor is None:
                continue
            if agent.name in self.lost:
                figures[agent.name] = self._not_measured(agent)
                continue
            offset = offsets[agent.name].offset
            deadline = time.monotonic() + wait  # the sample covering the window's end comes a second later
            while True:
                try:
                    samples = actor.samples().result(timeout=CALL_TIMEOUT)
                except Exception as exc:
                    self.lose(agent, _cause(exc))
                    break
                if any(sample["t1"] - offset >= end for sample in samples) or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            if agent.name in self.lost:
                figures[agent.name] = self._not_measured(agent)
                continue
            inside = [s for s in samples if start <= (s["t0"] + s["t1"]) / 2 - offset <= end]
            if not inside:
                continue
            mean = {key: sum(s[key] for s in inside) / len(inside) for key in HOST_KEYS}
            mean["busy"] = 100.0 - mean["idle"] - mean["iowait"]
            figures[agent.name] = {
                "role": agent.role,
                "samples": len(inside),
                "cores": agent.machine["cores"],
                **{key: mean[key] for key in ("usr", "sys", "iowait", "idle", "steal", "busy", "load1")},
                "memory_used_bytes": mean["memory_used"],
                "disk_write_bytes_per_s": sum(s["disk_write_bytes"] for s in inside)
                / max(sum(s["t1"] - s["t0"] for s in inside), 1e-9),
                "clock": offsets[agent.name].to_dict(),
            }
        return figures

    def _not_measured(self, agent: Agent) -> dict[str, Any]:
        return {"role": agent.role, "measured": False, "cause": f"agent lost: {self.lost[agent.name]}"}

    def of_role(self, role: str) -> list[Agent]:
        return [agent for agent in self.agents if agent.role == role]

    def machines(self) -> list[dict[str, Any]]:
        """The result's "machines": this coordinator, then each agent of the run, with its clock offset."""
        listed = [
            {"name": "coordinator", "role": "coordinator", **machine(), "clock": None},
        ]
        for agent in self.agents:
            if agent.name in self.offsets:
                offset = self.offsets[agent.name]
                listed.append(
                    {"name": agent.name, "role": agent.role, "address": agent.address, **agent.machine}
                    | {"clock": offset.to_dict()}
                )
        return listed


class ClusterFleet:
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
            raise AgentRefused(
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
        self._actors = {name: cluster.actors[name] for name in self.names}
        self._pending: dict[str, Any] = {}
        self._scheduled = spec.plan.scheduled()
        self._levels_run: dict[int, Level] = {level.index: level for level in self._scheduled}
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
            released = {
                name: self._actors[name].release(self.origin + self.cluster.offsets[name].offset)
                for name in self.names
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
                self._lose(name, _cause(exc), self._next_level if self._next_level < self._started else None)
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

    def start_level(self, planned: Level, start_delay: float = 0.5) -> Level:
        """As `Fleet.start_level`: a probe starts `start_delay` seconds from now on every machine
        (counted from the one run start, so the same instant everywhere)."""
        if planned.index < len(self._scheduled):
            return self._scheduled[planned.index]
        if planned.index != self._started:
            raise ValueError(f"the next level to start is number {self._started}, not {planned.index}")
        self.cluster.measure_clocks(skip=self.errors)  # before the probe, which starts after it
        self._clocked.add(planned.index)
        start = max(planned.start, time.perf_counter() - self.origin + start_delay)
        level = dataclasses.replace(planned, start=start)
        self._levels_run[level.index] = level
        self._started += 1
        sent = {name: self._actors[name].start_level(level) for name in self._alive()}
        for name, future in sent.items():
            self._answer(name, future, CALL_TIMEOUT)
        return level

    def end_schedule(self) -> None:
        if self._next_level < len(self._scheduled):
            self.stop()

    def level_events(self, index: int) -> Iterator[LevelDone | LiveView]:
        for event in self.events():
            yield event
            if isinstance(event, LevelDone) and event.index == index:
                return

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
                    self._lose(name, _cause(exc), self._next_level)
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
        agent = next(agent for agent in self.cluster.agents if agent.name == name)
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


def agents_of(described: dict[str, Any], names: dict[str, Any], mine: dict[str, str]) -> list[Agent]:
    """The dbladder agents among the workers that answered `describe` (by address; a worker that
    failed to answer, or a plain Dask worker without a role, is none), named as the scheduler
    knows them; AgentRefused, naming both versions, for one whose versions differ from `mine`."""
    agents = []
    for address, info in sorted(described.items()):
        if isinstance(info, BaseException) or info.get("role") is None:
            continue
        name = str(names.get(address) or info["name"])
        if info["versions"] != mine:
            raise AgentRefused(
                f"agent {name} runs {version_words(info['versions'])}, this coordinator "
                f"{version_words(mine)}: install the same versions on every machine"
            )
        agents.append(Agent(name, info["role"], address, info["machine"]))
    return agents


def _cause(exc: BaseException) -> str:
    """Why a call to an agent failed, in words."""
    if isinstance(exc, TimeoutError):
        return "did not answer in time (stopped or hung)"
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, OSError) or "lost" in text.lower():
        return f"its worker is gone ({text})"
    return f"{type(exc).__name__}: {text}"
