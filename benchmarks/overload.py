"""How much memory does dbladder need when the load is far above what the service can take?

    .venv/bin/python benchmarks/overload.py [--hold 5] [--in-flight 1000] [--multiples 1,10,30]

(a) Overload: a fifo server of known capacity (tests/known_servers.py: one request at a time,
    1 ms each, so 1,000 requests/s) gets one level at each multiple of its capacity from one
    generator process (the Fleet `dbladder run` uses). Printed per multiple: the peak resident
    size of the generator (from the level's start, after its imports), of the server, and of
    this process (the parent that merges the levels), and how the level's requests ended. The
    generator keeps at most --in-flight requests waiting and drops the rest, so its memory should
    not grow with the multiple: the last column is its peak over the peak at the first multiple,
    measured in the same run.
(b) Acknowledged writes: the records of a long write ladder (the `write` preset climbing all 20
    levels: 630,000 orders) in an AcknowledgedWrites store, as the parent holds them for the
    integrity check: bytes packed, the parent's growth, and the time to ship them across in
    half-second chunks (take + pickle + extend).
"""

from __future__ import annotations

import argparse
import pickle
import sys
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from known_servers import known_server

from dbladder.load.acknowledged import AcknowledgedWrites
from dbladder.load.fleet import Fleet, LevelDone, ProcessSpec
from dbladder.plans import Ladder
from dbladder.result.level_rows import level_row
from dbladder.result.passmark import PassMark
from dbladder.workloads import shop

MB = 2**20


def overload(port: int, rate: float, hold: float, in_flight: int) -> tuple[dict, int, int]:
    """One level at `rate`; (its row, the generator's RSS at the start, its peak RSS)."""
    spec = ProcessSpec(
        Ladder(rate, 0, 1, hold),
        mix=shop.workload.mix(write_share=0.0),
        sizes={"products": 1000, "orders": 1000},
        port=port,
        in_flight=in_flight,
        timeout=5.0,
    )
    first = peak = 0
    stop = threading.Event()
    with Fleet(spec, 1) as fleet:

        def sample() -> None:
            nonlocal first, peak
            while not stop.is_set():
                if time.perf_counter() >= fleet.origin and fleet.pids:
                    try:
                        rss = psutil.Process(fleet.pids[0]).memory_info().rss
                    except psutil.Error:
                        break
                    first = first or rss
                    peak = max(peak, rss)
                time.sleep(0.02)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        (done,) = [event for event in fleet.events() if isinstance(event, LevelDone)]
        fleet.finish()
        stop.set()
        sampler.join()
    return level_row(done.level, PassMark()), first, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hold", type=float, default=5.0)
    parser.add_argument("--in-flight", type=int, default=1000)
    parser.add_argument("--multiples", default="1,10,30")
    options = parser.parse_args()
    me = psutil.Process()
    print(f"(a) overload: fifo server, 1 ms per request (1,000 req/s), in-flight {options.in_flight}")
    print(f"{'x':>4} {'offered':>9} {'answered':>9} {'dropped':>9} {'gen start':>10} {'gen peak':>9} "
          f"{'server':>7} {'parent':>7} {'peak / first':>12}")  # fmt: skip
    first_peak = None
    with known_server("fifo", service_ms=1.0) as server:
        for multiple in (float(m) for m in options.multiples.split(",")):
            row, first, peak = overload(
                server.port, multiple * server.capacity, options.hold, options.in_flight
            )
            server_rss = psutil.Process(server.process.pid).memory_info().rss
            first_peak = first_peak or peak
            print(
                f"{multiple:>4g} {row['requests']:>9,} {row['responses']:>9,} {row['dropped']:>9,} "
                f"{first / MB:>8.1f}MB {peak / MB:>7.1f}MB {server_rss / MB:>5.1f}MB "
                f"{me.memory_info().rss / MB:>5.1f}MB {peak / first_peak:>11.2f}x"
            )
            time.sleep(options.in_flight / server.capacity + 0.5)  # the server's queue drains

    orders = 630_000
    print(
        f"\n(b) {orders:,} acknowledged orders (the write preset's whole ladder), "
        "records as the parent keeps them"
    )
    before = me.memory_info().rss
    parent = AcknowledgedWrites()
    child = AcknowledgedWrites()
    began = time.perf_counter()
    shipped = 0
    for order in range(orders):
        child.add(
            "create", (1_000_000 + order, 123_456, order % 100_000 + 1, 1, (order * 7) % 100_000 + 1, 2)
        )
        if order % 2_500 == 2_499:  # half a second at 5,000 writes/s
            chunk = pickle.dumps(child.take())
            shipped += len(chunk)
            parent.extend(pickle.loads(chunk))
    elapsed = time.perf_counter() - began
    grown = me.memory_info().rss - before
    print(
        f"packed {parent.nbytes / MB:.1f} MB ({parent.nbytes / orders:.0f} bytes an order); the parent grew "
        f"{grown / MB:.1f} MB; {shipped / MB:.1f} MB shipped; add + take + pickle + extend "
        f"{elapsed:.2f} s ({elapsed / orders * 1e6:.2f} us an order)"
    )


if __name__ == "__main__":
    main()
