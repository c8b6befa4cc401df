"""What schedstat's run-queue wait reads for threads that only hand work to each other.

    python benchmarks/handoff_waits.py [--handoffs 20000] [--rounds 3]

Two processes pass one byte back and forth through two pipes, `--handoffs` times each way: at
any instant at most one of them has work, so together they can never use more than one core.
Each round prints their CPU used and their time runnable but waiting for a CPU
(/proc/PID/schedstat), both in cores, the wait per handoff, and the machine's idle share
meanwhile. A service's threads that hand each request to each other (granian's I/O threads
and the event loop) read the same: their summed wait is the price of the handoffs, not CPU they
wanted (docs/design.md, "What a role may use, and what held it").
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path


def schedstat(pid: int) -> tuple[float, float]:
    """(seconds on a CPU, seconds runnable and waiting for one) of a process's main thread."""
    on_cpu, waited = Path(f"/proc/{pid}/schedstat").read_text().split()[:2]
    return int(on_cpu) / 1e9, int(waited) / 1e9


def host_idle() -> tuple[int, int]:
    """(idle + iowait ticks, all ticks) of the machine so far."""
    ticks = list(map(int, Path("/proc/stat").read_text().splitlines()[0].split()[1:]))
    return ticks[3] + ticks[4], sum(ticks[:8])


def round_trip(handoffs: int) -> str:
    ping, pong, done, go = os.pipe(), os.pipe(), os.pipe(), os.pipe()
    children = []
    for first in (True, False):
        pid = os.fork()
        if pid == 0:
            for _ in range(handoffs):
                if first:
                    os.write(ping[1], b"x")
                    os.read(pong[0], 1)
                else:
                    os.read(ping[0], 1)
                    os.write(pong[1], b"x")
            os.write(done[1], b"d")
            os.read(go[0], 1)  # stay alive until the parent has read the counters
            os._exit(0)
        children.append(pid)
    began, (idle0, all0) = time.perf_counter(), host_idle()
    before = [schedstat(pid) for pid in children]
    os.read(done[0], 1)
    os.read(done[0], 1)
    seconds, (idle1, all1) = time.perf_counter() - began, host_idle()
    after = [schedstat(pid) for pid in children]
    os.write(go[1], b"gg")
    for pid in children:
        os.waitpid(pid, 0)
    used = sum(a[0] - b[0] for a, b in zip(after, before, strict=True)) / seconds
    waited = sum(a[1] - b[1] for a, b in zip(after, before, strict=True))
    idle = 100 * (idle1 - idle0) / (all1 - all0)
    return (
        f"{2 * handoffs:,} handoffs in {seconds:.2f} s: {used:.2f} cores used, {waited / seconds:.2f} "
        f"waited, {waited / (2 * handoffs) * 1e6:.1f} us a handoff; machine idle {idle:.0f} %"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--handoffs", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for _ in range(options.rounds):
        print(round_trip(options.handoffs))


if __name__ == "__main__":
    main()
