"""`dbladder scheduler`: Dask's own scheduler with dbladder's defaults (settings.py).

It listens only on the address it is given, loopback by default, and its HTTP server (Dask's
dashboard routes) on that address too, on a port of the system's choosing, never on all
interfaces.

It refuses an agent whose dbladder, Dask or Python versions are not its own when the agent
registers (joining.py): the agent never joins, it says why and exits, and the scheduler logs one
line. Overriding the registration's handler is the only place Dask lets a scheduler refuse a
worker with a reason the worker reads: a SchedulerPlugin's `add_worker` is called once the worker
is registered, and the reply is "OK" whatever it does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dask
from distributed import Scheduler

from .joining import refusal, refusal_line, reported_versions
from .security import security
from .settings import DASK_SETTINGS, versions

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8786  # Dask's own


def run_scheduler(host: str, port: int, announce: Callable[[str], None], tls: Path | None = None) -> None:
    """Serve as the cluster's scheduler until Ctrl-C (or SIGTERM, which the CLI turns into it);
    over TLS (tls://) with the files in `tls` (dbladder.cluster.security)."""
    dask.config.set(DASK_SETTINGS)
    dask.config.set({"distributed.scheduler.http.routes": []})  # no dashboard: nothing to serve
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(host, port, announce, tls))


class VersionCheckingScheduler(Scheduler):
    """Dask's scheduler, refusing at registration a worker whose reported dbladder versions differ."""

    def __init__(self, *args: Any, announce: Callable[[str], None], **kwargs: Any):
        self._announce = announce
        self._versions = versions()
        super().__init__(*args, **kwargs)

    async def add_worker(self, comm: Any, **registration: Any) -> None:
        theirs = reported_versions(registration.get("extra"))
        if theirs is None or theirs == self._versions:  # a plain Dask worker reports none: let in
            await super().add_worker(comm, **registration)
            return
        self._announce(
            refusal_line(
                str(registration.get("name")), str(registration.get("address")), theirs, self._versions
            )
        )
        await comm.write(refusal(self._versions))  # the worker closes the connection on it, unregistered


async def _serve(host: str, port: int, announce: Callable[[str], None], tls: Path | None) -> None:
    async with VersionCheckingScheduler(
        announce=announce,
        host=host,
        port=port,
        protocol="tls" if tls is not None else "tcp",
        security=security(tls),
        dashboard=False,
        dashboard_address=f"{host}:0",
    ) as scheduler:
        announce(f"scheduler listening on {scheduler.address}")
        await scheduler.finished()
