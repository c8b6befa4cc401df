"""How long does Chirp's integrity check take to find its acknowledged writes, against one query per write?

    .venv/bin/python benchmarks/integrity_chirp.py URL [URL ...] [--scale 0.02]

For each database: Chirp seeded at `--scale` of the post's size (0.02: 1,000 users, 20,000 posts,
about 100,000 likes and 50,000 follows), every seeded post, like and follow then acknowledged as if
a run had written it, and the check's lookup of those writes timed two ways on the same data:

  batched     what `verify` does (dbladder/workloads/chirp/verify.py): BATCH keys a query, the
              pairs as row values
  one by one  the reference: one query per acknowledged write, as the check did before

Then the whole check (`chirp.workload.verify`, the invariants over every table included), which
must find nothing lost. Prints the seconds of each and the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from dbladder.data.seeding import seed
from dbladder.engines import EngineOptions, opened
from dbladder.engines.base import Session
from dbladder.workloads import chirp
from dbladder.workloads.base import DataSpec
from dbladder.workloads.chirp import verify
from dbladder.workloads.chirp.endpoints import body_crc

ONE_POST = "SELECT user_id, created_at, body FROM posts WHERE id = ?"
ONE_LIKE = "SELECT count(*) FROM likes WHERE user_id = ? AND post_id = ?"
ONE_FOLLOW = "SELECT count(*) FROM follows WHERE follower_id = ? AND followee_id = ?"


async def one_by_one(session: Session, acknowledged: dict[str, list[tuple[Any, ...]]]) -> int:
    """The writes found, one query each."""
    found = 0
    for post_id, author, created_at, crc in acknowledged["create_post"]:
        row = await session.fetch_one(ONE_POST, (post_id,))
        found += row is not None and (row[0], row[1], body_crc(str(row[2]))) == (author, created_at, crc)
    for name, sql in (("like", ONE_LIKE), ("follow", ONE_FOLLOW)):
        for pair in acknowledged[name]:
            row = await session.fetch_one(sql, pair)
            found += bool(row and row[0])
    return found


async def batched(session: Session, acknowledged: dict[str, list[tuple[Any, ...]]]) -> int:
    """The writes found, as `verify` looks them up (BATCH a query)."""
    lost, corrupted = await verify.lost_and_corrupted(session, acknowledged)
    return sum(len(records) for records in acknowledged.values()) - lost - corrupted


async def measure(url: str, scale: float) -> None:
    config = chirp.ChirpConfig.at_scale(scale, seed=1)
    data = DataSpec(1, config.sizes)
    async with opened(url, EngineOptions(pool_size=2)) as engine:
        await seed(engine, chirp.workload, data)
        async with engine.read() as session:
            posts = await session.fetch_all("SELECT id, user_id, created_at, body FROM posts")
            likes = await session.fetch_all("SELECT user_id, post_id FROM likes")
            follows = await session.fetch_all("SELECT follower_id, followee_id FROM follows")
        acknowledged = {
            "create_post": [(p[0], p[1], p[2], body_crc(str(p[3]))) for p in posts],
            "like": [tuple(pair) for pair in likes],
            "follow": [tuple(pair) for pair in follows],
        }
        writes = sum(len(records) for records in acknowledged.values())
        seconds = {}
        async with engine.read() as session:
            for name, lookup in (("one by one", one_by_one), ("batched", batched)):
                started = time.perf_counter()
                found = await lookup(session, acknowledged)
                seconds[name] = time.perf_counter() - started
                if found != writes:
                    raise SystemExit(f"{name} found {found:,} of the {writes:,} writes")
        started = time.perf_counter()
        result = await chirp.workload.verify(engine, data, acknowledged)
        whole = time.perf_counter() - started
    print(
        f"{engine.name:<10} {writes:,} acknowledged writes ({len(posts):,} posts, {len(likes):,} likes, "
        f"{len(follows):,} follows): one by one {seconds['one by one']:.2f} s, batched "
        f"{seconds['batched']:.2f} s ({seconds['one by one'] / seconds['batched']:.1f}x faster); "
        f"the whole check {whole:.2f} s, lost {result['lost']}, violations {len(result['violations'])}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("urls", nargs="+")
    parser.add_argument("--scale", type=float, default=0.02)
    options = parser.parse_args()
    for url in options.urls:
        asyncio.run(measure(url, options.scale))


if __name__ == "__main__":
    main()
