"""Fixtures for managed-server tests: an isolated registry, and a skip when the programs are missing.

These tests start their own servers from the installed PostgreSQL and MariaDB programs; they do
not need (and never touch) the machine's shared servers. Without the programs they skip, saying
which Debian package to install; under DBLADDER_REQUIRE_SERVERS=1 that is a failure instead.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from managed_support import require_programs

from dbladder.servers.registry import ROOT_ENV


@pytest.fixture
def registry_dir(monkeypatch) -> Iterator[Path]:
    """A registry of this test's own, so that listings are exact and other work's servers unseen.

    Not under pytest's tmp_path: that is closed to other users (0700), and as root the servers run
    as postgres and mysql, who must reach their folders.
    """
    folder = Path(tempfile.mkdtemp(prefix="dbladder-test-servers-"))
    folder.chmod(0o755)
    monkeypatch.setenv(ROOT_ENV, str(folder))
    try:
        yield folder
    finally:
        leftovers = sorted(p.name for p in folder.iterdir())
        shutil.rmtree(folder, ignore_errors=True)
        assert not leftovers, f"managed servers left behind: {leftovers}"


@pytest.fixture
def programs():
    """`programs("mariadb")` skips the test (or fails it) unless that engine's programs can run."""
    return require_programs


@pytest.fixture(params=["postgresql", "mariadb"])
def engine(request) -> str:
    require_programs(request.param)
    return request.param
