"""The run's data on the machine of a cluster that holds it (docs/cluster.md): SQLite's file on
the app agent's machine, a server's database next to it on the db agent's.

On one machine the round seeds the data, takes the integrity check's baseline before the load and
checks every acknowledged write after it, and a comparison restores a snapshot (or re-seeds)
before every run (dbladder.data.fresh). With a cluster each of these runs on the agent that holds
the data, through its `run_here` (dbladder.cluster.sampled), as the round's preparation does:

    baseline = data_call(cluster, agent, "the integrity check's baseline", partial(baseline_here, config))
    section = integrity_on_agent(cluster, agent, config, ...)      # the same section, `checked_on` the agent
    fresh = FreshDataOnAgent(cluster, agent, key, url, config)     # a comparison's snapshot, kept there

A server's check runs on the db agent too, although the coordinator could reach the server: the
check then reads the data where it was seeded, by the same URL as that machine reaches it (the
only one every machine of the run is known to share), and the rows it reads back (every new
order and its items) never cross the network; only the acknowledged writes' compact records go
to the agent (48 bytes an order).

A failure there that is not the user's to fix in the data (the agent lost, an exception on its
machine) is `AgentDataFailed`, one line naming the agent; a DbladderError raised there (a
database that cannot be reached from that machine, say) keeps its own class and exit code.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from ..data.fresh import FreshData, FreshStart, Preparation
from ..engines.base import EngineInfo
from ..errors import DbladderError
from ..load.acknowledged import AcknowledgedWrites
from ..types import JsonObject
from ..urls import DatabaseURL
from ..workloads.base import DataSpec
from .config import RunConfig
from .integrity import IntegrityChecked, integrity_section, not_checked, take_baseline
from .preparation import Prepared, prepare_here

if TYPE_CHECKING:
    from ..cluster.coordinator import Agent, Cluster

T = TypeVar("T")

DATA_TIMEOUT = 3600.0
"""Seconds an agent may take for a piece of work on the data (seeding a large scale, reading
back every write of a long run, restoring a snapshot) before it counts as hung."""


class AgentDataFailed(DbladderError):
    """Work on the data on the agent that holds it failed there: the agent was lost, or the work
    raised on its machine (exit code 1)."""


def agent_words(agent: Agent) -> str:
    """ "app agent app-1 (10.0.0.4)": an agent as the run's lines and the result name it."""
    return f"{agent.role} agent {agent.name} ({agent.machine['host']})"


def on_agent(agent: Agent, what: str, call: Callable[[], T]) -> T:
    """`call` (a call to `agent`) and its answer; AgentDataFailed, in one line saying `what` failed
    where, when the agent is lost, hangs or the work raised there (a DbladderError raised there is
    the user's condition and keeps its class)."""
    from ..cluster.coordinator import cause_of  # only a cluster run imports Dask

    try:
        return call()
    except DbladderError:
        raise
    except Exception as exc:
        raise AgentDataFailed(f"{what} on {agent_words(agent)} failed: {cause_of(exc)}") from None


def data_call(cluster: Cluster, agent: Agent, what: str, work: Callable[[], T]) -> T:
    """`work` run on `agent`'s machine (its `run_here`) and what it returned (`on_agent`)."""
    return on_agent(agent, what, lambda: cluster.run_here(agent, work, timeout=DATA_TIMEOUT))


def prepare_on_agent(cluster: Cluster, agent: Agent, config: RunConfig) -> Prepared:
    """The round's preparation (seed, check the workload's SQL, describe the engine) on `agent`'s machine."""
    return data_call(cluster, agent, "preparing the data", functools.partial(prepare_here, config))


def baseline_here(config: RunConfig) -> object:
    """The integrity check's baseline, taken on the machine that calls it (the data's agent)."""
    return take_baseline(config.url, config.round_workload())


def baseline_on_agent(cluster: Cluster, agent: Agent, config: RunConfig) -> object:
    """The integrity check's baseline (before the load), taken on `agent`'s machine."""
    work = functools.partial(baseline_here, config)
    return data_call(cluster, agent, "the integrity check's baseline", work)


