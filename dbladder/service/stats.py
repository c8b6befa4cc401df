"""Counters shared by the service's processes, summed by `GET /stats`.

One small file, mapped into every process: a slot per process, each written only by its owner,
so no counter needs a lock. A process claims a slot when it starts (under a file lock); a slot
whose process has died is taken over together with its counts, so totals never go down when a
worker is replaced. Reading sums every slot; a reader may see one slot a moment old, never torn
values that matter (each counter is one aligned 8-byte word).
"""

from __future__ import annotations

import fcntl
import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path

COUNTERS = (
    "requests",  # every request except /healthz
    "client_errors",  # 4xx answers
    "unavailable",  # 503 answers: pool or writer queue timed out, database timeout
    "server_errors",  # 500 answers: a bug
    "orders_created",
    "busy_waits",  # sleeps on SQLite's file lock (the engine's busy handler counts them)
)
ROLES = {1: "worker", 2: "writer"}
ROLE_IDS = {name: number for number, name in ROLES.items()}

_HEADER = struct.Struct("<8sQ")  # magic, slot count
_MAGIC = b"dbladdr1"
_SLOT = struct.Struct(f"<qq{len(COUNTERS)}q")  # pid, role, counters


@dataclass(frozen=True)
class ProcessCounters:
    pid: int
    role: str
    counters: dict[str, int]


def create(path: Path, slots: int) -> None:
    """A zeroed counters file with room for `slots` processes."""
    size = _HEADER.size + slots * _SLOT.size
    with open(path, "wb") as file:
        file.write(_HEADER.pack(_MAGIC, slots) + bytes(size - _HEADER.size))


def _open_map(path: Path) -> tuple[int, mmap.mmap, int]:
    fd = os.open(path, os.O_RDWR)
    mapped = mmap.mmap(fd, 0)
    magic, slots = _HEADER.unpack_from(mapped, 0)
    if magic != _MAGIC:
        mapped.close()
        os.close(fd)
        raise ValueError(f"{path} is not a dbladder counters file")
    return fd, mapped, slots


def alive(pid: int) -> bool:
    """Whether a process of that id exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Slot:
    """One process's counters. Plain attributes for speed; `flush()` copies them into the file."""

    def __init__(self, path: Path, role: str):
        self._fd, self._map, self._slots = _open_map(path)
        slots = self._slots
        self.pid = os.getpid()
        self._role = ROLE_IDS[role]
        self._offset = -1
        self.values = dict.fromkeys(COUNTERS, 0)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            for index in range(slots):
                offset = _HEADER.size + index * _SLOT.size
                pid, _role, *counts = _SLOT.unpack_from(self._map, offset)
                if pid == 0 or not alive(pid):
                    # A dead process's counts carry over, so the totals stay monotonic.
                    self.values = dict(zip(COUNTERS, counts, strict=True))
                    self._offset = offset
                    break
            if self._offset >= 0:
                self.flush()
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    @property
    def claimed(self) -> bool:
        """False when every slot belonged to a live process: this process's counts stay private."""
        return self._offset >= 0

    def add(self, counter: str, amount: int = 1) -> None:
        self.values[counter] += amount

    def flush(self) -> None:
        if self._offset >= 0 and not self._map.closed:
            _SLOT.pack_into(self._map, self._offset, self.pid, self._role, *self.values.values())

    def snapshot(self) -> list[ProcessCounters]:
        """Every claimed slot of the file, this process's own flushed first."""
        self.flush()
        return _read_slots(self._map, self._slots)

    def close(self) -> None:
        self.flush()
        self._map.close()
        os.close(self._fd)


def read(path: Path) -> list[ProcessCounters]:
    """Every claimed slot, live or not (a dead process's counts still belong to the totals)."""
    fd, mapped, slots = _open_map(path)
    try:
        return _read_slots(mapped, slots)
    finally:
        mapped.close()
        os.close(fd)


def _read_slots(mapped: mmap.mmap, slots: int) -> list[ProcessCounters]:
    result = []
    for index in range(slots):
        pid, role, *counts = _SLOT.unpack_from(mapped, _HEADER.size + index * _SLOT.size)
        if pid:
            result.append(
                ProcessCounters(pid, ROLES.get(role, "?"), dict(zip(COUNTERS, counts, strict=True)))
            )
    return result


def totals(processes: list[ProcessCounters]) -> dict[str, int]:
    """Each counter summed over the processes."""
    return {name: sum(p.counters[name] for p in processes) for name in COUNTERS}
