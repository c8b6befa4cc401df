"""Seeding speed of Chirp per engine: rows/s per table and the total against the goals.

    python benchmarks/seed_chirp.py [--scale 1] [--engines sqlite,postgresql,mariadb] [--seed 1]

At scale 1 the data set is the post's ("SQLite handled 315 million daily requests on a laptop"):
50,000 users, 1,000,000 posts, 2,498,799 follows, 4,999,764 likes. Each engine loads it through
dbladder's own path (`dbladder.data.seeding.seed`: `recreate_schema`, `bulk_load`, `finish_load`)
into a scratch database that is dropped afterwards. References are measured in the same run,
because other work shares the machine: SQLite and MariaDB load the likes rows ready-made (apsw
executemany; the mariadb client's LOAD DATA LOCAL INFILE of a ready-made file) into the same table
with its primary key, compared with dbladder's likes figure, which includes generating the rows;
PostgreSQL's own loader (`pgbench -i -s 10`, 1M rows by COPY, keys after) is compared with
dbladder's whole load.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from seed import (
    mariadb_reference,
    pgbench_rows_per_second,
    print_reference,
    scratch_database,
    sqlite_reference,
)

from dbladder.data.seeding import SeedReport, seed
from dbladder.engines import opened
from dbladder.workloads.base import DataSpec
from dbladder.workloads.chirp import ChirpConfig, workload
from dbladder.workloads.chirp.data import like_rows

GOALS_S = {"sqlite": 60, "postgresql": 60, "mariadb": 120}  # at scale 1
LIKES_SQLITE = (
    "CREATE TABLE likes (user_id INTEGER NOT NULL, post_id INTEGER NOT NULL, created_at INTEGER NOT NULL, "
    "PRIMARY KEY (user_id, post_id)) STRICT, WITHOUT ROWID"
)
LIKES_MARIADB = (
    "CREATE TABLE likes (user_id BIGINT NOT NULL, post_id BIGINT NOT NULL, created_at BIGINT NOT NULL, "
    "PRIMARY KEY (user_id, post_id)) ENGINE=InnoDB"
)


async def load(url: str, data: DataSpec) -> SeedReport:
    async with opened(url, None) as engine:
        return await seed(engine, workload, data)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--engines", default="sqlite,postgresql,mariadb")
    args = parser.parse_args()
    data = DataSpec(args.seed, workload.scaled_sizes(args.scale))
    config = ChirpConfig.of(data.sizes["users"], data.sizes["posts"], args.seed).checked()
    planned = config.planned_rows()
    print("data set: " + ", ".join(f"{n:,} {t}" for t, n in planned.items()) + f" on {os.cpu_count()} cores")
    figures = {}
    for engine in args.engines.split(","):
        url, drop = scratch_database(engine)
        try:
            report = asyncio.run(load(url, data))
        finally:
            drop()
        figures[engine] = report
        goal = GOALS_S.get(engine)
        verdict = ""
        if goal and args.scale == 1:
            verdict = f"  goal <= {goal} s: {'met' if report.total_seconds <= goal else 'MISSED'}"
        print(
            f"{engine:<11} total {report.total_seconds:6.2f} s  "
            f"{report.rows / report.total_seconds:>10,.0f} rows/s  "
            f"(indexes and statistics {report.finish_seconds:.2f} s){verdict}"
        )
        for t in report.tables:
            rate = f"{t.rows_per_second:>10,.0f} rows/s"
            print(f"{'':<11} {t.table:<8} {t.rows:>10,} rows {t.seconds:7.2f} s {rate}")
    likes = {engine: next(t for t in r.tables if t.table == "likes") for engine, r in figures.items()}
    if "sqlite" in figures or "mariadb" in figures:
        rows = [row for chunk in like_rows(config) for row in chunk]
        if "sqlite" in figures:
            print_reference(
                "apsw executemany of ready-made likes, SQLite",
                sqlite_reference(rows, LIKES_SQLITE, "likes"),
                likes["sqlite"].rows_per_second,
            )
        if "mariadb" in figures:
            print_reference(
                "LOAD DATA LOCAL INFILE of ready-made likes, MariaDB",
                mariadb_reference(rows, LIKES_MARIADB, "likes"),
                likes["mariadb"].rows_per_second,
            )
        del rows
    if "postgresql" in figures:
        ours = figures["postgresql"].rows / figures["postgresql"].total_seconds
        print_reference("pgbench -i -s 10, PostgreSQL (whole load)", pgbench_rows_per_second(), ours)
    return 0


if __name__ == "__main__":
    sys.exit(main())
