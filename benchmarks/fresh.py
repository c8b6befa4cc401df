"""Fresh data for a run: seconds to re-seed against seconds to restore the snapshot, per engine.

    python benchmarks/fresh.py [--products 100000] [--orders 1000000] [--repeat 3]
                               [--engines sqlite,postgresql,mariadb] [--alternatives] [--verify]

Each engine gets a scratch database (dropped afterwards), seeded once, with a snapshot saved by
the engine (`save_snapshot`). Then, `--repeat` times: some orders are written, the snapshot is
restored (timed); orders are written again and the shop is seeded again over it (timed), as
`FreshData` would do either way. Restores and re-seeds alternate so that other work on the
machine falls on both alike. Printed: the median (and every figure) of each, the ratio re-seed /
restore, and the size of the data on disk.

`--alternatives` times, on the same data, the methods each engine did not choose (docs/design.md
says why): SQLite a file copy for the save and the backup API for the restore, PostgreSQL the
WAL_LOG strategy with the checkpoint it leaves behind, MariaDB an INSERT ... SELECT copy of each
table (what the engine does when the server's data folder is out of reach). `--verify` checks
the shop's checksum after every restore (it reads every row: slow).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import statistics
import sys
import time
from collections.abc import Awaitable, Callable

import apsw
import asyncmy
import asyncpg
from seed import scratch_database

from dbladder.data.seeding import seed_shop
from dbladder.engines import opened
from dbladder.engines.base import Engine
from dbladder.urls import parse_url
from dbladder.workloads import shop


async def write_orders(engine: Engine, count: int = 50) -> None:
    """What a run leaves behind: new orders, less stock."""
    for n in range(count):
        await shop.create_order(engine, n + 1, [(2 * n + 1, 1), (2 * n + 2, 2)])


async def timed(action: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await action()
    return time.perf_counter() - started


async def data_megabytes(engine: Engine) -> float | None:
    """Size of the database on disk (MariaDB: tables and indexes as InnoDB counts them)."""
    if engine.name == "sqlite":
        return os.path.getsize(os.path.abspath(engine.url.path or "")) / 1e6
    size_sql = {
        "postgresql": "SELECT pg_database_size(current_database())",
        "mariadb": (
            "SELECT SUM(data_length + index_length) FROM information_schema.tables "
            "WHERE table_schema = DATABASE()"
        ),
    }.get(engine.name)
    if size_sql is None:
        return None
    async with engine.read() as session:
        row = await session.fetch_one(size_sql)
    return float(row[0]) / 1e6 if row and row[0] is not None else None


async def measure(url: str, config: shop.SeedConfig, repeat: int, alternatives: bool, verify: bool) -> dict:
    figures: dict = {"reseed": [], "restore": [], "alternatives": {}}
    async with opened(url) as engine:
        figures["server"] = (await engine.describe()).server_version
        await seed_shop(engine, config)
        expected = await shop.checksum(engine) if verify else None
        figures["mb"] = await data_megabytes(engine)
        started = time.perf_counter()
        token = await engine.save_snapshot()
        figures["save"] = time.perf_counter() - started
        figures["method"] = "restore" if token else "reseed (the engine keeps no snapshot here)"
        try:
            for _ in range(repeat):
                if token is not None:
                    await write_orders(engine)
                    figures["restore"].append(await timed(lambda: engine.restore_snapshot(token)))
                    if verify and await shop.checksum(engine) != expected:
                        raise SystemExit(f"{engine.name}: the restored data differs from the seeded data")
                await write_orders(engine)
                figures["reseed"].append(await timed(lambda: seed_shop(engine, config)))
            if alternatives and token is not None:
                # Each closes the engine's pool first: these work beside it, on the files or server.
                figures["alternatives"] = await ALTERNATIVES[engine.name](engine, token, repeat)
                async with opened(url) as check:
                    if verify and await shop.checksum(check) != expected:
                        raise SystemExit(f"{engine.name}: an alternative left data unlike the seeded data")
        finally:
            if token is not None:
                await engine.drop_snapshot(token)
    return figures


# ---------------------------------------------------------------------------------------------
# The methods not chosen, measured on the engine's own data; each leaves the data as seeded.


def _fsync(path: str) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


async def sqlite_alternatives(engine: Engine, token: str, repeat: int) -> dict[str, list[float]]:
    path = os.path.abspath(engine.url.path or "")
    await engine.close()  # nothing of ours may hold the file while it is copied
    copy_save, backup_restore = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        connection = apsw.Connection(path)
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        connection.close()
        shutil.copyfile(path, path + ".bench_copy")
        _fsync(path + ".bench_copy")
        copy_save.append(time.perf_counter() - started)
        os.remove(path + ".bench_copy")

        started = time.perf_counter()
        target = apsw.Connection(path)
        target.execute("PRAGMA journal_mode=WAL").fetchall()
        target.execute("PRAGMA synchronous=FULL")
        source = apsw.Connection(token)
        with target.backup("main", source, "main") as backup:
            backup.step(-1)
        target.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        source.close()
        target.close()
        backup_restore.append(time.perf_counter() - started)
    return {
        "save: checkpoint + file copy + fsync (chosen: backup API)": copy_save,
        "restore: backup API into the WAL database + checkpoint (chosen: file copy)": backup_restore,
    }


async def postgres_alternatives(engine: Engine, token: str, repeat: int) -> dict[str, list[float]]:
    database = parse_url(engine.url.raw).database
    await engine.close()
    admin = await asyncpg.connect(host="127.0.0.1", user="postgres", database="postgres")
    wal_log, checkpoint = [], []
    try:
        for _ in range(repeat):
            started = time.perf_counter()
            await admin.execute(f'DROP DATABASE "{database}" WITH (FORCE)')
            await admin.execute(f'CREATE DATABASE "{database}" TEMPLATE "{token}" STRATEGY WAL_LOG')
            wal_log.append(time.perf_counter() - started)
            checkpoint.append(await timed(lambda: admin.execute("CHECKPOINT")))
    finally:
        await admin.close()
    return {
        "restore: DROP + CREATE ... STRATEGY WAL_LOG (chosen: FILE_COPY)": wal_log,
        "  + the CHECKPOINT that WAL_LOG leaves for later": checkpoint,
    }


async def mariadb_alternatives(engine: Engine, token: str, repeat: int) -> dict[str, list[float]]:
    database = parse_url(engine.url.raw).database
    await engine.close()
    admin = await asyncmy.connect(host="127.0.0.1", user="root", password="", autocommit=True)
    tables = [table.name for table in shop.SCHEMA.tables]
    insert_select = []
    try:
        for _ in range(repeat):
            started = time.perf_counter()
            for table in tables:
                await admin.query(f"DROP TABLE {database}.{table}")
                await admin.query(f"CREATE TABLE {database}.{table} LIKE {token}.{table}")
                await admin.query(f"INSERT INTO {database}.{table} SELECT * FROM {token}.{table}")
            await admin.query("ANALYZE TABLE " + ", ".join(f"{database}.{t}" for t in tables))
            insert_select.append(time.perf_counter() - started)
    finally:
        await admin.ensure_closed()
    return {
        "restore: CREATE TABLE ... LIKE + INSERT ... SELECT (the engine's way without the data folder)": (
            insert_select
        )
    }


ALTERNATIVES = {
    "sqlite": sqlite_alternatives,
    "postgresql": postgres_alternatives,
    "mariadb": mariadb_alternatives,
}


def seconds(values: list[float]) -> str:
    if not values:
        return "-"
    every = " / ".join(f"{v:.2f}" for v in values)
    return f"{statistics.median(values):6.2f} s  ({every})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--products", type=int, default=100_000)
    parser.add_argument("--orders", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--engines", default="sqlite,postgresql,mariadb")
    parser.add_argument("--alternatives", action="store_true", help="also time the methods not chosen")
    parser.add_argument("--verify", action="store_true", help="checksum the data after every restore")
    args = parser.parse_args()
    config = shop.SeedConfig(products=args.products, orders=args.orders).checked()
    print(
        f"data set: {config.products:,} products, {config.orders:,} orders, {2 * config.orders:,} items; "
        f"{os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}; "
        f"load average {os.getloadavg()[0]:.1f} at start; medians of {args.repeat}"
    )
    for name in args.engines.split(","):
        url, drop = scratch_database(name)
        try:
            figures = asyncio.run(measure(url, config, args.repeat, args.alternatives, args.verify))
        finally:
            drop()
        size = f"{figures['mb']:.0f} MB" if figures["mb"] else "size unknown"
        print(f"\n{name} {figures['server']}, {size}; method: {figures['method']}")
        print(f"  re-seed   {seconds(figures['reseed'])}")
        print(f"  restore   {seconds(figures['restore'])}")
        print(f"  save once {figures['save']:6.2f} s")
        if figures["restore"]:
            ratio = statistics.median(figures["reseed"]) / statistics.median(figures["restore"])
            print(f"  re-seed / restore = {ratio:.1f}")
        for label, values in figures["alternatives"].items():
            print(f"  {label}: {seconds(values)}")
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
