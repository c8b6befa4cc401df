"""The run's side of a cluster: find the agents and check them (`Cluster`), measure their clocks
(at the start and before each level), and read the db hosts' samples into the levels' windows.
The load agents' fleets as one are `fleet.py`'s `ClusterFleet`.

A db or app agent that stops answering does not stop the run: its figures are "not measured"
from then on (`Cluster.lose`).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Collection, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import dask
from distributed import Actor, Client

from ..errors import DbladderError
from . import clocks
from .agent import LoadAgent, SchedulerUnreachable, describe
from .joining import VersionsDiffer, check_tls
from .sampled import AppAgent, DbAgent, window_figures
from .security import security
from .settings import CONNECT_TIMEOUT, CONNECT_WAIT, DASK_SETTINGS, machine, version_words, versions

T = TypeVar("T")

ACTORS: dict[str, type] = {"load": LoadAgent, "db": DbAgent, "app": AppAgent}
SAMPLED = ("db", "app")
"""The roles whose agents sample their host."""
CALL_TIMEOUT = 15.0
"""Seconds a short call to an agent (a start, a level, a stop) may take."""
PING_TIMEOUT = 3.0
"""Seconds a clock ping may take during the run (a round trip is a few ms): a stopped agent holds
the coordinator's loop this long at most."""
CLOCK_LEAD = 1.0
"""Seconds before a level's start at which the coordinator measures the clocks for it."""


class NoAgentOfRole(DbladderError):
    """The run needs an agent of a role (a load agent) that no agent connected to the scheduler has."""


@dataclass(frozen=True)
class Agent:
    """One dbladder agent connected to the scheduler."""

    name: str
    role: str
    address: str
    machine: dict[str, Any]


