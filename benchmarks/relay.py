"""The latency relay's own cost, and how exactly it adds the latency it is asked for.

    python benchmarks/relay.py [--seconds 3] [--rounds 3] [--in-flight 50]

For PostgreSQL and MariaDB, `SELECT 1` through dbladder's engine, in the same run and in
interleaved rounds (medians):

  direct          the engine to the server's TCP port
  relay 0 ms      the engine to the relay (its own process, as the service would use it), the
                  relay to the same TCP port, nothing added: the relay's own cost

first from one connection, one round trip at a time (the per-round-trip cost: microseconds
added), then from `--in-flight` connections at once (the most round trips per second the relay
passes: it is one Python process, so at some rate it is the bottleneck). The relay's CPU per
round trip is read from its process. Then, one at a time, the relay at 1 and 2 ms: the added
time per round trip against the 2 x delay asked for, and the relay's own record of how late it
let the held chunks go. Last, the relay's event loop against asyncio's default one (epoll), at
2 ms: how late each lets held chunks leave.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from asyncio.subprocess import PIPE

import psutil
from scratch import scratch_databases

from dbladder.engines import EngineOptions, opened
from dbladder.transport import RelayStats, relay_process, relay_target, through_relay
from dbladder.urls import parse_url

SQL = "SELECT 1"


async def round_trips(url: str, seconds: float, in_flight: int) -> float:
    """Round trips per second from `in_flight` connections, each one at a time."""
    async with opened(url, EngineOptions(pool_size=in_flight)) as engine:
        counts = [0] * in_flight
        deadline = time.perf_counter() + seconds

        async def client(number: int) -> None:
            async with engine.read() as session:
                await session.fetch_one(SQL)  # connect and prepare before the clock starts
                await ready.wait()
                while time.perf_counter() < deadline:
                    await session.fetch_one(SQL)
                    counts[number] += 1

        ready = asyncio.Event()
        tasks = [asyncio.create_task(client(n)) for n in range(in_flight)]
        await asyncio.sleep(0.2)
        started = time.perf_counter()
        deadline = started + seconds
        ready.set()
        await asyncio.gather(*tasks)
        return sum(counts) / (time.perf_counter() - started)


def relay_cpu(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


async def measure(engine_name: str, url: str, args: argparse.Namespace) -> None:
    parsed = parse_url(url)
    results: dict[str, list[float]] = {
        "direct 1": [],
        "relay 1": [],
        "direct n": [],
        "relay n": [],
        "cpu": [],
    }
    with relay_process(relay_target(parsed), 0) as relay:
        relayed = through_relay(parsed, relay.address).raw
        for _ in range(args.rounds):
            results["direct 1"].append(await round_trips(url, args.seconds, 1))
            cpu0 = relay_cpu(relay.process.pid)
            rate = await round_trips(relayed, args.seconds, 1)
            results["cpu"].append((relay_cpu(relay.process.pid) - cpu0) / (rate * args.seconds))
            results["relay 1"].append(rate)
            results["direct n"].append(await round_trips(url, args.seconds, args.in_flight))
            results["relay n"].append(await round_trips(relayed, args.seconds, args.in_flight))
    median = {key: statistics.median(values) for key, values in results.items()}
    direct_us, relay_us = 1e6 / median["direct 1"], 1e6 / median["relay 1"]
    print(
        f"{engine_name:<11} one at a time: direct {median['direct 1']:>8,.0f}/s ({direct_us:>5.0f} us), "
        f"relay {median['relay 1']:>8,.0f}/s ({relay_us:>5.0f} us): +{relay_us - direct_us:.0f} us per round "
        f"trip, relay CPU {median['cpu'] * 1e6:.0f} us per round trip"
    )
    print(
        f"{'':<11} {args.in_flight} in flight:  direct {median['direct n']:>8,.0f}/s, "
        f"relay {median['relay n']:>8,.0f}/s ({median['relay n'] / median['direct n']:.2f} x direct)"
    )
    for delay_ms in (1.0, 2.0):
        with relay_process(relay_target(parsed), delay_ms) as relay:
            relayed = through_relay(parsed, relay.address).raw
            direct = statistics.median([await round_trips(url, 1, 1) for _ in range(args.rounds)])
            delayed = statistics.median([await round_trips(relayed, 1, 1) for _ in range(args.rounds)])
        added_ms = (1 / delayed - 1 / direct) * 1000
        stats = relay.stats
        print(
            f"{'':<11} {delay_ms:.0f} ms each way: +{added_ms:.2f} ms per round trip "
            f"(asked {2 * delay_ms:.0f} ms); "
            f"held chunks left {stats.mean_late_seconds * 1e6:.0f} us late on average, "
            f"at most {stats.most_late_seconds * 1e3:.1f} ms"
        )


# A relay process on a chosen event loop, for the comparison of timer precision.
LOOP_PROBE = """
import asyncio, json, selectors, sys
from dbladder.transport.relay import Relay, RelayTarget, precise_loop
kind, delay_ms = sys.argv[1], float(sys.argv[2])
precise = kind == "select, timer slack 1 ns"
loop = precise_loop() if precise else asyncio.SelectorEventLoop(selectors.EpollSelector())
async def main():
    relay = Relay(RelayTarget("127.0.0.1", 5432), delay_ms)
    print((await relay.start())[1], flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    print(json.dumps(relay.stats.to_dict()), flush=True)
loop.run_until_complete(main())
"""


async def loop_lateness(url: str, rounds: int) -> None:
    """How late held chunks leave with the default epoll loop and with the relay's own loop."""
    for kind in ("epoll (asyncio's default)", "select, timer slack 1 ns") * rounds:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", LOOP_PROBE, kind, "2", stdin=PIPE, stdout=PIPE
        )
        assert process.stdin is not None and process.stdout is not None
        port = int(await process.stdout.readline())
        rate = await round_trips(through_relay(parse_url(url), ("127.0.0.1", port)).raw, 1, 1)
        process.stdin.write(b"\n")
        stats = RelayStats(**json.loads(await process.stdout.readline()))
        await process.wait()
        print(
            f"{'':<11} 2 ms on {kind:<26} {1000 / rate:.2f} ms per round trip; held chunks "
            f"{stats.mean_late_seconds * 1e6:.0f} us late on average, "
            f"at most {stats.most_late_seconds * 1e3:.1f} ms"
        )


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--in-flight", type=int, default=50)
    args = parser.parse_args()
    print(f"SELECT 1 round trips over TCP on loopback; {args.rounds} rounds of {args.seconds:.0f} s, medians")
    async with scratch_databases("dbl_bench_relay") as name:
        await measure("postgresql", f"postgresql://postgres@127.0.0.1:5432/{name}", args)
        await measure("mariadb", f"mariadb://root@127.0.0.1:3306/{name}", args)
        print("timer precision of the relay's event loop (PostgreSQL, one at a time):")
        await loop_lateness(f"postgresql://postgres@127.0.0.1:5432/{name}", args.rounds)


if __name__ == "__main__":
    asyncio.run(main())
