"""Helpers for tests that start managed servers: tests/servers, and the faults and SIGTERM tests."""

from __future__ import annotations

import os

import pytest

from dbladder.servers import ServerBinariesMissing, ServerUserMissing, kind_for


def require_programs(engine: str) -> None:
    """Skip (under DBLADDER_REQUIRE_SERVERS=1: fail) unless the engine's server programs can run."""
    kind = kind_for(engine)
    try:
        kind.find_binaries()
        kind.os_user()
    except (ServerBinariesMissing, ServerUserMissing) as exc:
        if os.environ.get("DBLADDER_REQUIRE_SERVERS") == "1":
            pytest.fail(f"{exc}; DBLADDER_REQUIRE_SERVERS=1 makes this a failure", pytrace=False)
        pytest.skip(str(exc))
