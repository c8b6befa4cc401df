"""Managed servers: seconds to create one, to restart it after a kill -9 and after a clean stop.

    python benchmarks/servers.py [--repeat 3] [--engines postgresql,mariadb] [--rows 100000]

Each repeat, for each engine in turn (so that other work on the machine falls on both alike):
`start_managed` (its own timings: initdb or mariadb-install-db, start until the first connection,
creating the `dbladder` database), `--rows` rows written in one committed transaction (WAL and
redo log for the recovery to replay), a kill -9 and a restart (crash recovery), a clean stop and
a restart, and the removal. Printed: the median and every figure of each step.

The reference, in the same run: the setup program alone with the options dbladder does not use,
(initdb with its fsync, mariadb-install-db with the test database and the default root account),
so the cost of each choice shows as a ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from dbladder.engines import EngineOptions, opened
from dbladder.engines.base import Column, Schema, Table
from dbladder.servers import kind_for, start_managed
from dbladder.servers.kind import OsUser

THINGS = Table("things", (Column("id", "bigint"), Column("label", "text", max_length=40)), ("id",))


async def write_rows(url: str, rows: int) -> None:
    async with opened(url, EngineOptions(pool_size=1)) as engine:
        await engine.recreate_schema(Schema(tables=(THINGS,)))
        await engine.bulk_load(THINGS, ((n, f"row {n} of the crash test") for n in range(rows)))


async def count_rows(url: str) -> int:
    async with opened(url, EngineOptions(pool_size=1)) as engine, engine.read() as session:
        row = await session.fetch_one("SELECT count(*) FROM things")
        return int(row[0]) if row else -1


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def one_round(engine: str, rows: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    began = time.perf_counter()
    server = start_managed(engine)
    figures["create (total)"] = time.perf_counter() - began
    for step in ("init", "start", "database"):
        figures[f"  {step}"] = server.timings[step]
    try:
        asyncio.run(write_rows(server.url, rows))
        figures["kill -9"] = timed(server.kill)
        figures["restart after kill"] = server.restart()
        if asyncio.run(count_rows(server.url)) != rows:
            raise SystemExit(f"{engine}: committed rows lost after kill -9")
        figures["clean stop"] = timed(server.stop)
        figures["restart after stop"] = server.restart()
    finally:
        figures["remove"] = timed(server.remove)
    return figures


def setup_reference(engine: str, repeat: int) -> dict[str, float]:
    """The setup program alone, with dbladder's options and with the ones it does not use; which
    goes first alternates from repeat to repeat (the first one after a removal is slower)."""
    kind = kind_for(engine)
    binaries, user = kind.find_binaries(), kind.os_user()
    figures = {}
    with tempfile.TemporaryDirectory(prefix="dbladder-bench-") as scratch:
        folder = Path(scratch)
        folder.chmod(0o755)
        if user is not None and engine == "postgresql":
            user.own(folder)  # initdb runs as that user and creates its folder here
        if engine == "postgresql":
            variants = {
                "initdb, dbladder's options (--no-sync)": ["--no-sync"],
                "initdb, with its fsync": [],
            }
            for n, (label, extra) in enumerate(_alternated(variants, repeat)):
                data = folder / f"data{n}"
                command = [binaries["initdb"], "-D", str(data), "-U", "postgres", "--auth=trust"]
                figures[label] = _run([*command, "--encoding=UTF8", "--locale=C", *extra], user, folder)
        else:
            run_as = ["--user=" + user.name] if user else []
            base = [binaries["mariadb-install-db"], "--no-defaults", *run_as]
            variants = {
                "install-db, dbladder's options": [
                    "--auth-root-authentication-method=normal",
                    "--skip-test-db",
                ],
                "install-db, defaults (test database, socket-only root)": [],
            }
            for n, (label, extra) in enumerate(_alternated(variants, repeat)):
                data = folder / f"data{n}"
                figures[label] = _run([*base, f"--datadir={data}", *extra], None, folder)
    return figures


def _alternated(variants: dict[str, list[str]], repeat: int) -> list[tuple[str, list[str]]]:
    items = list(variants.items())
    return items if repeat % 2 == 0 else items[::-1]


def _run(command: list[str], user: OsUser | None, cwd: Path) -> float:
    kwargs = user.popen_args() if user else {}
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, capture_output=True, **kwargs)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--engines", default="postgresql,mariadb")
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    engines = [kind_for(name).engine for name in args.engines.split(",")]
    print(
        f"{platform.node()}: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; {args.rows:,} rows written"
    )
    for engine in engines:
        print(f"  {engine}: {kind_for(engine).version(kind_for(engine).find_binaries())}")
    results: dict[str, dict[str, list[float]]] = {e: {} for e in engines}
    for repeat in range(args.repeat):
        for engine in engines:
            for figures in (one_round(engine, args.rows), setup_reference(engine, repeat)):
                for step, seconds in figures.items():
                    results[engine].setdefault(step, []).append(seconds)
    width = max(len(step) for steps in results.values() for step in steps)
    for engine in engines:
        print(f"\n{engine}{'':<{width - len(engine)}}  median s  every run")
        for step, values in results[engine].items():
            every = " / ".join(f"{v:.2f}" for v in values)
            print(f"{step:<{width}}  {statistics.median(values):8.2f}  {every}")


if __name__ == "__main__":
    main()
