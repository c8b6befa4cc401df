"""Counters shared by the service's processes, summed by `GET /stats`.

One small file, mapped into every process: a slot per process, each written only by its owner,
so no counter needs a lock. A process claims a slot when it starts (under a file lock); a slot
whose process has died is taken over together with its counts, so totals never go down when a
worker is replaced. Reading sums every slot; a reader may see one slot a moment old, never torn
values that matter (each counter is one aligned 8-byte word).

Each slot also holds its process's request-time histograms (TIMINGS; buckets as in
`dbladder.histogram`, microseconds). Filing a value into a histogram costs a request about
0.7 us in a micro-benchmark and 1.8 us inside the service (three histograms of 3,328 buckets are
not in the CPU's cache between requests), so a request only appends its three times to a buffer
(`Timing.record`) and `flush_timing()` files the buffer with numpy and copies the histograms into
the slot (80 kB), when something was recorded: every FLUSH_INTERVAL of the app (0.2 s) and before
it answers /stats. A reader may catch a copy half done; every word only grows (min aside) and is
written whole, and the reader takes the count from the buckets, so what it sees is always a state
between two copies, which is all a difference of snapshots needs.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import struct
from array import array
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..histogram import BUCKET_COUNT, HIGHEST_TRACKABLE, SUB_BUCKET_BITS, Histogram

COUNTERS = (
    "requests",  # every request except /healthz
    "client_errors",  # 4xx answers
    "unavailable",  # 503 answers: pool or writer queue timed out, database timeout
    "server_errors",  # 500 answers: a bug
    "writes",  # write operations that succeeded (orders created, posts written, ...)
    "busy_waits",  # sleeps on SQLite's file lock (the engine's busy handler counts them)
    "writer_restarts",  # single SQLite writers started to replace one that died (keeper.py)
    # The single SQLite writer's writes (writer.py), each from the moment its worker sent it: how
    # many it started, microseconds they queued before it began them (the socket, its event loop
    # and its one connection), and microseconds it then spent on them (their commits included).
    "writer_writes",
    "writer_queued_us",
    "writer_busy_us",
)
TIMINGS = (
    "pool_wait",  # waiting for a pooled connection (opening one included)
    "database",  # holding a pooled connection, or waiting for the single SQLite writer's answer
    "other",  # the rest of the request inside the worker: routing, validation, JSON
)
ROLES = {1: "worker", 2: "writer"}
ROLE_IDS = {name: number for number, name in ROLES.items()}

_HEADER = struct.Struct("<8sQ")  # magic, slot count
_MAGIC = b"dbladdr4"  # 4: the writer's queue counters
_SLOT = struct.Struct(f"<qq{len(COUNTERS)}q")  # pid, role, counters
# After the counters, per histogram: total, min + 1 (0 while empty), max, then every bucket;
# after the histograms, how many requests were recorded.
_HISTOGRAM_WORDS = 3 + BUCKET_COUNT
_RECORDED = len(TIMINGS) * _HISTOGRAM_WORDS  # the index of that last word
_TIMING = struct.Struct(f"<{_RECORDED + 1}q")
_SLOT_SIZE = _SLOT.size + _TIMING.size


@dataclass(frozen=True)
class ProcessCounters:
    pid: int
    role: str
    counters: dict[str, int]


def create(path: Path, slots: int) -> None:
    """A zeroed counters file with room for `slots` processes."""
    size = _HEADER.size + slots * _SLOT_SIZE
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


class Timing:
    """One process's request-time histograms (TIMINGS), laid out as in the file, and a buffer of
    the requests recorded since they were last filed."""

    __slots__ = ("_buffer", "_table", "words")

    def __init__(self, words: list[int] | tuple[int, ...] | None = None):
        self.words = np.zeros(_RECORDED + 1, dtype="<i8") if words is None else np.array(words, dtype="<i8")
        self._table = self.words[:-1].reshape(len(TIMINGS), _HISTOGRAM_WORDS)  # a view: one row each
        self._buffer = array("d")  # pool wait, database and whole time of each request, seconds

    def record(self, pool_wait: float, database: float, whole: float) -> None:
        """One request: seconds waiting for a connection, holding one, and in the worker in all."""
        self._buffer.extend((pool_wait, database, whole))

    @property
    def recorded(self) -> int:
        """How many requests were recorded."""
        return int(self.words[-1]) + len(self._buffer) // 3

    def file(self) -> None:
        """File the buffered requests into the histograms (as Histogram.record would, to the us)."""
        if not self._buffer:
            return
        seconds = np.array(self._buffer, dtype=np.float64).reshape(-1, 3)
        del self._buffer[:]
        wait, held = seconds[:, 0], seconds[:, 1]
        for row, part in zip(self._table, (wait, held, seconds[:, 2] - wait - held), strict=True):
            # int() of the microseconds, negatives (float rounding of "other") as 0, as record() does.
            micro = np.maximum((part * 1_000_000).astype(np.int64), 0)
            row[0] += micro.sum()
            lowest, highest = int(micro.min()), int(micro.max())
            if not row[1] or lowest < row[1] - 1:
                row[1] = lowest + 1
            row[2] = max(int(row[2]), highest)
            row[3:] += np.bincount(bucket_indexes(micro), minlength=BUCKET_COUNT)
        self.words[-1] += len(seconds)

    def histograms(self) -> dict[str, Histogram]:
        """The histograms with everything recorded so far."""
        self.file()
        return _histograms(self.words)


def bucket_indexes(values: np.ndarray) -> np.ndarray:
    """`histogram.bucket_index` of each value (integer microseconds, 0 or more), vectorised."""
    clamped = np.minimum(values, HIGHEST_TRACKABLE)  # larger values share the top bucket
    # frexp's exponent of an integer below 2**53 is its bit length, exactly.
    bit_length = np.frexp(clamped.astype(np.float64))[1].astype(np.int64)
    shift = np.maximum(bit_length - (SUB_BUCKET_BITS + 1), 0)
    return np.where(
        clamped < 2 * (1 << SUB_BUCKET_BITS), clamped, (shift << SUB_BUCKET_BITS) + (clamped >> shift)
    )


class Slot:
    """One process's counters. Plain attributes for speed; `flush()` copies them into the file.

    `timing` holds the process's request times; `flush_timing()` copies them into the file.
    """

    def __init__(self, path: Path, role: str):
        self._fd, self._map, self._slots = _open_map(path)
        slots = self._slots
        self.pid = os.getpid()
        self._role = ROLE_IDS[role]
        self._offset = -1
        self.values = dict.fromkeys(COUNTERS, 0)
        self.timing = Timing()
        self._timing_flushed = 0  # Timing.recorded at the last flush_timing()
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            for index in range(slots):
                offset = _HEADER.size + index * _SLOT_SIZE
                pid, _role, *counts = _SLOT.unpack_from(self._map, offset)
                if pid == 0 or not alive(pid):
                    # A dead process's counts carry over, so the totals stay monotonic.
                    self.values = dict(zip(COUNTERS, counts, strict=True))
                    self._offset = offset
                    break
            if self._offset >= 0:
                self.flush()
                # A dead process's histograms carry over too.
                self.timing = Timing(_TIMING.unpack_from(self._map, self._offset + _SLOT.size))
                self._timing_flushed = self.timing.recorded
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

    def flush_timing(self) -> None:
        """File the buffered request times and copy the histograms into the file, if there are new ones."""
        if self.timing.recorded == self._timing_flushed:
            return
        self.timing.file()
        if self._offset >= 0 and not self._map.closed:
            start = self._offset + _SLOT.size
            self._map[start : start + _TIMING.size] = self.timing.words.tobytes()
        self._timing_flushed = self.timing.recorded

    def timing_snapshot(self) -> dict[str, Histogram]:
        """Each request-time histogram merged over every claimed slot, this process's flushed first."""
        self.flush_timing()
        return _merged_timing(self._map, self._slots)

    def close(self) -> None:
        self.flush()
        self.flush_timing()
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


