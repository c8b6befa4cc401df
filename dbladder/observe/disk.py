"""How many times a second the disk under the data can make a small write durable, measured once.

A durable commit waits for at least one fsync (SQLite in WAL mode with synchronous=FULL syncs
the WAL at every commit; PostgreSQL and MariaDB sync their logs, several commits to one sync
when they can group them), so a single writer that commits one transaction per fsync cannot go
faster than this rate. The probe writes a page at the end of a small file in the data's folder
and syncs it, over and over, for about `seconds`: the WAL's own pattern (an append, then a sync
of the data and the new size). The file goes back to the start every PAGES_PER_PASS pages, so
it never grows past a megabyte, and it is removed afterwards.

fdatasync, as SQLite uses on Linux; an append changes the file's size, which fdatasync must
make durable too, so it costs what a commit's sync costs.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .environment import seconds_setting

PAGE = 4096
PAGES_PER_PASS = 256  # 1 MiB, then back to the start
DEFAULT_SECONDS = 1.0
PROBE_SECONDS_VARIABLE = "DBLADDER_FSYNC_PROBE_SECONDS"
"""Overrides DEFAULT_SECONDS for a run's probe: a short one for many short runs (the test suite
sets 0.2; a test of the rate itself sets its own)."""


def probe_seconds() -> float:
    """How long a run's probe syncs, or UsageError naming the bad setting."""
    return seconds_setting(PROBE_SECONDS_VARIABLE, DEFAULT_SECONDS, 0.05, 10)


@dataclass(frozen=True)
class FsyncRate:
    """Syncs per second of small appends in `folder`: `syncs` of them in `seconds`."""

    folder: str
    syncs: int
    seconds: float

    @property
    def per_second(self) -> float:
        return self.syncs / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "per_second": self.per_second}


def fsync_rate(
    folder: str | Path,
    seconds: float = DEFAULT_SECONDS,
    *,
    clock: Callable[[], float] = time.perf_counter,
) -> FsyncRate:
    """Append a page and fdatasync it, again and again for about `seconds`, in a temporary file in
    `folder`; how many syncs that was and how long it took. A disk slower than one sync in
    `seconds` still gives one (the probe always finishes the sync it started)."""
    if not seconds > 0:
        raise ValueError(f"seconds must be above 0, not {seconds!r}")
    page = b"\0" * PAGE
    fd, name = tempfile.mkstemp(prefix=".dbladder-fsync-", dir=folder)
    try:
        syncs = 0
        began = clock()
        while True:
            offset = (syncs % PAGES_PER_PASS) * PAGE
            if offset == 0 and syncs:
                os.ftruncate(fd, 0)  # back to appending from the start, as a restarted WAL
            os.pwrite(fd, page, offset)
            os.fdatasync(fd)
            syncs += 1
            elapsed = clock() - began
            if elapsed >= seconds:
                return FsyncRate(str(folder), syncs, elapsed)
    finally:
        os.close(fd)
        os.unlink(name)
