"""Seeding speed per engine: rows/s per table and the total against the issue's goals.

    python benchmarks/seed.py [--products 100000] [--orders 1000000] [--engines sqlite,postgresql,mariadb]

Each engine loads the same data set into a scratch database that is dropped afterwards. As a
reference measured in the same run, PostgreSQL's own loader (`pgbench -i -s 10`, 1M account rows
by COPY) is timed too when pgbench is installed, and the ratio of our PostgreSQL rows/s to its
rows/s is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

from dbladder.engines import opened
from dbladder.seeding import seed_shop
from dbladder.workloads import shop

GOALS_S = {"sqlite": 20, "postgresql": 20, "mariadb": 60}  # for 100k products + 1M orders + 2M items
POSTGRES = "postgresql://postgres@127.0.0.1:5432/postgres"
MARIADB = "mariadb://root@127.0.0.1:3306/test"


def scratch_database(engine: str) -> tuple[str, callable]:
    """A URL of an empty scratch database and a function that drops it."""
    name = f"dbladder_bench_{uuid.uuid4().hex[:8]}"
    if engine == "sqlite":
        folder = tempfile.mkdtemp(prefix="dbladder-bench-")
        return f"sqlite:///{folder}/shop.db", lambda: shutil.rmtree(folder)
    if engine == "postgresql":
        subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", name], check=True)
        return (
            POSTGRES.rsplit("/", 1)[0] + "/" + name,
            lambda: subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", name], check=True),
        )
    subprocess.run(["mariadb", "-h", "127.0.0.1", "-u", "root", "-e", f"CREATE DATABASE {name}"], check=True)
    return (
        MARIADB.rsplit("/", 1)[0] + "/" + name,
        lambda: subprocess.run(
            ["mariadb", "-h", "127.0.0.1", "-u", "root", "-e", f"DROP DATABASE {name}"], check=True
        ),
    )


async def load(url: str, config: shop.SeedConfig):
    async with opened(url, None) as engine:
        return await seed_shop(engine, config)


def pgbench_rows_per_second() -> float | None:
    if not shutil.which("pgbench"):
        return None
    name = f"dbladder_bench_{uuid.uuid4().hex[:8]}"
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", name], check=True)
    try:
        started = time.perf_counter()
        subprocess.run(
            ["pgbench", "-i", "-s", "10", "-q", "-h", "127.0.0.1", "-U", "postgres", name],
            check=True,
            capture_output=True,
        )
        return 1_000_000 / (time.perf_counter() - started)
    finally:
        subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", name], check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--products", type=int, default=100_000)
    parser.add_argument("--orders", type=int, default=1_000_000)
    parser.add_argument("--engines", default="sqlite,postgresql,mariadb")
    args = parser.parse_args()
    config = shop.SeedConfig(products=args.products, orders=args.orders).checked()
    print(
        f"data set: {config.products:,} products, {config.orders:,} orders, {2 * config.orders:,} items "
        f"on {os.cpu_count()} cores"
    )
    figures = {}
    for engine in args.engines.split(","):
        url, drop = scratch_database(engine)
        try:
            report = asyncio.run(load(url, config))
        finally:
            drop()
        figures[engine] = report
        tables = "  ".join(f"{t.table} {t.rows_per_second:>10,.0f} rows/s" for t in report.tables)
        goal = GOALS_S.get(engine)
        verdict = ""
        if goal and (config.products, config.orders) == (100_000, 1_000_000):
            verdict = f"  goal <= {goal} s: {'met' if report.total_seconds <= goal else 'MISSED'}"
        print(
            f"{engine:<11} total {report.total_seconds:6.2f} s  "
            f"{report.rows / report.total_seconds:>10,.0f} rows/s  "
            f"(indexes {report.finish_seconds:.2f} s){verdict}"
        )
        print(f"{'':<11} {tables}")
    if "postgresql" in figures:
        reference = pgbench_rows_per_second()
        if reference:
            ours = figures["postgresql"].rows / figures["postgresql"].total_seconds
            print(
                f"reference   pgbench -i -s 10: {reference:,.0f} rows/s; dbladder on PostgreSQL: "
                f"{ours / reference:.2f} x pgbench's rate"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
