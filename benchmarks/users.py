"""Can one generator process run the 3,200 users of "Postgres vs MariaDB on two dedicated CPUs"
(db-wars) without falling behind?

    /work/venv/bin/python benchmarks/users.py [--quick] [--users 800,1600,3200] [--hold 15]

(a) The users alone: the most users (3,200 by default) against an in-process target that answers
    every request after 1 ms, no sockets. This is what the users themselves cost: timers, think
    times, rendering, three histograms per request.
(b) Over HTTP: granian serving `hello_app.py` (RSGI, 1 worker, backlog 4096) on a free loopback
    port, and one generator process (`run_process`, as `dbladder run` uses) through a closed-model
    `UserPlan`: each count of users arrives over a ramp and is held, with that post's think times
    (50 to 150 ms, mean 100 ms) and an in-flight limit above the users, so no request is dropped
    for want of a connection.

Per phase it prints

  achieved  answers per second of the hold
  expected  users / (mean think + mean latency from the send): what the users send when the
            generator adds nothing to the latency the server gives (a generator that falls behind
            sends late, and the rate drops below this)
  nominal   users / mean think: the rate with an instant server
  lag p99   how late requests left after their user's think time ended (the event loop's timers
            have millisecond resolution, so about 1 ms is the floor)
  cpu       the generator process's CPU time over wall time in the phase
  cpu/req   its CPU time per request sent: 1 s over this is the most one core could send

and whether it kept up: lag p99 <= 2 ms and achieved >= 95 % of expected.

On a machine with two or more CPUs the server is pinned to CPU 0 and the generator to CPU 1
(taskset / sched_setaffinity). Other processes still share both CPUs: the output prints the load
average before and after, and figures from a busy machine are noisy. Bounded: 9 s for (a), the plan
(60 s by default, 9 s with --quick) plus the server start and the last answers.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import shutil
import sys
from typing import Any

import uvloop
from hello_server import HOST, free_port, start_server, stop_server

from dbladder.histogram import Histogram
from dbladder.load.clock import MonotonicClock
from dbladder.load.executors.closed import UsersGenerator
from dbladder.load.fleet import ProcessSpec, run_process
from dbladder.load.mix import requests
from dbladder.load.targets import ResultCallback
from dbladder.load.targets.http import RequestRenderer
from dbladder.plans import UserPlan
from dbladder.workloads import shop

LAG_BOUND_US = 2000
RATE_SHARE = 0.95
ROW = "{:>6} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>5} {:>8} {:>6} {}"


class InstantTarget:
    """An in-process target that answers 200 after `latency` seconds: no sockets, no server."""

    timeout = 1.0
    sweep_interval = 0.0

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.render = RequestRenderer(f"{HOST}:1")  # rendering stays in: the generator does it
        self._in_flight = 0

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def send(self, payload: Any, callback: ResultCallback, token: Any = None) -> bool:
        self._in_flight += 1
        asyncio.get_running_loop().call_later(self.latency, self._answer, callback, token)
        return True

    def _answer(self, callback: ResultCallback, token: Any) -> None:
        self._in_flight -= 1
        callback(token, 200, None)

    def close(self) -> None:
        pass


def run_without_http(plan: UserPlan) -> dict[str, Any]:
    """The plan's users against an InstantTarget, on uvloop with gc frozen as run_process does."""

    async def drive() -> dict[str, Any]:
        stream: Any = requests(shop.workload, shop.workload.mix(), shop.workload.sizes)
        names = tuple(op.name for op in shop.workload.operations)
        generator = UsersGenerator(
            plan, MonotonicClock(spin=0.0), stream, InstantTarget(0.001), operation_names=names
        )
        await generator.run()
        return generator.recorder.snapshot()

    gc.collect()
    gc.freeze()
    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(drive())
    finally:
        gc.unfreeze()