def read_timing(path: Path) -> dict[str, Histogram]:
    """Each request-time histogram (TIMINGS) merged over every claimed slot, live or not."""
    fd, mapped, slots = _open_map(path)
    try:
        return _merged_timing(mapped, slots)
    finally:
        mapped.close()
        os.close(fd)


def _read_slots(mapped: mmap.mmap, slots: int) -> list[ProcessCounters]:
    result = []
    for index in range(slots):
        pid, role, *counts = _SLOT.unpack_from(mapped, _HEADER.size + index * _SLOT_SIZE)
        if pid:
            result.append(
                ProcessCounters(pid, ROLES.get(role, "?"), dict(zip(COUNTERS, counts, strict=True)))
            )
    return result


def totals(processes: list[ProcessCounters]) -> dict[str, int]:
    """Each counter summed over the processes."""
    return {name: sum(p.counters[name] for p in processes) for name in COUNTERS}


def _merged_timing(mapped: mmap.mmap, slots: int) -> dict[str, Histogram]:
    merged = {name: Histogram() for name in TIMINGS}
    for index in range(slots):
        offset = _HEADER.size + index * _SLOT_SIZE
        if _SLOT.unpack_from(mapped, offset)[0]:
            # A copy: a view would keep the map from closing.
            words = np.frombuffer(mapped, dtype="<i8", count=_RECORDED + 1, offset=offset + _SLOT.size).copy()
            for name, histogram in _histograms(words).items():
                merged[name].merge(histogram)
    return merged


def _histograms(words: np.ndarray) -> dict[str, Histogram]:
    """The histograms of one slot's timing words (read while its owner may be copying them in)."""
    result = {}
    for number, name in enumerate(TIMINGS):
        base = number * _HISTOGRAM_WORDS
        total, lowest, highest = (int(word) for word in words[base : base + 3])
        buckets = words[base + 3 : base + _HISTOGRAM_WORDS]
        indexes = np.flatnonzero(buckets)
        counts = buckets[indexes].tolist()
        count = sum(counts)
        # A copy read half done can show a first value's min before its max: keep them in order.
        lowest = lowest - 1 if lowest and count else 0
        data = {
            "sub_bucket_bits": SUB_BUCKET_BITS,
            "count": count,
            "total": total if count else 0,
            "min": lowest,
            "max": max(highest, lowest) if count else 0,
            "indexes": indexes.tolist(),
            "counts": counts,
        }
        result[name] = Histogram.from_dict(data)
    return result
