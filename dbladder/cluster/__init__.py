"""Several machines: load from every load agent's machine, on Dask distributed (docs/cluster.md).

Dask is the control plane only: the coordinator (`dbladder run --cluster`) reaches each agent
(`dbladder agent`, a Dask worker) through the scheduler's cluster to start its fleet, set one run
start, send the levels and collect their snapshots; every request goes straight from a load
machine's generator processes to the target, as on one machine.

    settings.py     Dask's settings for dbladder (profiler off, non-daemonic worker, short TTL),
                    the versions that must match, what a machine is
    clocks.py       each agent's clock offset from the coordinator's, by the fastest of a few dozen pings
    agent.py        `dbladder agent`: the Dask worker and the actors of its role (LoadAgent, DbAgent)
    scheduler.py    `dbladder scheduler`: Dask's scheduler with dbladder's defaults
    security.py     TLS (`--tls DIR`, `--make-certs`) and the addresses refused in clear
    joining.py      what is checked on reaching the scheduler: TLS on both ends or neither (a probe),
                    and an agent's versions, refused at its join by `dbladder scheduler`
    coordinator.py  the run's side: find the agents, check them, their clocks, the db hosts' samples
    fleet.py        `ClusterFleet`: a Fleet over the load agents' machines

Nothing here imports Dask at import time but agent.py, scheduler.py, coordinator.py and fleet.py, which
only `--cluster`, `dbladder agent` and `dbladder scheduler` load (`require_dask` first): the
one-machine path never imports it.
"""

from __future__ import annotations

from ..errors import UsageError

INSTALL = "pip install 'dbladder[cluster]'"
ROLES = ("load", "app", "db")


class ClusterExtraMissing(UsageError):
    """A cluster option without Dask distributed installed."""


def require_dask(what: str = "--cluster") -> None:
    """Refuse, in one line saying what to install, when Dask distributed cannot be imported."""
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise ClusterExtraMissing(
            f"{what} needs Dask distributed, which is not installed here: {INSTALL}"
        ) from None
