"""Ten times the ceiling for a whole level: the generator, the server and dbladder stay up with
bounded memory, the level fails with its causes, and the next level is unaffected.

The server is `known_servers`' fifo server: one request at a time, SERVICE_MS each, so its
capacity is exactly 1000 / SERVICE_MS requests/s. At ten times that, the generator keeps at most
IN_FLIGHT requests waiting and drops the rest (counted as failed, never queued), so its memory does
not grow with the offered rate: about one connection object and its small buffers per request in
flight (`benchmarks/overload.py` prints the figures for 1x, 10x and 30x).
"""

from __future__ import annotations

import threading
import time

import psutil
import pytest
from known_servers import known_server

from dbladder.load.fleet import Fleet, LevelDone, ProcessSpec
from dbladder.plans import Ladder
from dbladder.result.level_rows import level_row
from dbladder.result.passmark import PassMark
from dbladder.workloads import shop

SERVICE_MS = 4.0  # capacity 250 requests/s
IN_FLIGHT = 200
# Longer than the server's queue takes (IN_FLIGHT x SERVICE_MS = 0.8 s): no request is abandoned
# while the server still works on it (the fifo server, like many, does not notice a client that
# gave up, so abandoned requests would keep it busy after the level), and the queue is gone before
# the next level starts.
TIMEOUT = 5.0
READS = shop.workload.mix(write_share=0.0)  # the fifo server answers {"ok":true}: no order to acknowledge
GROWTH_BOUND_MB = 40
"""What a generator process may grow by during the overloaded level, above its size before it."""


class PeakMemory:
    """The resident size of some processes when the load starts (`origin`, a perf_counter time:
    after the imports and the start) and its largest value since, sampled every 20 ms in a thread."""

    def __init__(self, pids, origin: float):
        self._pids = pids
        self._origin = origin
        self.peak: dict[int, int] = {}
        self.first: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            if time.perf_counter() < self._origin:
                time.sleep(0.005)
                continue
            for pid in self._pids():
                try:
                    rss = psutil.Process(pid).memory_info().rss
                except psutil.Error:
                    continue
                self.first.setdefault(pid, rss)
                self.peak[pid] = max(self.peak.get(pid, 0), rss)
            time.sleep(0.02)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join()


def climb(port: int, rate: float, hold: float, warmup: float = 0.0) -> tuple[dict, PeakMemory]:
    spec = ProcessSpec(
        Ladder(rate, 0, 1, hold, warmup=warmup),
        mix=READS,
        sizes={"products": 1000, "orders": 1000},
        port=port,
        in_flight=IN_FLIGHT,
        timeout=TIMEOUT,
    )
    with Fleet(spec, 1) as fleet, PeakMemory(lambda: fleet.pids, fleet.origin) as memory:
        (done,) = [event for event in fleet.events() if isinstance(event, LevelDone)]
        final = fleet.finish()
    assert final["errors"] == [] and not final["interrupted"]
    return level_row(done.level, PassMark()), memory


@pytest.mark.slow
@pytest.mark.serial
def test_ten_times_the_ceiling_fails_the_level_with_bounded_memory_and_the_next_level_passes():
    parent = psutil.Process()
    parent_before = parent.memory_info().rss
    with known_server("fifo", service_ms=SERVICE_MS) as server:
        overloaded, memory = climb(server.port, 10 * server.capacity, hold=3.0)
        server_rss = psutil.Process(server.process.pid).memory_info().rss
        after, _ = climb(server.port, 0.5 * server.capacity, hold=2.0, warmup=0.5)
        assert server.process.is_alive()
    parent_after = parent.memory_info().rss
    (pid,) = memory.peak
    growth_mb = (memory.peak[pid] - memory.first[pid]) / 2**20
    print(
        f"generator {memory.first[pid] / 2**20:.0f} -> peak {memory.peak[pid] / 2**20:.0f} MB, "
        f"server {server_rss / 2**20:.0f} MB, dbladder (this process) {parent_before / 2**20:.0f} -> "
        f"{parent_after / 2**20:.0f} MB; overloaded level: {overloaded['failures']}, "
        f"{overloaded['achieved_rps']} answers/s"
    )
    # The level fails, and says why: most requests found every connection busy, or timed out.
    assert not overloaded["passed"]
    assert overloaded["requests"] == 7500
    assert overloaded["failures"]["dropped"] > overloaded["requests"] / 2
    assert any("failed" in reason or "p95" in reason for reason in overloaded["reasons"])
    # The server answered at its capacity meanwhile, no more: over the hold, and the queue it had
    # at the end (IN_FLIGHT requests, SERVICE_MS each).
    assert overloaded["responses"] <= 1.05 * server.capacity * (3.0 + IN_FLIGHT * SERVICE_MS / 1000)
    assert growth_mb < GROWTH_BOUND_MB
    assert (parent_after - parent_before) / 2**20 < GROWTH_BOUND_MB
    # The next level, at half the capacity, is unaffected.
    assert after["passed"], after["reasons"]
    assert after["fail_pct"] == 0
