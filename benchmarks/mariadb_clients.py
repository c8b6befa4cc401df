"""Which MariaDB client makes the fastest bare reference for `dbladder bench`? Point reads per second.

    python benchmarks/mariadb_clients.py --db mariadb://root@127.0.0.1:3306/chirp [--seconds 3] [--rounds 3]

The database must hold Chirp (`dbladder bench --db URL --scale 1` loads it). Each client runs one
connection reading a post by primary key, for `--seconds`, in alternating rounds:
  sysbench   C (libmariadb), server-side prepared statement, random ids (what dbladder bench uses)
  asyncmy    a tight loop over asyncmy's raw connection and prepared statement, random ids
  mysqlslap  the mariadb-slap CLI, text protocol; it cannot vary the id, so one id is read again and
             again (the most favourable case for it) and the time includes its connection setup
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import subprocess
import sys
import time

from dbladder.bench.config import BenchConfig
from dbladder.bench.references import sysbench_reference
from dbladder.urls import parse_url

POINT_READ = "SELECT id, user_id, body, created_at FROM posts WHERE id = ?"


async def asyncmy_rate(url, seconds: float, posts: int) -> float:
    import asyncmy

    connection = await asyncmy.connect(
        host=url.host or "127.0.0.1", port=url.port or 3306, user=url.user or "root",
        password=url.password or "", database=url.database, autocommit=True,
    )  # fmt: skip
    statement = await connection.prepare(POINT_READ)
    count = 0
    deadline = time.perf_counter() + seconds
    randint = random.randint
    while time.perf_counter() < deadline:
        await statement.execute((randint(1, posts),))
        count += 1
    await connection.ensure_closed()
    return count / seconds


def mysqlslap_rate(url, queries: int) -> float:
    sql = POINT_READ.replace("?", "12345")
    output = subprocess.run(
        ["mysqlslap", "-h", url.host or "127.0.0.1", "-P", str(url.port or 3306), "-u", url.user or "root",
         f"--create-schema={url.database}", f"--query={sql}", "--concurrency=1",
         f"--number-of-queries={queries}", "--iterations=1"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    seconds = float(re.search(r"Average number of seconds to run all queries: ([0-9.]+)", output).group(1))
    return queries / seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--posts", type=int, default=1_000_000)
    args = parser.parse_args()
    url = parse_url(args.db)
    config = BenchConfig(db_url=args.db, seconds=args.seconds)
    figures: dict[str, list[float]] = {"sysbench": [], "asyncmy": [], "mysqlslap": []}
    for _ in range(args.rounds):
        reference = sysbench_reference(url, "point_reads", config, {"posts": args.posts, "users": 1})
        figures["sysbench"].append(reference.measurement.per_second if reference else 0.0)
        figures["asyncmy"].append(asyncio.run(asyncmy_rate(url, args.seconds, args.posts)))
        figures["mysqlslap"].append(mysqlslap_rate(url, int(figures["asyncmy"][-1] * args.seconds)))
    for client, rates in figures.items():
        print(
            f"{client:<10} "
            + "  ".join(f"{r:>8,.0f}" for r in rates)
            + f"   median {sorted(rates)[len(rates) // 2]:,.0f} reads/s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
