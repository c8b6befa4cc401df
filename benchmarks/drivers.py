"""Point reads per second through each engine, one at a time and with many in flight.

    python benchmarks/drivers.py [--seconds 3] [--in-flight 50]

For every engine the same `SELECT ... FROM products WHERE id = ?` (the shop schema's PRODUCT_BY_ID) runs
through dbladder's engine (its driver, its statement preparation, its pool), from one asyncio
task on one connection (the round-trip rate), then from `--in-flight` tasks on a pool of that many
connections (what one worker process can get when requests overlap). SQLite also runs through
bare apsw and the standard library's sqlite3 module, without the engine. Each engine gets a scratch
database, dropped afterwards. PostgreSQL and MariaDB are measured over TCP and the Unix socket.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import tempfile
import time
import uuid
from importlib.metadata import version

import apsw
import asyncmy
import asyncpg

from dbladder.data.seeding import seed
from dbladder.engines import EngineOptions, opened
from dbladder.workloads import shop
from dbladder.workloads.shop.operations import product_by_id
from dbladder.workloads.shop.schema import PRODUCT_BY_ID

PRODUCTS = 10_000
SEED = shop.dataset(products=PRODUCTS, orders=100)
PG_SOCKET = "/var/run/postgresql"
MARIADB_SOCKET = "/run/mysqld/mysqld.sock"


async def point_reads(url: str, seconds: float, tasks: int) -> float:
    """Reads per second through the engine with `tasks` concurrent tasks and a pool of that size."""
    async with opened(url, EngineOptions(pool_size=tasks)) as engine:
        deadline = time.perf_counter() + seconds
        counts = [0] * tasks

        async def reader(number: int) -> None:
            product_id = number
            while time.perf_counter() < deadline:
                product_id = product_id % PRODUCTS + 1
                await product_by_id(engine, product_id)
                counts[number] += 1

        started = time.perf_counter()
        await asyncio.gather(*(reader(n) for n in range(tasks)))
        return sum(counts) / (time.perf_counter() - started)


def raw_sqlite_reads(path: str, seconds: float, driver: str) -> float:
    """Reads per second on one bare connection, without dbladder's engine or pool."""
    connection = apsw.Connection(path) if driver == "apsw" else sqlite3.connect(path)
    count = 0
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        connection.execute(PRODUCT_BY_ID, (count % PRODUCTS + 1,)).fetchone()
        count += 1
    connection.close()
    return count / (time.perf_counter() - started)


async def seed_database(url: str) -> None:
    async with opened(url, EngineOptions(pool_size=2)) as engine:
        await seed(engine, shop.workload, SEED)


async def measure(label: str, url: str, seconds: float, in_flight: int) -> None:
    one = await point_reads(url, seconds, 1)
    many = await point_reads(url, seconds, in_flight)
    print(f"{label:<44} {one:>10,.0f} {many:>12,.0f}")


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--in-flight", type=int, default=50)
    args = parser.parse_args()
    print(
        f"apsw {version('apsw')}, asyncpg {version('asyncpg')}, asyncmy {version('asyncmy')}; "
        f"{PRODUCTS:,} products; reads/s"
    )
    print(f"{'engine (driver, transport)':<44} {'1 in flight':>10} {args.in_flight:>3} in flight")
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/shop.db"
        await seed_database(url)
        await measure("sqlite (apsw, in-process)", url, args.seconds, args.in_flight)
        for driver in ("apsw", "sqlite3"):
            rate = raw_sqlite_reads(f"{folder}/shop.db", args.seconds, driver)
            print(f"{'sqlite (' + driver + ', bare connection, no engine)':<44} {rate:>10,.0f}")

    name = f"dbl_bench_drivers_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(user="postgres", host="127.0.0.1", port=5432, database="postgres")
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        await seed_database(f"postgresql://postgres@127.0.0.1:5432/{name}")
        await measure(
            "postgresql (asyncpg, TCP loopback)",
            f"postgresql://postgres@127.0.0.1:5432/{name}",
            args.seconds,
            args.in_flight,
        )
        await measure(
            "postgresql (asyncpg, Unix socket)",
            f"postgresql://postgres@/{name}?host={PG_SOCKET}",
            args.seconds,
            args.in_flight,
        )
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()

    connection = await asyncmy.connect(user="root", host="127.0.0.1", port=3306)
    async with connection.cursor() as cursor:
        await cursor.execute(f"CREATE DATABASE `{name}`")
    try:
        await seed_database(f"mariadb://root@127.0.0.1:3306/{name}")
        await measure(
            "mariadb (asyncmy, TCP loopback)",
            f"mariadb://root@127.0.0.1:3306/{name}",
            args.seconds,
            args.in_flight,
        )
        await measure(
            "mariadb (asyncmy, Unix socket)",
            f"mariadb://root@localhost/{name}?unix_socket={MARIADB_SOCKET}",
            args.seconds,
            args.in_flight,
        )
    finally:
        async with connection.cursor() as cursor:
            await cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")
        connection.close()


if __name__ == "__main__":
    asyncio.run(main())
