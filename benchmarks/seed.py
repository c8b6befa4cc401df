"""Seeding speed per engine: rows/s per table and the total against the issue's goals.

    python benchmarks/seed.py [--products 100000] [--orders 1000000] [--engines sqlite,postgresql,mariadb]

Each engine loads the same data set into a scratch database that is dropped afterwards. References are
measured in the same run and our rate printed as a ratio of theirs: for PostgreSQL its own loader
(`pgbench -i -s 10`, 1M rows by COPY), for SQLite the bare driver inserting ready-made rows, for
MariaDB the client's LOAD DATA LOCAL INFILE of a ready-made file.
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

from dbladder.data.seeding import seed
from dbladder.engines import opened
from dbladder.workloads import shop
from dbladder.workloads.base import DataSpec
from dbladder.workloads.shop.data import ShopData, product_prices
from dbladder.workloads.shop.data import item_rows as item_rows_of

GOALS_S = {"sqlite": 20, "postgresql": 20, "mariadb": 60}  # for 100k products + 1M orders + 2M items
POSTGRES = "postgresql://postgres@127.0.0.1:5432/postgres"
MARIADB = "mariadb://root@127.0.0.1:3306/test"
ITEMS_SQLITE = (
    "CREATE TABLE order_items (order_id INTEGER NOT NULL, product_id INTEGER NOT NULL, "
    "qty INTEGER NOT NULL, price_cents INTEGER NOT NULL, PRIMARY KEY (order_id, product_id))"
)
ITEMS_MARIADB = (
    "CREATE TABLE order_items (order_id BIGINT NOT NULL, product_id BIGINT NOT NULL, "
    "qty INT NOT NULL, price_cents BIGINT NOT NULL, PRIMARY KEY (order_id, product_id)) ENGINE=InnoDB"
)


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


async def load(url: str, config: DataSpec):
    async with opened(url, None) as engine:
        return await seed(engine, shop.workload, config)


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


def item_rows(config: DataSpec) -> list[tuple]:
    """The data set's order_items rows, made before any clock starts (the references time loading only)."""
    data = ShopData(products=config.sizes["products"], orders=config.sizes["orders"], seed=config.seed)
    return [row for chunk in item_rows_of(data, product_prices(data)) for row in chunk]


def sqlite_reference(rows: list[tuple], create_table: str, table: str) -> float:
    """Rows/s of the bare driver: apsw inserting ready-made rows into a fresh `table` (made by
    `create_table`) in one transaction, WAL, FULL; no generation."""
    import apsw

    folder = tempfile.mkdtemp(prefix="dbladder-bench-")
    try:
        db = apsw.Connection(f"{folder}/ref.db")
        db.execute("PRAGMA journal_mode=WAL").fetchall()
        db.execute("PRAGMA synchronous=FULL")
        db.execute(create_table)
        insert = f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})"
        started = time.perf_counter()
        with db:
            db.executemany(insert, rows)
        seconds = time.perf_counter() - started
        db.close()
        return len(rows) / seconds
    finally:
        shutil.rmtree(folder)


def mariadb_reference(rows: list[tuple], create_table: str, table: str) -> float | None:
    """Rows/s of the server's own bulk loader: the mariadb client's LOAD DATA LOCAL INFILE of a
    ready-made file (written before the clock starts) into a fresh `table` made by `create_table`."""
    if not shutil.which("mariadb"):
        return None
    name = f"dbladder_bench_{uuid.uuid4().hex[:8]}"
    folder = tempfile.mkdtemp(prefix="dbladder-bench-")
    client = ["mariadb", "-h", "127.0.0.1", "-u", "root", "--local-infile=1"]
    try:
        path = f"{folder}/{table}.tsv"
        with open(path, "w") as stream:
            stream.writelines("\t".join(map(str, row)) + "\n" for row in rows)
        subprocess.run([*client, "-e", f"CREATE DATABASE {name}"], check=True)
        subprocess.run([*client, name, "-e", create_table], check=True)
        started = time.perf_counter()
        subprocess.run(
            [*client, name, "-e", f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE {table}"], check=True
        )
        return len(rows) / (time.perf_counter() - started)
    finally:
        subprocess.run([*client, "-e", f"DROP DATABASE IF EXISTS {name}"], check=True)
        shutil.rmtree(folder)


def print_reference(name: str, reference: float | None, ours: float) -> None:
    if reference:
        print(f"reference   {name}: {reference:,.0f} rows/s; dbladder: {ours / reference:.2f} x that rate")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--products", type=int, default=100_000)
    parser.add_argument("--orders", type=int, default=1_000_000)
    parser.add_argument("--engines", default="sqlite,postgresql,mariadb")
    args = parser.parse_args()
    config = shop.dataset(products=args.products, orders=args.orders)
    print(
        f"data set: {config.sizes['products']:,} products, {config.sizes['orders']:,} orders, "
        f"{2 * config.sizes['orders']:,} items "
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
        if goal and dict(config.sizes) == {"products": 100_000, "orders": 1_000_000}:
            verdict = f"  goal <= {goal} s: {'met' if report.total_seconds <= goal else 'MISSED'}"
        print(
            f"{engine:<11} total {report.total_seconds:6.2f} s  "
            f"{report.rows / report.total_seconds:>10,.0f} rows/s  "
            f"(indexes {report.finish_seconds:.2f} s){verdict}"
        )
        print(f"{'':<11} {tables}")
    # References measured in this run: what the same machine loads without dbladder in the way.
    # For SQLite and MariaDB they load the order_items rows ready-made, so they are compared with
    # dbladder's order_items figure, which includes generating the rows.
    items = {
        engine: next(t for t in report.tables if t.table == "order_items")
        for engine, report in figures.items()
    }
    if "sqlite" in figures or "mariadb" in figures:
        rows = item_rows(config)
        if "sqlite" in figures:
            reference = sqlite_reference(rows, ITEMS_SQLITE, "order_items")
            print_reference(
                "apsw executemany of ready-made order_items, SQLite",
                reference,
                items["sqlite"].rows_per_second,
            )
        if "mariadb" in figures:
            reference = mariadb_reference(rows, ITEMS_MARIADB, "order_items")
            name = "LOAD DATA LOCAL INFILE of ready-made order_items, MariaDB"
            print_reference(name, reference, items["mariadb"].rows_per_second)
    if "postgresql" in figures:
        ours = figures["postgresql"].rows / figures["postgresql"].total_seconds
        print_reference("pgbench -i -s 10, PostgreSQL (whole load)", pgbench_rows_per_second(), ours)
    return 0


if __name__ == "__main__":
    sys.exit(main())
