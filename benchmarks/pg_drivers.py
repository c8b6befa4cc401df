"""Which Python driver for PostgreSQL costs the client least per query? Flat-out point reads, side by side.

    python benchmarks/pg_drivers.py [--seconds 5] [--connections 8] [--rounds 2]

Direct mode's client shares the machine with the server, so the driver's CPU per query is taken
from the backends (docs/direct.md). This runs the shop's point read (`PRODUCT_BY_ID` on 100,000
products, ids drawn uniformly) flat out from one process with `--connections` connections, one
task each, for every driver installed, alternating over `--rounds`, and prints the reads per second,
the client's CPU per read (and as a multiple of asyncpg's in the same round), and the share of the
time its process was on a CPU and waited for one:

  asyncpg   the engine's driver, called as the engine calls it (a prepared statement's
            `bind_execute` on the connection's protocol)
  psycopg   psycopg 3, async, with its C extension when installed (`pip install "psycopg[binary]"`),
            server-side prepared statements (prepare=True)
  psqlpy    the Rust driver (`pip install psqlpy`), prepared statements

Drivers not installed are named and skipped; only asyncpg is a dependency of dbladder.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import random
import time
from typing import Any

import asyncpg
import uvloop
from bare_client import in_child, measured
from scratch import scratch_databases

from dbladder.data.seeding import seed as seed_data
from dbladder.engines import EngineOptions, opened
from dbladder.engines.postgres.connection import rewrite_placeholders
from dbladder.workloads.base import DataSpec
from dbladder.workloads.registry import load_workload
from dbladder.workloads.shop import schema as shop

PRODUCTS = 100_000
SOCKET = "/var/run/postgresql"


async def _asyncpg_reader(database: str, sql: str) -> tuple[Any, Any]:
    connection = await asyncpg.connect(host=SOCKET, user="postgres", database=database)
    statement = await connection.prepare(rewrite_placeholders(sql))
    protocol, state = connection._protocol, statement._state

    async def read(product_id: int) -> Any:
        return (await protocol.bind_execute(state, (product_id,), "", 1, True, None))[0]

    return connection, read


async def _psycopg_reader(database: str, sql: str) -> tuple[Any, Any]:
    import psycopg

    connection = await psycopg.AsyncConnection.connect(
        f"host={SOCKET} user=postgres dbname={database}", autocommit=True
    )
    cursor = connection.cursor()
    text = sql.replace("?", "%s")

    async def read(product_id: int) -> Any:
        await cursor.execute(text, (product_id,), prepare=True)
        return await cursor.fetchall()

    return connection, read


async def _psqlpy_reader(database: str, sql: str) -> tuple[Any, Any]:
    import psqlpy

    connection = await psqlpy.connect(dsn=f"postgresql://postgres@localhost/{database}?host={SOCKET}")
    text = rewrite_placeholders(sql)

    async def read(product_id: int) -> Any:
        return (await connection.execute(text, [product_id], prepared=True)).result()

    return connection, read


READERS = {"asyncpg": _asyncpg_reader, "psycopg": _psycopg_reader, "psqlpy": _psqlpy_reader}


def _worker(driver: str, database: str, connections: int, seconds: float, out: Any) -> None:
    async def main() -> tuple[float, ...]:
        readers = [await READERS[driver](database, shop.PRODUCT_BY_ID) for _ in range(connections)]
        for _, read in readers:
            await read(1)  # prepared before the clock starts
        ids = random.Random(1)
        counts = [0] * connections
        start = time.perf_counter() + 0.2
        deadline = start + seconds

        async def loop(number: int, read: Any) -> None:
            await asyncio.sleep(start - time.perf_counter())
            done = 0
            draws = [ids.randint(1, PRODUCTS) for _ in range(1 << 16)]
            for product_id in draws * 100:
                await read(product_id)
                done += 1
                if not done & 63 and time.perf_counter() >= deadline:
                    break
            counts[number] = done

        loops = [asyncio.ensure_future(loop(n, read)) for n, (_, read) in enumerate(readers)]
        wall, cpu, on_cpu, waiting = await measured(loops, start)
        for connection, _ in readers:
            result = connection.close()
            if asyncio.iscoroutine(result):
                await result
        reads = sum(counts)
        return reads / wall, cpu / reads * 1e6, on_cpu / wall, waiting / wall

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        out.put(runner.run(main()))


def measure(driver: str, database: str, connections: int, seconds: float) -> tuple[float, ...]:
    """One flat-out run of `driver` in a fresh process: reads/s, CPU us per read, on-CPU and waiting."""
    return in_child(_worker, driver, database, connections, seconds, timeout=seconds + 60)


async def seed(database: str) -> None:
    url = f"postgresql:///{database}?host={SOCKET}"
    async with opened(url, EngineOptions(pool_size=2)) as engine:
        await seed_data(engine, load_workload("shop"), DataSpec(1, {"products": PRODUCTS, "orders": 1000}))


async def main_async(options: argparse.Namespace) -> None:
    installed = [name for name in READERS if name == "asyncpg" or importlib.util.find_spec(name) is not None]
    missing = [name for name in READERS if name not in installed]
    if missing:
        print(f'not installed, skipped: {", ".join(missing)} (pip install "psycopg[binary]" psqlpy)')
    async with scratch_databases("dbladder_pg_drivers") as database:
        await seed(database)
        print(f"{PRODUCTS:,} products; point reads flat out, 1 process, {options.connections} connections")
        print(
            f"{'driver':<9} {'round':>5} {'reads/s':>9} {'us CPU/read':>12} {'x asyncpg':>10} "
            f"{'on CPU':>7} {'waiting':>8}"
        )
        loop = asyncio.get_running_loop()
        for number in range(options.rounds):  # alternating, so that a noisy minute hits each driver
            reference = 0.0  # asyncpg's CPU per read in this round: the others are read against it
            for driver in installed:
                rate, cpu, on_cpu, waiting = await loop.run_in_executor(
                    None, measure, driver, database, options.connections, options.seconds
                )
                reference = reference or cpu
                print(
                    f"{driver:<9} {number + 1:>5} {rate:>9,.0f} {cpu:>12.1f} {cpu / reference:>10.2f} "
                    f"{on_cpu:>7.0%} {waiting:>8.0%}",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
