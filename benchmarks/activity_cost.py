"""What the activity probes cost: the sampler's own CPU and the load it adds to the database.

    python benchmarks/activity_cost.py [sqlite postgresql mariadb] [--seconds 4] [--rounds 3]
        [--interval SECONDS]

For each engine, in a database of its own (made and dropped here), rounds of `--seconds` each:
  * back to back: readings taken flat out, and what one costs this process and the server (the
    server thread that grew most meanwhile: the probe's own backend or connection thread), times
    the readings a second at the interval; the steadiest figure on a shared machine;
  * idle: the server's CPU with nothing connected, without the sampler and with it (at the
    probe's default interval, or `--interval`): what the readings alone cost the server;
  * under load: a child process runs point reads flat out on 4 connections through the engine,
    once without the sampler and once with it in this process, alternating over `--rounds`: the
    reads per second and the server's CPU per read with the sampler, as ratios of those without.
The sampler's own CPU (its thread's, readings included) is printed as a share of one core.

SQLite has no server: its "server CPU" is empty, the reads run inside the child, and the ratio of
reads per second is what the probe's file reads cost them. The machine is shared, so the ratios
under load carry the run's noise: each round's ratio is printed, and their median.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import psutil

from dbladder.engines import create_engine
from dbladder.engines.activity import ActivitySampler, create_probe
from dbladder.observe.database import database_processes
from dbladder.urls import parse_url

ADMIN = {
    "postgresql": "postgresql://postgres@127.0.0.1:5432/postgres",
    "mariadb": "mariadb://root@127.0.0.1:3306/test",
}
ROWS = 1000
CONNECTIONS = 4


async def setup(url: str) -> None:
    engine = create_engine(url)
    await engine.open()
    try:
        async with engine.transaction() as session:
            await session.execute("DROP TABLE IF EXISTS bench")
            await session.execute("CREATE TABLE bench (id INT PRIMARY KEY, n INT NOT NULL)")
            for row in range(ROWS):
                await session.execute("INSERT INTO bench VALUES (?, ?)", (row, row))
    finally:
        await engine.close()


async def admin(engine: str, statement: str) -> None:
    server = create_engine(ADMIN[engine])
    await server.open()
    try:
        async with server.read() as session:
            await session.execute(statement)
    finally:
        await server.close()


def reads(url: str, seconds: float, out: Any) -> None:
    """Point reads flat out on CONNECTIONS connections for `seconds`; put how many on `out`."""

    async def main() -> int:
        engine = create_engine(url)
        await engine.open()
        done = 0

        async def loop(end: float) -> None:
            nonlocal done
            while time.perf_counter() < end:
                async with engine.read() as session:
                    await session.fetch_one("SELECT n FROM bench WHERE id = ?", (random.randrange(ROWS),))
                done += 1

        try:
            end = time.perf_counter() + seconds
            await asyncio.gather(*(loop(end) for _ in range(CONNECTIONS)))
        finally:
            await engine.close()
        return done

    out.put(asyncio.run(main()))


def server_cpu(url: str) -> float:
    """The database server's CPU seconds so far: its live processes', and those of the backends
    that have exited (PostgreSQL forks one per connection; the postmaster reaps them, so their
    time is in its children's)."""
    found = database_processes(url)
    total = 0.0
    for pid in found():
        try:
            times = psutil.Process(pid).cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
        if pid == found.root_pid:
            total += times.children_user + times.children_system
    return total


def thread_cpu(url: str) -> dict[tuple[int, int], float]:
    """CPU seconds of every thread of the database server's processes, by (pid, thread id)."""
    found = {}
    for pid in database_processes(url)():
        try:
            for thread in psutil.Process(pid).threads():
                found[(pid, thread.id)] = thread.user_time + thread.system_time
        except psutil.Error:
            continue
    return found


def per_reading(url: str, seconds: float) -> tuple[int, float, float]:
    """Readings taken back to back for about `seconds`: how many, and per reading this process's
    CPU and the server's, as the CPU of the server thread that grew most meanwhile (the probe's
    backend or connection thread, busy with nothing else), so other clients' work is left out."""

    async def loop() -> tuple[int, float, float]:
        probe = create_probe(url)
        await probe.open()
        try:
            # The server's threads are read while the probe is connected: a PostgreSQL backend
            # goes with its connection, and its time with it.
            before = thread_cpu(url)
            cpu = time.process_time()
            count = 0
            end = time.perf_counter() + seconds
            while time.perf_counter() < end:
                await probe.read()
                count += 1
            cpu = time.process_time() - cpu
            after = thread_cpu(url)
        finally:
            await probe.close()
        grown = [after[key] - before.get(key, 0.0) for key in after]
        return count, cpu / count, max(grown, default=0.0) / count

    return asyncio.run(loop())


def round_of(url: str, seconds: float, interval: float | None, load: bool) -> dict[str, float]:
    """One round: reads done (when loaded), the server's CPU, and the sampler's CPU when sampled."""
    sampler = ActivitySampler(create_probe(url), interval) if interval is not None else None
    if sampler is not None:
        sampler.start()
    before = server_cpu(url)
    began = time.perf_counter()
    done = 0
    if load:
        context = multiprocessing.get_context("spawn")
        out = context.Queue()
        child = context.Process(target=reads, args=(url, seconds, out))
        child.start()
        done = out.get(timeout=seconds + 60)
        child.join()
    else:
        time.sleep(seconds)
    took = time.perf_counter() - began
    cpu = server_cpu(url) - before
    figures = {"seconds": took, "reads": done, "server_cpu": cpu}
    if sampler is not None:
        sampler.stop()
        figures["sampler_cpu"] = sampler.cpu_seconds
        figures["readings"] = len(sampler.readings())
        if sampler.warnings:
            print("  warnings:", sampler.warnings, file=sys.stderr)
    return figures


def measure(engine: str, seconds: float, rounds: int, interval: float | None) -> None:
    name = f"dbladder_cost_{uuid.uuid4().hex[:10]}"
    folder = tempfile.TemporaryDirectory()
    if engine == "sqlite":
        url = f"sqlite:///{Path(folder.name) / 'cost.db'}"
    else:
        url = parse_url(ADMIN[engine]).with_database(name).raw
        quoted = f'"{name}"' if engine == "postgresql" else f"`{name}`"
        asyncio.run(admin(engine, f"CREATE DATABASE {quoted}"))
    probe = create_probe(url)
    every = probe.default_interval if interval is None else interval
    try:
        asyncio.run(setup(url))
        count, client, server = per_reading(url, seconds)
        idle_off = round_of(url, seconds, None, load=False)
        idle_on = round_of(url, seconds, every, load=False)
        rate_ratios, cpu_ratios, sampler_shares = [], [], []
        for _ in range(rounds):
            off = round_of(url, seconds, None, load=True)
            on = round_of(url, seconds, every, load=True)
            rate_ratios.append((on["reads"] / on["seconds"]) / (off["reads"] / off["seconds"]))
            if off["server_cpu"] > 0:
                cpu_ratios.append((on["server_cpu"] / on["reads"]) / (off["server_cpu"] / off["reads"]))
            sampler_shares.append(on["sampler_cpu"] / on["seconds"])
            print(
                f"  round: {off['reads'] / off['seconds']:,.0f} reads/s without, "
                f"{on['reads'] / on['seconds']:,.0f} with ({rate_ratios[-1]:.3f}); "
                f"sampler {100 * sampler_shares[-1]:.2f} % of a core, {on['readings']:.0f} readings"
            )
    finally:
        if engine != "sqlite":
            quoted = f'"{name}" WITH (FORCE)' if engine == "postgresql" else f"`{name}`"
            asyncio.run(admin(engine, f"DROP DATABASE IF EXISTS {quoted}"))
        folder.cleanup()
    idle_extra = (idle_on["server_cpu"] - idle_off["server_cpu"]) / seconds
    print(f"{engine}, interval {every:g} s ({1 / every:g} readings/s):")
    print(
        f"  {count} readings back to back: {1e6 * client:.0f} us of this process's CPU each, "
        f"{1e6 * server:.0f} us of the server's; at {1 / every:g} a second, "
        f"{100 * client / every:.2f} % and {100 * server / every:.2f} % of a core"
    )
    print(
        "  sampler thread, idle database: "
        f"{100 * idle_on['sampler_cpu'] / idle_on['seconds']:.2f} % of a core"
    )
    print(
        f"  sampler thread, under load:    {100 * statistics.median(sampler_shares):.2f} % of a core (median)"
    )
    if engine != "sqlite":
        print(
            f"  server CPU, idle: {100 * idle_off['server_cpu'] / seconds:.2f} % of a core without, "
            f"{100 * idle_on['server_cpu'] / seconds:.2f} % with: {100 * idle_extra:+.2f} % "
            "(the server's other clients count too)"
        )
        print(f"  server CPU per read under load, with/without: {statistics.median(cpu_ratios):.3f} (median)")
    print(f"  reads per second under load, with/without: {statistics.median(rate_ratios):.3f} (median)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engines", nargs="*", default=["sqlite", "postgresql", "mariadb"])
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--interval", type=float, default=None, help="seconds between readings")
    options = parser.parse_args()
    for engine in options.engines:
        measure(engine, options.seconds, options.rounds, options.interval)


if __name__ == "__main__":
    main()
