"""Dask's settings for dbladder's scheduler and agents, the versions that must match, a machine.

Measured on a 2-core VM (issue 24): an idle worker costs about 0.3 % of a core with the profiler
off and its wake-ups slowed (below); with the profiler on, it samples every thread 100 times a
second. A worker is not daemonic
so that it may start generator processes (multiprocessing refuses children to a daemonic
process), and one that stops heartbeating is dropped after 10 s rather than Dask's 5 minutes: a
hung load agent is then gone from the scheduler before a level's deadline has long passed.
"""

from __future__ import annotations

import os
import platform
import socket
from typing import Any

import psutil

from .. import __version__

WORKER_TTL = "10s"
CONNECT_WAIT = 3.0
"""Seconds a connection to a scheduler or an agent may take: an address that does not answer is
reported within a few seconds, not after Dask's 30."""
CONNECT_TIMEOUT = f"{CONNECT_WAIT:g}s"

DASK_SETTINGS: dict[str, Any] = {
    "distributed.worker.daemon": False,
    "distributed.worker.profile.enabled": False,
    "distributed.scheduler.worker-ttl": WORKER_TTL,
    "distributed.comm.timeouts.connect": CONNECT_TIMEOUT,
    "distributed.admin.system-monitor.gil.enabled": False,
    # An idle agent's wake-ups (docs/cluster.md, "A db agent's own cost"): Dask's event loop ticks
    # every 20 ms to notice a blocked loop, the worker reads its memory every 100 ms to pause or
    # spill data (an agent holds none) and the system monitor records the host every 500 ms for a
    # dashboard nobody opens. At those rates an idle agent took 1.8 % of a core; at these, 0.3 %.
    "distributed.admin.tick.interval": "1s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    # A task (an actor) must stay on the agent it was given to: never stolen by another machine.
    "distributed.scheduler.work-stealing": False,
}


VERSIONS_ENV = "DBLADDER_TEST_AGENT_VERSIONS"
"""Tests only (docs/cluster.md): NAME=VERSION,... an agent reports instead of its own, so that a
test on one installation can start an agent of another version."""


def versions() -> dict[str, str]:
    """What must be the same on the coordinator and every agent: dbladder, Dask, Python."""
    import dask
    import distributed

    return {
        "dbladder": __version__,
        "dask": dask.__version__,
        "distributed": distributed.__version__,
        "python": platform.python_version(),
    }


def agent_versions() -> dict[str, str]:
    """The versions an agent reports when it is asked what it is: its own (`versions`), but for
    those a test set in DBLADDER_TEST_AGENT_VERSIONS."""
    told = os.environ.get(VERSIONS_ENV, "")
    pairs = dict(pair.split("=", 1) for pair in told.split(",") if "=" in pair)
    return {
        **versions(),
        **{
            name: value
            for name, value in pairs.items()
            if name in ("dbladder", "dask", "distributed", "python")
        },
    }


def version_words(found: dict[str, str]) -> str:
    """ "dbladder 0.1.0, Dask 2026.8.0, Python 3.12.3"."""
    return f"dbladder {found['dbladder']}, Dask {found['dask']}, Python {found['python']}"


def machine() -> dict[str, Any]:
    """This machine as the result's "machines" list shows it (clock offset added by the coordinator)."""
    from ..observe.environment import environment

    described = environment(None, None)
    return {
        "host": socket.gethostname(),
        "cpu_model": described["cpu_model"],
        "cores": described["cpu_cores"],
        "memory_bytes": psutil.virtual_memory().total,
        "pid": os.getpid(),
    }