def integrity_here(
    config: RunConfig,
    data: DataSpec,
    acknowledged: AcknowledgedWrites,
    before: object,
    engine: EngineInfo,
    faults: Sequence[JsonObject],
) -> IntegrityChecked:
    """`integrity_section` on the machine that calls it (the data's agent)."""
    workload = config.round_workload()
    return integrity_section(config.url, workload, data, acknowledged, before, engine, faults)


def integrity_on_agent(
    cluster: Cluster,
    agent: Agent,
    config: RunConfig,
    prepared: Prepared,
    acknowledged: AcknowledgedWrites,
    before: object,
    faults: Sequence[JsonObject],
) -> IntegrityChecked:
    """The run's integrity check on `agent`'s machine, its section's `checked_on` naming it. When
    the agent fails there, a section that says it was not checked, a flag, and the failure."""
    work = functools.partial(
        integrity_here, config, prepared.data, acknowledged, before, prepared.engine, list(faults)
    )
    try:
        checked = data_call(cluster, agent, "the integrity check", work)
    except AgentDataFailed as exc:
        section = not_checked(str(exc), acknowledged.count + acknowledged.unreadable)
        return IntegrityChecked(section, (str(exc),), exc)
    return dataclasses.replace(checked, section={**checked.section, "checked_on": agent_words(agent)})


def fresh_here(url: str | DatabaseURL, config: RunConfig, verify: bool) -> FreshData:
    """A comparison's FreshData of `config`'s workload and data for `url`, made on the machine
    that calls it (the data's agent: seeded quietly, no progress crosses the cluster)."""
    workload = config.round_workload()
    data = DataSpec(config.seed or 0, workload.scaled_sizes(config.scale, config.sizes))
    return FreshData(url, workload, data, verify=verify)


def _prepare(fresh: FreshData) -> Preparation:
    return asyncio.run(fresh.prepare())


def _before_run(fresh: FreshData) -> FreshStart:
    return asyncio.run(fresh.before_run())


def _cleanup(fresh: FreshData) -> None:
    asyncio.run(fresh.cleanup())


class FreshDataOnAgent:
    """A comparison's fresh data kept on the agent that holds the data: seeded, its snapshot saved
    and restored before every run there (dbladder.data.fresh). The calls of FreshData that a
    comparison makes (`prepare`, `before_run`, `cleanup`), each one a call to the agent, which
    keeps the FreshData between them (`SampledAgent.keep`)."""

    def __init__(
        self,
        cluster: Cluster,
        agent: Agent,
        key: str,
        url: str | DatabaseURL,
        config: RunConfig,
        verify: bool = False,
    ):
        self.cluster, self.agent, self.key = cluster, agent, key
        make = functools.partial(fresh_here, url, config, verify)
        on_agent(agent, "making the fresh data", lambda: cluster.keep(agent, key, make, timeout=DATA_TIMEOUT))

    def _use(self, what: str, work: Callable[[FreshData], T]) -> T:
        return on_agent(
            self.agent, what, lambda: self.cluster.use(self.agent, self.key, work, timeout=DATA_TIMEOUT)
        )

    async def prepare(self) -> Preparation:
        """Seed there, save the snapshot and restore it once (FreshData.prepare)."""
        return await asyncio.to_thread(self._use, "seeding the data", _prepare)

    async def before_run(self) -> FreshStart:
        """The data as seeded again there: the snapshot restored, or the data re-seeded."""
        return await asyncio.to_thread(self._use, "restoring the data", _before_run)

    async def cleanup(self) -> None:
        """Drop the snapshot there and forget the FreshData; an agent already lost took nothing
        with it to drop here (its snapshot stays on its machine), so that is not an error."""
        with contextlib.suppress(AgentDataFailed):
            await asyncio.to_thread(self._use, "dropping the snapshot", _cleanup)
            forget = functools.partial(self.cluster.forget, self.agent, self.key, timeout=DATA_TIMEOUT)
            await asyncio.to_thread(on_agent, self.agent, "dropping the snapshot", forget)
