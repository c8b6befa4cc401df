"""The agents that sample their machine: a db agent on the database's host, an app agent on the
service's (docs/cluster.md).

Both sample their host every second with the one-machine sampler (dbladder.observe.sampler), on
this agent's clock, so the coordinator places each sample in a level's window by the agent's
clock offset. The db agent also samples the database server's processes, found on its host by the
URL's port or socket as one machine finds them (dbladder.observe.database): the postmaster and its
backends, or mariadbd. The app agent runs the service (started and stopped there, its `/stats`
read there, its faults caused there) and samples its session, and holds the service's route to
the database open around it (`--transport`, and the latency relay of `--added-latency`, made on
its machine). Either one seeds the data where the engine keeps it (a server's database from the
db host, SQLite's file on the app host, where the service opens it), takes the integrity check's
baseline and checks every acknowledged write there, and keeps a comparison's snapshot there to
restore before each run.

The round's own functions do the work (dbladder.run: its preparation, the service, the route and
its round trips): the coordinator sends them by reference, so this package never imports the round.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from ..errors import DbladderError
from ..observe.database import database_processes
from ..observe.processes import Resolver, session
from ..observe.sampler import Sampler
from . import clocks

HOST_KEYS = ("usr", "sys", "iowait", "idle", "steal", "load1", "memory_used")
"""A db or app agent's per-second sample fields that a level's window averages."""
GROUP_KEYS = ("database_cpu_pct", "service_cpu_pct")
"""The process groups' CPU a db agent (the database server's) or an app agent (the service's)
samples, averaged over a level's window when the agent has them."""


class ServiceNotRunning(DbladderError):
    """A call about the service to an app agent that runs none."""


class SampledAgent:
    """An actor that samples its host, and the process groups its role gives, every second."""

    def __init__(self) -> None:
        self._sampler: Sampler | None = None
        self._kept: dict[str, Any] = {}

    async def clock(self) -> float:
        """This machine's clock (async: answered on the worker's loop, with no thread hop)."""
        return clocks.agent_clock()

    def _sample(self, groups: dict[str, Resolver], interval: float) -> None:
        if self._sampler is not None:
            self._sampler.stop()
        self._sampler = Sampler(groups, interval=interval, clock=clocks.agent_clock)
        self._sampler.start()

    def samples(self, through: float | None = None) -> list[dict[str, Any]]:
        """Every sample so far (a run's worth is a few hundred): its bounds on this agent's clock,
        the host's figures and each group's CPU (% of one CPU) as <group>_cpu_pct. Given `through`
        (a moment on this agent's clock, a level's end), a sample ending at or after it is taken
        first if none does yet, so the level's figures need not wait for the next tick."""
        if self._sampler is None:
            return []
        if through is not None:
            self._sampler.cover(through)
        return [
            {
                "t0": sample.start,
                "t1": sample.t,
                **dataclasses.asdict(sample.host),
                **{f"{name}_cpu_pct": group.cpu_pct for name, group in sample.groups.items()},
            }
            for sample in self._sampler.samples()
        ]

    def warnings(self) -> list[str]:
        return list(self._sampler.warnings) if self._sampler is not None else []

    def run_here(self, work: Callable[[], Any]) -> Any:
        """Run a function of the round on this machine (the data's preparation, a round trip to
        the database, a fault on the database server) and hand back what it returns."""
        return work()

    def keep(self, key: str, make: Callable[[], Any]) -> None:
        """Make something on this machine and keep it under `key` between the coordinator's calls
        (a comparison's fresh data: its snapshot's token, how its runs get their data)."""
        self._kept[key] = make()

    def use(self, key: str, work: Callable[[Any], Any]) -> Any:
        """`work` of what is kept under `key`, on this machine, and what it returns."""
        return work(self._kept[key])

    def forget(self, key: str) -> None:
        self._kept.pop(key, None)

    def stop(self) -> None:
        if self._sampler is not None:
            self._sampler.stop()


class DbAgent(SampledAgent):
    """A Dask actor on a db agent: the host and the database server's processes."""

    def start(self, db_url: str | None = None, interval: float = 1.0) -> dict[str, Any]:
        """Sample from now on; with `db_url`, its server's processes too (found on this host by
        the URL's port or socket). How they were found, and a warning when not reliably."""
        if db_url is None:
            self._sample({}, interval)
            return {"how": None, "warning": None}
        found = database_processes(db_url)  # followed across a kill or restart of the server
        # SQLite has no server, and one not found would read 0 %: then the host's figures only.
        self._sample({"database": found.resolve} if found.root_pid is not None else {}, interval)
        return {"how": found.how, "warning": found.warning, "pid": found.root_pid}


class Held:
    """A context manager an agent holds open between the coordinator's calls: what it yielded,
    until closed (a service, a route)."""

    def __init__(self) -> None:
        self.value: Any = None
        self._stack = contextlib.ExitStack()

    def open(self, start: Callable[[], AbstractContextManager[Any]]) -> Any:
        """Close what is held, then enter `start()` and hold it: what it yields."""
        self.close()
        self.value = self._stack.enter_context(start())
        return self.value

    def close(self) -> Any:
        """Exit what is held, if anything: what it yielded (None when nothing was held)."""
        value, self.value = self.value, None
        self._stack.close()
        self._stack = contextlib.ExitStack()
        return value


class AppAgent(SampledAgent):
    """A Dask actor on an app agent: the service runs here, and its session is sampled."""

    def __init__(self) -> None:
        super().__init__()
        self._service = Held()
        self._route = Held()

    def start(self, interval: float = 1.0) -> dict[str, Any]:
        self._sample({"service": self._service_processes}, interval)
        return {"how": "the service's session", "warning": None}

    def _service_processes(self) -> list[int]:
        service = self._service.value
        return session(service.pid)() if service is not None else []

    def serve(self, start: Callable[[], AbstractContextManager[Any]]) -> dict[str, Any]:
        """Start the service on this machine (`start`: the round's `running_service` of its
        config); where it listens once every worker answers."""
        service = self._service.open(start)
        config = service.config
        return {"url": service.url, "host": config.host, "port": config.port}

    def stats(self) -> dict[str, Any]:
        """The service's `/stats`, read on this machine."""
        if self._service.value is None:
            raise RuntimeError("the app agent runs no service: serve first")
        return self._service.value.stats()

    def on_service(self, work: Callable[[Any], Any]) -> Any:
        """Run a function of the round on this machine with the service it runs (a fault: kill it,
        restart it, kill its SQLite writer, by its PIDs here) and hand back what it returns."""
        if self._service.value is None:
            raise ServiceNotRunning("the app agent runs no service: serve first")
        return work(self._service.value)

    def stop_service(self) -> None:
        """Stop the service (every process of it), if one runs."""
        self._service.close()

    def open_route(self, start: Callable[[], AbstractContextManager[Any]]) -> Any:
        """Make the service's route to the database on this machine (`start`: the round's
        `database_route` of its URL, transport and added latency): the relay, if any, runs here
        until `close_route`; what the route yields (its URL as this machine reaches it, and its
        description, the round trips measured here)."""
        return self._route.open(start)

    def close_route(self) -> Any:
        """Undo the route (stop its relay, if one runs); what it yielded, now with the figures a
        route adds when it ends (the relay's stats), or None when no route was open."""
        return self._route.close()

    def stop(self) -> None:
        self.stop_service()
        self.close_route()  # after the service: the relay outlives it, as on one machine
        super().stop()


def window_figures(
    samples: list[dict[str, Any]], offset: float, start: float, end: float
) -> dict[str, Any] | None:
    """The means of the samples whose middle falls in [start, end] (the coordinator's clock; the
    samples' is the agent's, `offset` ahead), or None when none does."""
    inside = [s for s in samples if start <= (s["t0"] + s["t1"]) / 2 - offset <= end]
    if not inside:
        return None
    keys = [*HOST_KEYS, *(key for key in GROUP_KEYS if all(key in s for s in inside))]
    mean = {key: sum(s[key] for s in inside) / len(inside) for key in keys}
    mean["busy"] = 100.0 - mean["idle"] - mean["iowait"]
    return {
        "samples": len(inside),
        **{key: mean[key] for key in ("usr", "sys", "iowait", "idle", "steal", "busy", "load1")},
        "memory_used_bytes": mean["memory_used"],
        "disk_write_bytes_per_s": sum(s["disk_write_bytes"] for s in inside)
        / max(sum(s["t1"] - s["t0"] for s in inside), 1e-9),
        **{key: mean[key] for key in GROUP_KEYS if key in mean},
    }
