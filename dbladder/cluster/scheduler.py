"""`dbladder scheduler`: Dask's own scheduler with dbladder's defaults (settings.py).

It listens only on the address it is given, loopback by default, and its HTTP server (Dask's
dashboard routes) on that address too, on a port of the system's choosing, never on all
interfaces.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path

import dask
from distributed import Scheduler

from .security import security
from .settings import DASK_SETTINGS

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


async def _serve(host: str, port: int, announce: Callable[[str], None], tls: Path | None) -> None:
    async with Scheduler(
        host=host,
        port=port,
        protocol="tls" if tls is not None else "tcp",
        security=security(tls),
        dashboard=False,
        dashboard_address=f"{host}:0",
    ) as scheduler:
        announce(f"scheduler listening on {scheduler.address}")
        await scheduler.finished()
