"""What SQLite was doing: the WAL's size, how much was written to it and checkpointed out of it,
and (from the service) how often a connection slept on the file lock.

SQLite has no server to ask and no counters of its own, and `PRAGMA wal_checkpoint` would run a
checkpoint rather than report one, so every reading looks at the files, taking no lock:
  * the -wal file's size (os.stat): it grows with writes and is not shrunk by a checkpoint
    (only by journal_size_limit or the last connection closing), so it is the WAL's high mark;
  * the wal-index header in the -shm file (SQLite's documented WAL format, "walformat.html"):
    `mxFrame`, the last frame in use; `nBackfill`, how many of them a checkpoint has copied back
    into the database; and the first salt, which SQLite adds one to each time a writer restarts
    the WAL from its beginning after a complete checkpoint. The header is kept twice; a reading
    whose two copies differ (caught mid-update) is taken again.
  * `counters`, when given: counts kept by the service (its /stats busy_waits).

A window's figures (`figures`): `wal_file_bytes_max`, `wal_file_bytes_end`, `wal_frames_max`
(frames in use, at the highest) and `wal_bytes_in_use_max` (times the page size), and over the
window `frames_appended`, `frames_checkpointed` and `wal_restarts` (a lower bound for the first
two when the WAL restarted between two readings), and the counters' differences (`busy_waits`).
A database not in WAL mode has only the counters.

Cost, at the default interval of 0.1 s (`python benchmarks/activity_cost.py sqlite`):
a reading (a stat and a 100-byte pread) costs 2 us of CPU,
nothing on any server; the sampler's thread used 0.33 % of a core over a 4 s round, its event
loop included.
"""

from __future__ import annotations

import itertools
import os
import struct
from collections.abc import Sequence
from typing import ClassVar

from ...errors import MissingDatabase
from ...urls import DatabaseURL
from ..activity import Counters, counter_differences, read_counters
from ..base import ActivityReading

# The wal-index header (48 bytes, native byte order, kept twice) and the checkpoint info after it.
HEADER = struct.Struct(
    "=III2BHII8x"
)  # iVersion, unused, iChange, isInit, bigEndCksum, szPage, mxFrame, nPage
HEADER_SIZE = 48
SALT_OFFSET = 32  # aSalt[0], stored as the WAL file holds it: big-endian
BACKFILL = struct.Struct("=I")  # nBackfill, right after the two header copies
READ_SIZE = 2 * HEADER_SIZE + BACKFILL.size
ATTEMPTS = 5
# A salt that jumps by more than this was not restarted in place but made anew (the WAL was deleted
# when the last connection closed, and the next one chose a random salt): count it as one restart.
MOST_RESTARTS_BETWEEN_READINGS = 1 << 16


class SQLiteActivity:
    """The `ActivityProbe` of SQLite; see the module doc."""

    engine: ClassVar[str] = "sqlite"
    default_interval: ClassVar[float] = 0.1

    def __init__(self, url: DatabaseURL, counters: Counters | None = None):
        self.path = os.path.abspath(url.path or "")
        self._counters = counters

    async def open(self) -> None:
        if not os.path.isfile(self.path):
            raise MissingDatabase(f"no SQLite file {self.path} to watch")

    async def read(self) -> ActivityReading:
        totals = wal_state(self.path)
        totals.update(read_counters(self._counters))
        return ActivityReading(0.0, {}, totals)

    async def close(self) -> None:
        pass

    def figures(self, readings: Sequence[ActivityReading]) -> dict[str, float]:
        inside = readings[1:]
        figures: dict[str, float] = {}
        sizes = [r.totals["wal_file_bytes"] for r in inside if "wal_file_bytes" in r.totals]
        if sizes:
            figures["wal_file_bytes_max"] = max(sizes)
            figures["wal_file_bytes_end"] = sizes[-1]
        walled = [r for r in readings if "wal_frames" in r.totals]
        if walled:
            frames = [r.totals["wal_frames"] for r in walled[1:] or walled]
            figures["wal_frames_max"] = max(frames)
            figures["wal_bytes_in_use_max"] = max(frames) * walled[-1].totals["page_size"]
            figures.update(wal_traffic(walled))
        figures.update(counter_differences(readings))
        return figures


def wal_state(path: str) -> dict[str, float]:
    """The WAL's file size and its wal-index header now; nothing when the database has no WAL."""
    try:
        size = os.stat(f"{path}-wal").st_size
    except FileNotFoundError:
        return {}
    state = {"wal_file_bytes": float(size)}
    try:
        fd = os.open(f"{path}-shm", os.O_RDONLY)
    except FileNotFoundError:
        return state
    try:
        for _ in range(ATTEMPTS):
            data = os.pread(fd, READ_SIZE, 0)
            if len(data) < READ_SIZE:
                return state
            if data[:HEADER_SIZE] == data[HEADER_SIZE : 2 * HEADER_SIZE]:
                break
        else:
            return state  # a writer was busy with it every time: leave this reading's out
    finally:
        os.close(fd)
    _, _, _, initialised, _, page_size, max_frame, _ = HEADER.unpack_from(data, 0)
    if not initialised:
        return state
    (backfilled,) = BACKFILL.unpack_from(data, 2 * HEADER_SIZE)
    (salt,) = struct.unpack_from(">I", data, SALT_OFFSET)
    state.update(
        wal_frames=float(max_frame),
        wal_backfilled=float(backfilled),
        wal_salt=float(salt),
        page_size=float(65536 if page_size == 1 else page_size),  # 65536 is stored as 1
    )
    return state


def wal_traffic(readings: Sequence[ActivityReading]) -> dict[str, float]:
    """Frames appended and checkpointed, and WAL restarts, summed over consecutive readings."""
    appended = checkpointed = restarts = 0.0
    for before, after in itertools.pairwise(readings):
        a, b = before.totals, after.totals
        jumped = (int(b["wal_salt"]) - int(a["wal_salt"])) % (1 << 32)
        if jumped == 0:
            appended += max(0.0, b["wal_frames"] - a["wal_frames"])
            checkpointed += max(0.0, b["wal_backfilled"] - a["wal_backfilled"])
            continue
        restarts += jumped if jumped <= MOST_RESTARTS_BETWEEN_READINGS else 1
        # A restart follows a complete checkpoint: the rest of the old WAL was copied back first;
        # then the new WAL holds what was written since (and checkpointed since), at least.
        checkpointed += max(0.0, a["wal_frames"] - a["wal_backfilled"]) + b["wal_backfilled"]
        appended += b["wal_frames"]
    return {"frames_appended": appended, "frames_checkpointed": checkpointed, "wal_restarts": restarts}
