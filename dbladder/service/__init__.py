"""The web service: one app, a workload's routes, in front of SQLite, PostgreSQL or MariaDB.

    from dbladder.service import ServiceConfig, running_service

    with running_service(ServiceConfig("sqlite:///shop.db", port=0, workers=2)) as service:
        service.request("GET", "/products/1")

Modules: `config` (ServiceConfig), `responses` (router and JSON answers), `app` (the RSGI app
that mounts the workload's operations), `writer` (the single SQLite writer), `stats`
(counters shared by the processes), `server` (serve, running_service), `consistency` (the
two-instance check).
"""

from __future__ import annotations

from .config import ServiceConfig
from .server import DecodedAnswer, RunningService, ServiceStarted, check_database, running_service, serve

__all__ = [
    "DecodedAnswer",
    "RunningService",
    "ServiceConfig",
    "ServiceStarted",
    "check_database",
    "running_service",
    "serve",
]
