"""Round trips per request of each `orm` endpoint, and what added latency does to each.

    python benchmarks/orm_round_trips.py [--requests 20] [--delay-ms 2]

For PostgreSQL and MariaDB (populated data set, scale 1, TCP on loopback): each endpoint's drawn
requests run one at a time through the latency relay. Per request it prints the statements the
ORM counted, the round trips the relay saw (client-to-server chunks: statements plus the
driver's transaction commands and any connection set-up), and the time per request with the
relay adding 0 ms and `--delay-ms` each way. The added time should be close to
round trips x 2 x delay: if it is, the endpoint's cost under latency is its round trips.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from typing import Any

from scratch import scratch_databases

from dbladder.engines import opened
from dbladder.transport import background_relay, relay_process, relay_target, through_relay
from dbladder.urls import parse_url
from dbladder.workloads.orm import data, workload
from dbladder.workloads.orm.context import counting, open_context

OPERATIONS = ("list_assets", "asset_detail", "dashboard", "create_finding", "create_asset")


class SeededDraw:
    def __init__(self, seed: int):
        self._random = random.Random(seed)

    def random(self) -> float:
        return self._random.random()

    def below(self, n: int) -> int:
        return self._random.randrange(n)

    def id(self, n: int) -> int:
        return 1 + self._random.randrange(n)


def drawn(operation: str, count: int) -> list[Any]:
    draw, sizes = SeededDraw(1), data.scaled_sizes(1)
    return [workload.operation(operation).draw(draw, sizes) for _ in range(count)]  # type: ignore[arg-type]


async def run_requests(url: str, operation: str, requests: list[Any]) -> tuple[float, float]:
    """(seconds per request, statements per request), one request at a time, after one warm-up."""
    ctx = await open_context(parse_url(url))
    try:
        run = workload.operation(operation).run
        await run(ctx, requests[0])  # opens the connection
        statements = 0
        started = time.perf_counter()
        for args in requests:
            with counting() as count:
                answer = await run(ctx, args)
            if answer.status >= 400:
                raise SystemExit(f"{operation}{args} answered {answer.status}: {answer.body}")
            statements += count.statements
        return (time.perf_counter() - started) / len(requests), statements / len(requests)
    finally:
        await ctx.close()


async def measure(name: str, url: str, args: argparse.Namespace) -> None:
    parsed = parse_url(url)
    target = relay_target(parsed)
    for operation in OPERATIONS:
        requests = drawn(operation, args.requests)
        async with opened(url) as engine:
            await data.load(engine, 1, data.scaled_sizes(1))
        # Counting: a relay in a thread (its timing does not matter here), read before and after.
        with background_relay(target, 0) as counter:
            relayed = through_relay(parsed, counter.relay.address).raw
            ctx = await open_context(parse_url(relayed))
            run = workload.operation(operation).run
            await run(ctx, requests[0])
            before, counted = counter.relay.stats.chunks_up, ctx.query_counts()[operation]["round_trips"]
            for request in requests:
                await run(ctx, request)
            round_trips = (counter.relay.stats.chunks_up - before) / len(requests)
            counted = (ctx.query_counts()[operation]["round_trips"] - counted) / len(requests)
            await ctx.close()
        if abs(counted - round_trips) > 1e-9:
            print(f"  {operation}: counted {counted:.2f} round trips a request, relay saw {round_trips:.2f}")
        times = {}
        for delay in (0.0, args.delay_ms):
            async with opened(url) as engine:
                await data.load(engine, 1, data.scaled_sizes(1))
            with relay_process(target, delay) as relay:
                relayed = through_relay(parsed, relay.address).raw
                seconds, statements = await run_requests(relayed, operation, requests)
            times[delay] = seconds
        added = (times[args.delay_ms] - times[0.0]) * 1000
        expected = round_trips * 2 * args.delay_ms
        print(
            f"{name:<11} {operation:<15} {statements:>6.1f} {round_trips:>8.1f} {times[0.0] * 1000:>9.2f} "
            f"{times[args.delay_ms] * 1000:>9.2f} {added:>9.2f} {expected:>9.2f} {added / expected:>6.2f}"
        )


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--delay-ms", type=float, default=2.0)
    args = parser.parse_args()
    d = args.delay_ms
    print(f"populated data set (scale 1), {args.requests} drawn requests each, one at a time; ms/request")
    print(
        f"{'engine':<11} {'operation':<15} {'stmts':>6} {'trips':>8} {'0 ms':>9} {f'{d:g} ms':>9} "
        f"{'added':>9} {'trips x2d':>9} {'ratio':>6}"
    )
    async with scratch_databases("dbl_bench_ormrt") as name:
        await measure("postgresql", f"postgresql://postgres@127.0.0.1:5432/{name}", args)
        await measure("mariadb", f"mariadb://root@127.0.0.1:3306/{name}", args)


if __name__ == "__main__":
    asyncio.run(main())