def print_table(snapshot: dict[str, Any], plan: UserPlan) -> None:
    header = ("users", "achieved", "expected", "nominal", "p95", "lag p50", "lag p99", "cpu", "cpu/req")
    print(ROW.format(*header, "failed", "kept up"))
    for level in snapshot["levels"]:
        row = phase_figures(level, plan.think_mean)
        print(
            ROW.format(
                f"{row['users']:,}",
                f"{row['achieved']:,.0f}/s",
                f"{row['expected']:,.0f}/s",
                f"{row['nominal']:,.0f}/s",
                f"{row['p95_ms']:.2f}ms",
                f"{row['lag_p50_ms']:.2f}ms",
                f"{row['lag_p99_ms']:.2f}ms",
                f"{row['cpu_share']:.0%}",
                f"{row['cpu_us']:.1f}us",
                row["failed"],
                "yes" if row["kept_up"] else "no",
            )
        )


def phase_figures(level: dict[str, Any], think_mean: float) -> dict[str, Any]:
    """One phase's figures from its level snapshot."""
    from_due = Histogram.from_dict(level["latency_from_due"])
    from_send = Histogram.from_dict(level["latency_from_send"])
    lag = Histogram.from_dict(level["schedule_lag"])
    measured = level["hold"] - level["warmup"]
    outcomes = level["outcomes"]
    achieved = (outcomes["2xx"] + outcomes["3xx"]) / measured
    expected = level["users"] / (think_mean + from_send.mean / 1_000_000)
    failed = sum(count for cause, count in outcomes.items() if cause not in ("2xx", "3xx"))
    return {
        "users": level["users"],
        "achieved": achieved,
        "expected": expected,
        "nominal": level["users"] / think_mean,
        "p95_ms": from_due.percentile(95) / 1000,
        "lag_p50_ms": lag.percentile(50) / 1000,
        "lag_p99_ms": lag.percentile(99) / 1000,
        "cpu_share": level["cpu_share"],
        # CPU time per request sent in the phase (ramp included, as the CPU time is)
        "cpu_us": level["cpu_seconds"] / max(lag.count + level["warmup_requests"], 1) * 1_000_000,
        "failed": failed,
        "kept_up": lag.percentile(99) <= LAG_BOUND_US and achieved >= RATE_SHARE * expected and not failed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3,200 users only, 3 s ramp, 6 s hold")
    parser.add_argument("--users", default="800,1600,3200", help="users per phase, comma-separated")
    parser.add_argument("--ramp", type=float, default=5.0, help="seconds for each count of users to arrive")
    parser.add_argument("--hold", type=float, default=15.0, help="seconds each count of users is held")
    options = parser.parse_args()
    users = [3200] if options.quick else [int(count) for count in options.users.split(",")]
    ramp, hold = (3.0, 6.0) if options.quick else (options.ramp, options.hold)
    plan = UserPlan.levels(users=users, ramp=ramp, hold=hold).checked()
    pinned = (os.cpu_count() or 1) >= 2 and shutil.which("taskset") is not None
    server_cpu, client_cpu = (0, 1) if pinned else (None, None)

    if client_cpu is not None:
        os.sched_setaffinity(0, {client_cpu})
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()}")
    think = f"think {plan.think_min * 1000:g}-{plan.think_max * 1000:g} ms"

    alone = UserPlan.levels(users=[max(users)], ramp=3.0, hold=6.0)
    print(f"(a) {max(users):,} users alone: an in-process target answering after 1 ms, {think}")
    print_table(run_without_http(alone), alone)

    port = free_port()
    # A backlog above the default 1024: thousands of users may open connections at once.
    server = start_server(port, server_cpu, backlog=4096)
    try:
        if pinned:
            print(f"(b) over HTTP: granian on CPU {server_cpu}, the generator on CPU {client_cpu}")
        else:
            print("(b) over HTTP, not pinned (one CPU or no taskset): generator and server share the CPUs")
        print(
            f"one generator process, users {', '.join(f'{count:,}' for count in users)}, each over a "
            f"{ramp:g} s ramp and held {hold:g} s, {think}"
        )
        spec = ProcessSpec(plan, host=HOST, port=port, in_flight=max(users) + 100, timeout=5.0)
        snapshot = run_process(spec)
    finally:
        stop_server(server)
    print_table(snapshot, plan)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