class Cluster:
    """The coordinator's connection to a scheduler and its agents; a context manager.

    Entering connects (a scheduler that does not answer, or that speaks TLS when this end does not
    or the reverse: one line within a few seconds), finds the dbladder agents among the workers,
    refuses any whose versions differ from this coordinator's, places an actor on each agent of
    the roles the run uses, and measures each one's clock offset.
    """

    def __init__(
        self,
        address: str,
        roles: tuple[str, ...] = ("load", "app", "db"),
        tls: Path | None = None,
        place: bool = True,
        db_url: str | None = None,
        sample: bool = True,
    ):
        self._address = address
        self._tls = tls
        self._placing = place
        """False: only connect and check the agents (a comparison's check before it seeds)."""
        self._roles = roles
        self._sample = sample
        """False: the db and app agents do not sample their hosts (a comparison's hold on its data)."""
        self._db_url = db_url
        """The run's database as every machine reaches it: a db agent samples its server's processes."""
        self._found: dict[str, dict[str, Any]] = {}
        """How each db agent found the database server's processes on its host (how, warning, pid)."""
        self._client: Client | None = None
        self._agents: tuple[Agent, ...] = ()
        self._actors: dict[str, Actor] = {}
        self._offsets: dict[str, clocks.ClockOffset] = {}
        self._lost: dict[str, str] = {}
        """Agents of other roles than load that stopped answering, by name: why (their figures
        are not measured from then on)."""
        self._clock_history: list[tuple[float, dict[str, clocks.ClockOffset]]] = []
        """Every measurement of the agents' clock offsets: when (this process's
        time.perf_counter()) and each agent's offset; the first is the run start's (`offsets`)."""
        self._notify: Callable[[str], None] = lambda line: None
        """Where a line goes when an agent other than a load agent is lost (the run's progress)."""
        self._futures: list[Any] = []  # an actor lives while its future is held

    def __enter__(self) -> Cluster:
        dask.config.set(DASK_SETTINGS)
        # A scheme or certificate mismatch, said as such; a scheduler still starting waited for.
        if not check_tls(self._address, self._tls, wait=CONNECT_WAIT):
            raise SchedulerUnreachable(
                f"no scheduler answered at {self._address} within {CONNECT_WAIT:g} s: start one "
                "there with `dbladder scheduler`, or check the address"
            )
        try:
            self._client = Client(
                self._address,
                timeout=CONNECT_TIMEOUT,
                direct_to_workers=True,
                set_as_default=True,
                security=security(self._tls),
            )
        except (OSError, TimeoutError) as exc:
            raise SchedulerUnreachable(
                f"no scheduler answered at {self._address} ({exc or type(exc).__name__}): start one "
                "there with `dbladder scheduler`, or check the address"
            ) from None
        try:
            self._agents = tuple(self._find_agents())
            if "load" in self._roles and not self.of_role("load"):
                raise NoAgentOfRole(
                    f"no load agent is connected to {self._address}: start one on each load machine with "
                    f"`dbladder agent --scheduler {self._address} --role load`"
                )
            if not self._placing:
                return self
            for agent in self._agents:
                if agent.role in self._roles:
                    self._actors[agent.name] = self._place(ACTORS[agent.role], agent)
            for agent in self._agents:
                if agent.name in self._actors:
                    self._offsets[agent.name] = self.measure(agent)
            self._clock_history.append((time.perf_counter(), dict(self._offsets)))
            for agent in self.of_role("db") if self._sample else ():
                if agent.name in self._actors:
                    self._found[agent.name] = self._call(agent.name, "start", self._db_url)
            for agent in self.of_role("app") if self._sample else ():
                if agent.name in self._actors:
                    self._call(agent.name, "start")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        for agent in self.of_role("db"):  # its sampling thread would outlive the actor otherwise
            if agent.name in self._actors and agent.name not in self._lost:
                with contextlib.suppress(Exception):
                    self._actors[agent.name].stop().result(timeout=PING_TIMEOUT)
        if self._client is not None:
            self._client.close(timeout=5)
            self._client = None

    def _find_agents(self) -> list[Agent]:
        assert self._client is not None
        described = self._client.run(describe, on_error="return")
        workers = self._client.scheduler_info()["workers"]
        names = {address: worker.get("name") for address, worker in workers.items()}
        return agents_of(described, names, versions())

    def _place(self, cls: type, agent: Agent) -> Any:
        """An actor of `cls` on `agent`, never moved to another worker."""
        assert self._client is not None
        future = self._client.submit(
            cls,
            workers=[agent.address],
            allow_other_workers=False,
            actor=True,
            pure=False,
            key=f"{cls.__name__}-{agent.name}-{uuid.uuid4().hex[:8]}",
        )
        self._futures.append(future)
        return future.result(timeout=CALL_TIMEOUT)

    def _call(self, name: str, method: str, *args: Any, timeout: float = CALL_TIMEOUT) -> Any:
        """Call `method` of agent `name`'s actor and wait for its answer (bounded)."""
        return getattr(self._actors[name], method)(*args).result(timeout=timeout)

    # What the run reads of the cluster: each a copy, or a value that does not change once entered.

    @property
    def address(self) -> str:
        """The scheduler's address, as the run was given it."""
        return self._address

    @property
    def agents(self) -> tuple[Agent, ...]:
        """The dbladder agents connected to the scheduler, found on entering."""
        return self._agents

    def agent(self, name: str) -> Agent:
        """The agent named `name` (KeyError: none of that name)."""
        for agent in self._agents:
            if agent.name == name:
                return agent
        raise KeyError(name)

    def actor(self, name: str) -> Actor:
        """The actor placed on agent `name` (KeyError: none placed), whose calls answer with a
        future: for the load agents' fleet (fleet.py), which waits on several at once."""
        return self._actors[name]

    def offsets(self) -> dict[str, clocks.ClockOffset]:
        """Each placed agent's clock offset measured on entering, by name."""
        return dict(self._offsets)

    def lost_agents(self) -> dict[str, str]:
        """The db and app agents that stopped answering, by name: why."""
        return dict(self._lost)

    def servers_found(self) -> dict[str, dict[str, Any]]:
        """How each db agent found the database server's processes on its host (how, warning,
        pid), by name."""
        return {name: dict(found) for name, found in self._found.items()}

    def notify_losses(self, notify: Callable[[str], None]) -> None:
        """Where a line goes from now on when a db or app agent is lost (the run's progress)."""
        self._notify = notify

    # The agents' calls, each a method: what the run asks of an agent, by what it does.

    def run_here(self, agent: Agent, work: Callable[[], T], timeout: float = CALL_TIMEOUT) -> T:
        """`work` run on `agent`'s machine (a db or app agent's `run_here`) and what it returned."""
        answer: T = self._call(agent.name, "run_here", work, timeout=timeout)
        return answer

    def keep(self, agent: Agent, key: str, make: Callable[[], object], timeout: float = CALL_TIMEOUT) -> None:
        """`make()` made on `agent`'s machine and kept there under `key` (`SampledAgent.keep`)."""
        self._call(agent.name, "keep", key, make, timeout=timeout)

    def use(self, agent: Agent, key: str, work: Callable[[Any], T], timeout: float = CALL_TIMEOUT) -> T:
        """`work` of what `agent` keeps under `key`, run there, and what it returned."""
        answer: T = self._call(agent.name, "use", key, work, timeout=timeout)
        return answer

    def forget(self, agent: Agent, key: str, timeout: float = CALL_TIMEOUT) -> None:
        """What `agent` keeps under `key` dropped."""
        self._call(agent.name, "forget", key, timeout=timeout)

    def on_service(self, agent: Agent, work: Callable[[Any], T], timeout: float = CALL_TIMEOUT) -> T:
        """`work` of the service the app agent `agent` runs (dbladder.service's RunningService),
        run there (a fault), and what it returned."""
        answer: T = self._call(agent.name, "on_service", work, timeout=timeout)
        return answer

    @contextlib.contextmanager
    def service_on(
        self, agent: Agent, start: Callable[[], AbstractContextManager[object]]
    ) -> Iterator[tuple[dict[str, Any], Callable[[], dict[str, Any]]]]:
        """The service started on the app agent `agent` for the block, stopped after it, also on
        error: where it listens, and a reader of its `/stats`."""
        started = self._call(agent.name, "serve", start, timeout=90.0)
        try:
            yield started, lambda: self._call(agent.name, "stats")
        finally:
            with contextlib.suppress(Exception):  # an agent gone has taken its service with it
                self._call(agent.name, "stop_service", timeout=60.0)

    @contextlib.contextmanager
    def route_on(
        self, agent: Agent, start: Callable[[], AbstractContextManager[T]], timeout: float
    ) -> Iterator[T]:
        """The service's route to the database made on the app agent `agent` for the block, undone
        after it, also on error: what the route yields there (`timeout`: the seconds its round
        trips may take to measure). At the end the yielded object is brought up to date in place
        with the agent's, as the route left it there (a relay's stats are added as it stops)."""
        route: T = self._call(agent.name, "open_route", start, timeout=timeout)
        try:
            yield route
        finally:
            with contextlib.suppress(Exception):  # an agent gone has taken its relay with it
                ended = self._call(agent.name, "close_route", timeout=60.0)
                if ended is not None and ended is not route:
                    vars(route).update(vars(ended))

    def placed(self, role: str) -> list[Agent]:
        """The agents of `role` the run placed an actor on (those it may call)."""
        return [agent for agent in self.of_role(role) if agent.name in self._actors]

    def data_agent(self, has_server: bool) -> Agent | None:
        """The agent on whose machine the run's data is seeded: a server's on the db agent's
        machine, SQLite's on the app agent's (where the service opens the file); None: here."""
        agents = self.of_role("db" if has_server else "app")
        return agents[0] if agents and agents[0].name in self._actors else None

    def app_agent(self) -> Agent | None:
        """The agent the service runs on (the first app agent), or None: no app agent."""
        agents = self.of_role("app")
        return agents[0] if agents and agents[0].name in self._actors else None

    def measure(self, agent: Agent, timeout: float = CALL_TIMEOUT) -> clocks.ClockOffset:
        """The agent's clock offset from this process's, by the fastest of a few dozen pings."""
        actor = self._actors[agent.name]
        return clocks.measure(lambda: actor.clock().result(timeout=timeout))

    def measure_clocks(self, skip: Collection[str] = ()) -> dict[str, clocks.ClockOffset]:
        """Every agent's clock offset now (before a level), kept in `clock_history`. An agent that
        does not answer is left out: a db or app agent is then lost; a load agent, not in `skip`
        (those already lost), is the fleet's to strike the level for (its poll finds it gone)."""
        found = {}
        for agent in self._agents:
            if agent.name not in self._actors or agent.name in self._lost or agent.name in skip:
                continue
            try:
                found[agent.name] = self.measure(agent, timeout=PING_TIMEOUT)
            except Exception as exc:
                if agent.role != "load":
                    self.lose(agent, cause_of(exc))
        self._clock_history.append((time.perf_counter(), found))
        return found

    def clocks_at(self, moment: float) -> dict[str, clocks.ClockOffset]:
        """The offsets measured last at or before `moment` (this process's time.perf_counter()),
        the run start's for an agent not measured then."""
        chosen = dict(self._offsets)
        for measured_at, found in self._clock_history:
            if measured_at <= moment:
                chosen.update(found)
        return chosen

    def level_clocks(self, level_start: float, window_start: float) -> dict[str, Any]:
        """A level's row `clocks`: the last measurement before its measured window (taken before
        the level or, when the coordinator was busy at its start, in its warm-up): when, in
        seconds from the level's start (negative: before it), and each agent's offset and bound."""
        taken = [entry for entry in self._clock_history if entry[0] <= window_start] or self._clock_history[
            :1
        ]
        measured_at, found = taken[-1]
        return {
            "measured_s": measured_at - level_start,
            "agents": {name: offset.to_dict() for name, offset in found.items()},  # those that answered
        }

    def lose(self, agent: Agent, cause: str) -> None:
        """A db or app agent stopped answering: its figures are not measured from now on (one line
        through `notify`, once)."""
        if agent.name in self._lost:
            return
        self._lost[agent.name] = cause
        self._notify(
            f"{agent.role} agent {agent.name} ({agent.address}) was lost: {cause}; its host's "
            "figures are not measured from now on, the run goes on"
        )

    def host_figures(self, start: float, end: float, wait: float = 2.0) -> dict[str, dict[str, Any]]:
        """Each db and app agent's host over [start, end] (this process's time.perf_counter()): the means of
        its per-second samples whose middle falls in the window, placed by the agent's clock
        offset measured before the level. An agent that has no sample in the window is left out;
        one lost (now or before) is marked `measured: false` with the cause, from then on."""
        figures: dict[str, dict[str, Any]] = {}
        offsets = self.clocks_at(start)
        for agent in [agent for agent in self._agents if agent.role in SAMPLED]:
            actor = self._actors.get(agent.name)
            if actor is None:
                continue
            if agent.name in self._lost:
                figures[agent.name] = self._not_measured(agent)
                continue
            offset = offsets[agent.name].offset
            # The agent takes the sample covering the window's end when asked; until then, or from an
            # agent whose sampler has stopped, it would come at the next tick.
            deadline = time.monotonic() + wait
            while True:
                try:
                    samples = actor.samples(end + offset).result(timeout=CALL_TIMEOUT)
                except Exception as exc:
                    self.lose(agent, cause_of(exc))
                    break
                if any(sample["t1"] - offset >= end for sample in samples) or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            if agent.name in self._lost:
                figures[agent.name] = self._not_measured(agent)
                continue
            window = window_figures(samples, offset, start, end)
            if window is not None:
                figures[agent.name] = {
                    "role": agent.role,
                    "cores": agent.machine["cores"],
                    **window,
                    "clock": offsets[agent.name].to_dict(),
                }
        return figures

    def _not_measured(self, agent: Agent) -> dict[str, Any]:
        return {"role": agent.role, "measured": False, "cause": f"agent lost: {self._lost[agent.name]}"}

    def of_role(self, role: str) -> list[Agent]:
        return [agent for agent in self._agents if agent.role == role]

    def machines(self) -> list[dict[str, Any]]:
        """The result's "machines": this coordinator, then each agent of the run, with its clock offset."""
        listed = [
            {"name": "coordinator", "role": "coordinator", **machine(), "clock": None},
        ]
        for agent in self._agents:
            if agent.name in self._offsets:
                offset = self._offsets[agent.name]
                listed.append(
                    {"name": agent.name, "role": agent.role, "address": agent.address, **agent.machine}
                    | {"clock": offset.to_dict()}
                )
        return listed


def agents_of(described: dict[str, Any], names: dict[str, Any], mine: dict[str, str]) -> list[Agent]:
    """The dbladder agents among the workers that answered `describe` (by address; a worker that
    failed to answer, or a plain Dask worker without a role, is none), named as the scheduler
    knows them; VersionsDiffer, naming both versions, for one whose versions differ from `mine`."""
    agents = []
    for address, info in sorted(described.items()):
        if isinstance(info, BaseException) or info.get("role") is None:
            continue
        name = str(names.get(address) or info["name"])
        if info["versions"] != mine:
            raise VersionsDiffer(
                f"agent {name} runs {version_words(info['versions'])}, this coordinator "
                f"{version_words(mine)}: install the same versions on every machine"
            )
        agents.append(Agent(name, info["role"], address, info["machine"]))
    return agents


def cause_of(exc: BaseException) -> str:
    """Why a call to an agent failed, in words."""
    if isinstance(exc, TimeoutError):
        return "did not answer in time (stopped or hung)"
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, OSError) or "lost" in text.lower():
        return f"its worker is gone ({text})"
    return f"{type(exc).__name__}: {text}"
