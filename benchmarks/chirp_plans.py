"""The plans of Chirp's queries on a seeded database: EXPLAIN on SQLite and MariaDB, EXPLAIN ANALYZE
on PostgreSQL.

    python benchmarks/chirp_plans.py --db URL [--user 77] [query ...]

Queries: timeline, post, profile_user, profile_posts, like_check, follow_check (all by default).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from dbladder.engines import opened
from dbladder.workloads.chirp import operations as ops
from dbladder.workloads.chirp.data import handle_of


def queries(user: int) -> dict[str, tuple[str, tuple]]:
    return {
        "timeline": (ops.TIMELINE, (user,)),
        "post": (ops.POST_BY_ID, (user,)),
        "profile_user": (ops.USER_BY_HANDLE, (handle_of(user),)),
        "profile_posts": (ops.USER_POSTS, (user,)),
        "like_check": (ops.LIKE_CHECK, (user, 2, user, 2)),
        "follow_check": (ops.FOLLOW_CHECK, (user, 2, user, 2)),
    }


def inline(sql: str, args: tuple) -> str:
    """The statement with its arguments written in (EXPLAIN ANALYZE on the servers takes no parameters)."""
    for value in args:
        sql = sql.replace("?", f"'{value}'" if isinstance(value, str) else str(value), 1)
    return sql


async def main(url: str, user: int, chosen: list[str]) -> None:
    async with opened(url) as engine, engine.read() as session:
        for name, (sql, args) in queries(user).items():
            if chosen and name not in chosen:
                continue
            print(f"== {name}")
            if engine.name == "sqlite":
                for row in await session.fetch_all("EXPLAIN QUERY PLAN " + sql, args):
                    print("  ", row[3])
            elif engine.name == "postgresql":
                for row in await session.fetch_all("EXPLAIN (ANALYZE, BUFFERS) " + inline(sql, args)):
                    print("  ", row[0])
            else:
                for row in await session.fetch_all("EXPLAIN " + inline(sql, args)):
                    print("  ", row)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--user", type=int, default=77)
    parser.add_argument("query", nargs="*")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.db, arguments.user, arguments.query))
    sys.exit(0)
