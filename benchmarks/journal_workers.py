"""Readers as threads or as processes? The journal test's readers on timelines, both ways, alternating.

    python benchmarks/journal_workers.py --db sqlite:///chirp.db [--readers 7] [--seconds 5] [--rounds 3]

apsw releases the GIL while SQLite works, so threads might be enough; the rest of each read (building
rows, the engine's session, the event loop) holds it. This runs the readers alone, and the readers
with a writer flat out, each way in turn, and prints reads/s and read p99 per round and the median.
The database is used as it is (WAL or DELETE, from the URL); the writer's posts are deleted after.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys

from dbladder.bench.journal import WRITER_STREAM, WorkerSpec, run_workers, summarise
from dbladder.bench.rounds import data_sizes
from dbladder.bench.statements import DELETE_POSTS_AFTER
from dbladder.engines import opened


async def sizes_of(url: str) -> dict[str, int]:
    async with opened(url) as engine:
        return await data_sizes(engine)


async def delete_after(url: str, highest: int) -> None:
    async with opened(url) as engine, engine.read() as session:
        await session.execute(DELETE_POSTS_AFTER, (highest,))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--readers", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sizes = asyncio.run(sizes_of(args.db))
    figures: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(args.rounds):
        for writer in (False, True):
            for kind in ("threads", "processes"):
                specs = [
                    WorkerSpec("reader", args.db, args.seconds, stream, 1, sizes)
                    for stream in range(args.readers)
                ]
                if writer:
                    specs.append(
                        WorkerSpec(
                            "writer", args.db, args.seconds, WRITER_STREAM, 1, sizes, operation="create_post"
                        )
                    )
                row = summarise("sqlite", "", "", run_workers(specs, kind))
                asyncio.run(delete_after(args.db, sizes["posts"]))
                phase = "readers + writer flat out" if writer else "readers only"
                figures.setdefault((phase, kind), []).append((row["reads_per_s"], row["read_p99_ms"]))
                rate, p99 = row["reads_per_s"], row["read_p99_ms"]
                print(f"{phase:<26} {kind:<10} {rate:>8,.0f} reads/s  p99 {p99:.2f} ms", flush=True)
    print("medians:")
    for (phase, kind), runs in figures.items():
        rate = statistics.median(r for r, _ in runs)
        p99 = statistics.median(p for _, p in runs)
        print(f"{phase:<26} {kind:<10} {rate:>8,.0f} reads/s  p99 {p99:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
