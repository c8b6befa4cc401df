"""Sampling the machine and the process groups once a second, in a background thread.

    sampler = Sampler({"generator": ..., "service": session(service.pid), "database": database})
    sampler.start()
    ...                       # the run
    samples = sampler.stop()  # one Sample per interval, the last one partial

Each `Sample` covers the interval (t - interval, t], with `t` on time.perf_counter(), the clock
the generator's schedule uses, so a level's hold [origin + measured_from, origin + end) selects
its samples directly (`summary.summarise`). Each tick is due one interval after the last
sample's end, so a slow reading delays one sample, not every later one; `cover(moment)` takes a
sample as soon as `moment` has passed, so a level's figures are ready when the level ends instead
of up to an interval later (samples are then shorter than the interval around a level's end).

A process listed by two groups counts in the first one only (in the order the groups were
given), with a warning: e.g. a generator group defined as "this process and its children"
would otherwise also count a service started as a child. The sampling thread never raises;
what went wrong is in `warnings`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from .host import HostReader, HostReading, HostSample, host_delta, read_host
from .processes import GroupSample, GroupTracker, Labeler, Resolver

GROUP_FIELDS = ("cpu_pct", "cpu_seconds", "vcsw", "ivcsw", "read_bytes", "write_bytes", "processes")
"""Per-group columns of `Sampler.to_rows()`, each prefixed with the group's name."""
HOST_FIELDS = (
    "usr",
    "sys",
    "iowait",
    "idle",
    "steal",
    "load1",
    "memory_used",
    "memory_available",
    "disk_write_bytes",
    "disk_write_ops",
)
"""Host columns of `Sampler.to_rows()`, each prefixed with "host_"."""


@dataclass(frozen=True)
class Sample:
    """What the machine and each group did during (t - interval, t]."""

    t: float  # time.perf_counter() at the end of the interval
    interval: float  # seconds
    host: HostSample
    groups: dict[str, GroupSample]

    @property
    def start(self) -> float:
        """time.perf_counter() at the beginning of the interval."""
        return self.t - self.interval


class Sampler:
    """Samples the host and process groups every `interval` seconds until stopped; see the module doc.

    `groups` maps a group name to a resolver (processes.py, database.py), `labelers` a group to
    what names its processes' roles (processes.py; their names without one). `host_reader` and
    `clock` are for tests (e.g. a host reading with CPU steal in it).
    """

    def __init__(
        self,
        groups: dict[str, Resolver],
        interval: float = 1.0,
        *,
        labelers: dict[str, Labeler] | None = None,
        host_reader: HostReader = read_host,
        clock: Callable[[], float] = time.perf_counter,
    ):
        if not interval > 0:
            raise ValueError(f"interval must be above 0 seconds, not {interval!r}")
        self.groups = dict(groups)
        self.interval = interval
        self.warnings: list[str] = []
        self._host_reader = host_reader
        self._clock = clock
        self._trackers = {name: GroupTracker((labelers or {}).get(name)) for name in self.groups}
        self._samples: list[Sample] = []
        self._lock = threading.Lock()
        self._taking = threading.Lock()  # the thread's tick and `cover` take one reading at a time
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_t = 0.0
        self._last_host: HostReading | None = None
        self._warned: set[str] = set()

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Take the baseline reading now and begin sampling in a background thread."""
        if self._thread is not None:
            raise RuntimeError("a Sampler starts once; make a new one")
        self._take(baseline=True)
        self._thread = threading.Thread(target=self._run, name="dbladder-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> list[Sample]:
        """Stop sampling, take a last (partial) sample up to now, and return every sample."""
        if self._thread is not None and self._thread.is_alive():
            self._stopping.set()
            self._thread.join()
            if self._clock() - self._last_t > 0.05 * self.interval:
                self._take()
        return self.samples()

    def cover(self, moment: float, shortest: float = 0.2) -> None:
        """Make sure a sample ends at or after `moment` (on the sampler's clock): wait for the
        moment if it is still ahead, then take a sample now unless one already covers it. No sample
        is made shorter than `shortest` seconds (its CPU shares would be mostly rounding): it waits
        that long after the last one at most."""
        if self._thread is None or not self._thread.is_alive():
            return
        ahead = moment - self._clock()
        if ahead > 0:
            time.sleep(ahead)
        with self._taking:
            if self._last_t >= moment:
                return
            since = self._clock() - self._last_t
            if since < shortest:
                time.sleep(shortest - since)
            self._take()

    def samples(self) -> list[Sample]:
        """The samples so far, oldest first (safe to call while sampling, e.g. for a live display)."""
        with self._lock:
            return list(self._samples)

    def to_rows(self, origin: float = 0.0) -> list[dict[str, Any]]:
        """One flat dict per sample for a timeseries CSV: "t" (seconds from `origin`), "interval",
        host_<HOST_FIELDS>, and <group>_<GROUP_FIELDS> for every group."""
        rows = []
        for sample in self.samples():
            row: dict[str, Any] = {"t": round(sample.t - origin, 6), "interval": round(sample.interval, 6)}
            host = asdict(sample.host)
            row.update({f"host_{name}": host[name] for name in HOST_FIELDS})
            for group, figures in sample.groups.items():
                row.update({f"{group}_{name}": getattr(figures, name) for name in GROUP_FIELDS})
            rows.append(row)
        return rows

    # -- the thread --------------------------------------------------------------------------

    def _run(self) -> None:
        due = self._last_t + self.interval
        while not self._stopping.wait(max(due - self._clock(), 0.0)):
            with self._taking:
                now = self._clock()
                if now >= self._last_t + self.interval:  # `cover` took none meanwhile
                    self._take()
                    due = now + self.interval  # a failed reading too is tried again an interval on
                else:
                    due = self._last_t + self.interval

    def _take(self, baseline: bool = False) -> None:
        try:
            t = self._clock()
            wall = time.time()
            host_now = self._host_reader()
            interval = t - self._last_t
            groups = self._read_groups(interval, wall)
            previous = self._last_host
            self._last_t, self._last_host = t, host_now
            if baseline or previous is None:
                return
            sample = Sample(t=t, interval=interval, host=host_delta(previous, host_now), groups=groups)
            with self._lock:
                self._samples.append(sample)
        except Exception as exc:  # a sampler must never take the run down with it
            self._warn(f"sampling failed: {type(exc).__name__}: {exc}")

    def _read_groups(self, interval: float, wall: float) -> dict[str, GroupSample]:
        claimed: set[int] = set()
        result = {}
        for name, resolve in self.groups.items():
            try:
                pids = list(dict.fromkeys(resolve()))
            except Exception as exc:
                self._warn(f"cannot list the {name} processes: {type(exc).__name__}: {exc}")
                pids = []
            shared = claimed.intersection(pids)
            if shared:
                self._warn(
                    f"process(es) {', '.join(map(str, sorted(shared)))} of the {name} group belong to an "
                    "earlier group and count there only"
                )
                pids = [pid for pid in pids if pid not in shared]
            claimed.update(pids)
            result[name] = self._trackers[name].sample(pids, interval, wall)
        return result

    def _warn(self, message: str) -> None:
        # Each kind of trouble once: a sampler failing every second would bury everything else.
        key = message.split(":")[0]
        if key not in self._warned:
            self._warned.add(key)
            self.warnings.append(message)
