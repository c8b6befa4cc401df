"""dbladder's own CPU per direct-mode request, with the database taken out of the picture.

    python benchmarks/direct_overhead.py [--engine stub|sqlite] [--requests 200000] [--repeats 5]
                                         [--instructions]

Direct mode on PostgreSQL is a Python process sharing the machine with the server: every
microsecond of CPU it spends per request is taken from the backends (docs/direct.md). This
benchmark measures the Python part alone. The PostgreSQL engine runs as in a run, except that its
connections are stubs: asyncpg's protocol is replaced by one whose `bind_execute` suspends once
(an event-loop turn, as a round trip does) and answers with rows of the shop's shapes (a product,
a page of 20, an order and 3 items). Four clients drive that stub flat out with the shop's read
mix (8 connections; requests beyond them wait in a line), each adding one layer to the last:

  bare        the least a Python client on asyncpg does: a task per request awaiting
              `bind_execute` for the mix's statements, as benchmarks/direct.py's bare loop does
  operations  the shop's operations instead: the engine's read(), pool and sessions, the rows
              made into the answers the service would send
  target      through DirectTarget.send, with a callback that only counts
  dbladder    the whole direct path: the open-model Generator drawing the mix (behind schedule
              from the start, so flat out), the recorder's histograms and outcomes

It prints the CPU per request of each (best of `--repeats`, the four alternating) and what each
layer adds, measured in the same run. `dbladder` minus `bare` is what dbladder itself costs per
request before any byte reaches a server.

`--engine sqlite` runs the same four layers on a real SQLite file instead (the shop seeded with
20,000 products and 100,000 orders, 4 connections): there the engine runs in the generator
process, so this is direct mode's whole cost per request, and `bare` is a plain apsw loop over the
same statements, the native reference's own loop.

`--instructions` counts instead of timing: each client runs once under valgrind's callgrind for
2,000 and for 12,000 requests (`--requests`), and the difference over 10,000 is its instructions
per request (start-up and seeding cancel out). A CPU second moves by a fifth from one minute to the
next on a shared machine (docs/direct.md); a whole path's count stays within about 1.5 % from run
to run and a layer's within about 2,000, so a change of a few thousand instructions per request
shows. It does not see what cache misses or a slower core cost, and work the wall clock drives (a
timer every 0.1 s, say) is counted some 50 times too often per request, as callgrind runs the
program that much slower: the direct path has no such work on SQLite, and on the stub only the
target's deadline sweep. Every client's count includes drawing its requests, which is also
counted on its own. On SQLite it prints the bound the counts put on direct mode: at equal
instructions per cycle, a process running direct mode flat out does at most (bare - draw) /
dbladder of what the same process does with the bare loop (the reference draws before its clock
starts, direct mode as it goes), before any headroom for the pass mark.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import apsw
import uvloop
from bare_client import keep, read_on_protocol

from dbladder.bench.native import draw_requests
from dbladder.bench.native_config import read_statements
from dbladder.data.seeding import seed as seed_data
from dbladder.engines import EngineOptions, create_engine, opened
from dbladder.engines.base import Engine
from dbladder.engines.postgres.connection import _Connection, rewrite_placeholders
from dbladder.engines.postgres.engine import PostgresEngine
from dbladder.load.clock import MonotonicClock
from dbladder.load.executors.open import LATE_BURST, Generator
from dbladder.load.mix import Mix, requests
from dbladder.load.targets.direct import DirectTarget
from dbladder.plans import PlannedLevel
from dbladder.urls import parse_url
from dbladder.workloads.base import DataSpec
from dbladder.workloads.registry import load_workload
from dbladder.workloads.shop import schema as shop

MIX = Mix({"product": 50, "page": 30, "order": 20})
SIZES = {"products": 20_000, "orders": 100_000}
CONNECTIONS = 8
SQLITE_CONNECTIONS = 4  # direct mode's per process on 2 cores: 2 processes share a pool of 8

PRODUCT = (1, "product 1", "cat-01", 1999, 10)
ANSWERS: dict[str, list[tuple[Any, ...]]] = {
    shop.PRODUCT_BY_ID: [PRODUCT],
    shop.PRODUCTS_PAGE: [PRODUCT] * 20,
    shop.ORDER_BY_ID: [(1, 7, 5997, "2026-01-01 00:00:00+00")],
    shop.ORDER_ITEMS: [(1, 3, 1999)] * 3,
}
REWRITTEN = {rewrite_placeholders(sql): rows for sql, rows in ANSWERS.items()}


class _Statement:
    """What the engine keeps of a prepared statement: asyncpg's `_state`, here the SQL's rows."""

    def __init__(self, rows: list[tuple[Any, ...]]):
        self._state = rows


class _Protocol:
    """asyncpg's protocol as the engine calls it: `bind_execute` suspends once and answers."""

    async def bind_execute(
        self, state: list[tuple[Any, ...]], args: Any, portal: str, limit: int, *_: Any
    ) -> tuple[list[tuple[Any, ...]], bytes, bool]:
        await _Turn()
        return (state[:limit] if limit else state), b"SELECT", True


class _Raw:
    """An asyncpg connection as far as the engine uses it during a read."""

    def __init__(self) -> None:
        self._protocol = _Protocol()

    async def prepare(self, sql: str) -> _Statement:
        return _Statement(REWRITTEN[sql])

    def is_closed(self) -> bool:
        return False

    def is_in_transaction(self) -> bool:
        return False

    def terminate(self) -> None:
        pass


class _Turn:
    """An awaitable that suspends for exactly one event-loop turn, as a future answered by the
    loop's next callback would, without the cost of a socket."""

    def __await__(self) -> Any:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        loop.call_soon(future.set_result, None)
        return future.__await__()


def stub_engine() -> PostgresEngine:
    """The PostgreSQL engine with stub connections: everything of a read but the server."""
    engine = PostgresEngine(
        parse_url("postgresql:///stub?host=/nonexistent"), EngineOptions(pool_size=CONNECTIONS)
    )

    async def connect(database: str | None = None) -> _Connection:
        return _Connection(_Raw())  # type: ignore[arg-type]

    engine._pool._connect = connect  # type: ignore[method-assign]
    return engine


class Setup:
    """Where the four clients run: the stub engine, or a seeded SQLite file."""

    def __init__(self, kind: str, folder: str = ""):
        self.kind = kind
        self.path = f"{folder}/shop.db"
        self.connections = CONNECTIONS if kind == "stub" else SQLITE_CONNECTIONS

    async def engine(self) -> Engine:
        if self.kind == "stub":
            return stub_engine()
        engine = create_engine(f"sqlite:///{self.path}", EngineOptions(pool_size=self.connections))
        await engine.open()
        return engine

    async def seed(self) -> None:
        if self.kind == "sqlite":
            async with opened(f"sqlite:///{self.path}", EngineOptions(pool_size=1)) as engine:
                await seed_data(engine, load_workload("shop"), DataSpec(1, dict(SIZES)))


async def bare(setup: Setup, count: int) -> float:
    """CPU seconds for `count` requests of the mix straight on the driver: a task each on the stub
    protocol, or one plain apsw loop."""
    if setup.kind == "sqlite":
        return bare_apsw(setup.path, count)
    return await bare_stub(count)


def bare_apsw(path: str, count: int) -> float:
    """CPU seconds for `count` requests of the mix run by a plain apsw loop, as the native reference's."""
    workload = load_workload("shop")
    statements = read_statements(workload)
    work = [(statements[name], args) for name, args in draw_requests(workload, dict(SIZES), count)]
    db = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY, statementcachesize=100)
    execute = db.execute
    started = time.process_time()
    for sqls, args in work:
        for sql in sqls:
            execute(sql, args).fetchall()
    spent = time.process_time() - started
    db.close()
    return spent


async def bare_stub(count: int) -> float:
    """CPU seconds for `count` requests of the mix, a task each straight on the stub protocol."""
    work = draw_requests(load_workload("shop"), dict(SIZES), count)
    free = [_Protocol() for _ in range(CONNECTIONS)]
    waiting: list[tuple[str, Any]] = []
    states = tuple(ANSWERS.values())  # the product, the page, the order and its items, in that order

    async def one(protocol: _Protocol, kind: str, args: Any) -> None:
        while True:
            await read_on_protocol(protocol, states, kind, args)
            if not waiting:
                break
            kind, args = waiting.pop()
        free.append(protocol)

    loop = asyncio.get_running_loop()
    started = time.process_time()
    for position, (kind, args) in enumerate(work):
        if free:
            keep(loop.create_task(one(free.pop(), kind, args)))
        else:
            waiting.append((kind, args))
        if position % LATE_BURST == LATE_BURST - 1:
            await asyncio.sleep(0)
    while len(free) < CONNECTIONS:
        await asyncio.sleep(0)
    return time.process_time() - started


def drawn(count: int) -> list[Any]:
    """The first `count` requests of the mix, as (operation index, args)."""
    stream = requests(load_workload("shop"), MIX, SIZES, stream=0)
    return [next(stream) for _ in range(count)]


async def operations(setup: Setup, count: int) -> float:
    """CPU seconds for `count` requests run by the shop's operations on the engine: a task each on
    the stub, driven inline on SQLite (whose calls never suspend, as DirectTarget runs them)."""
    workload = load_workload("shop")
    engine = await setup.engine()
    context = await workload.open(engine)
    work = drawn(count)
    run = [operation.run for operation in workload.operations]
    if setup.kind == "sqlite":
        started = time.process_time()
        for index, args in work:
            try:
                run[index](context, args).send(None)
            except StopIteration:
                continue
            raise SystemExit("a SQLite operation suspended; this layer drives them inline")
        spent = time.process_time() - started
        await engine.close()
        return spent
    free = [True] * CONNECTIONS
    waiting: list[Any] = []

    async def one(request: Any) -> None:
        while True:
            await run[request[0]](context, request[1])
            if not waiting:
                break
            request = waiting.pop()
        free.append(True)

    loop = asyncio.get_running_loop()
    started = time.process_time()
    for position, request in enumerate(work):
        if free:
            free.pop()
            keep(loop.create_task(one(request)))
        else:
            waiting.append(request)
        if position % LATE_BURST == LATE_BURST - 1:
            await asyncio.sleep(0)
    while len(free) < CONNECTIONS:
        await asyncio.sleep(0)
    return time.process_time() - started


async def target(setup: Setup, count: int) -> float:
    """CPU seconds for `count` requests sent through DirectTarget, the callback only counting them."""
    workload = load_workload("shop")
    engine = await setup.engine()
    context = await workload.open(engine)
    direct = DirectTarget(workload, context, limit=count, timeout=60.0, connections=setup.connections)
    work = drawn(count)
    answered = [0]

    def counted(token: Any, result: Any, body: Any) -> None:
        answered[0] += 1

    send = direct.send
    started = time.process_time()
    for position, request in enumerate(work):
        send(request, counted, None)
        if position % LATE_BURST == LATE_BURST - 1:
            await asyncio.sleep(0)
    while answered[0] < count:
        await asyncio.sleep(0)
    spent = time.process_time() - started
    direct.close()
    await engine.close()
    return spent


async def dbladder_direct(setup: Setup, count: int) -> float:
    """CPU seconds for `count` requests through the Generator, DirectTarget, the shop and the engine."""
    workload = load_workload("shop")
    engine = await setup.engine()
    context = await workload.open(engine)
    direct = DirectTarget(workload, context, limit=count, timeout=60.0, connections=setup.connections)
    # One level whose due times are 1 us apart, on the real clock: the generator is behind from
    # the start and sends flat out, letting answers in every LATE_BURST requests, as at a ceiling.
    level = PlannedLevel(index=0, rate=1_000_000, start=0.0, hold=count / 1_000_000, warmup=0.0)
    stream = requests(workload, MIX, SIZES, stream=0)
    names = tuple(operation.name for operation in workload.operations)
    generator = Generator([level], MonotonicClock(spin=0), stream, direct, operation_names=names)
    started = time.process_time()
    recorder = await generator.run()
    spent = time.process_time() - started
    outcomes = recorder.levels[0].outcomes
    if outcomes["2xx"] != count:
        raise SystemExit(
            f"the direct path answered {outcomes['2xx']:,} of {count:,} requests 2xx: {outcomes}"
        )
    await workload.close(context)
    await engine.close()
    return spent


CLIENTS: dict[str, Callable[[Setup, int], Coroutine[Any, Any, float]]] = {
    "bare": bare,
    "operations": operations,
    "target": target,
    "dbladder": dbladder_direct,
}


def timed(options: argparse.Namespace) -> None:
    """Each client's CPU per request, best of `--repeats`, the clients alternating."""
    n = options.requests or 200_000
    least = dict.fromkeys(CLIENTS, float("inf"))
    with tempfile.TemporaryDirectory(prefix="dbladder-overhead-") as folder:
        setup = Setup(options.engine, folder)
        uvloop.run(setup.seed())
        for _ in range(options.repeats):  # alternating, so that a noisy minute hits every client
            for name, client in CLIENTS.items():
                gc.collect()
                least[name] = min(least[name], uvloop.run(client(setup, n)))
    print_layers(
        f"{n:,} requests of the shop's read mix on {where(options)}, best of {options.repeats}",
        "us CPU/request",
        {name: seconds / n * 1e6 for name, seconds in least.items()},
        ".2f",
    )
    print(
        f"dbladder costs {(least['dbladder'] - least['bare']) / n * 1e6:.2f} us per request of its own, "
        f"{least['dbladder'] / least['bare']:.1f}x the bare client on the same engine"
    )


DRAW = "draw"
"""What --instructions also counts on its own: drawing the requests, as the bare clients do first."""


def where(options: argparse.Namespace) -> str:
    return "a stub of asyncpg's protocol" if options.engine == "stub" else "a SQLite file"


def print_layers(heading: str, column: str, per_request: dict[str, float], spec: str) -> None:
    """The clients' figures per request, each with what its layer adds to the one before."""
    print(f"Python {platform.python_version()}, uvloop, {heading}")
    print(f"{'client':<12} {column:>15} {'the layer adds':>15}")
    previous = None
    for name, value in per_request.items():
        added = "" if previous is None else f"{value - previous:+15{spec}}"
        print(f"{name:<12} {value:15{spec}} {added}")
        previous = value


def callgrind_instructions(engine: str, folder: str, client: str, count: int) -> int:
    """What callgrind counted in a whole run of this script doing `count` requests of one client."""
    command = [
        "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
        sys.executable, __file__, "--engine", engine, "--one", client, "--requests", str(count),
        "--folder", folder,
    ]  # fmt: skip
    # A fixed hash seed: str hashing decides dict layouts, and with them a few instructions per lookup.
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    collected = re.search(r"Collected\s*:\s*([\d,]+)", done.stderr)
    if done.returncode or collected is None:
        raise SystemExit(f"callgrind could not count {client} ({count:,} requests):\n{done.stderr[-2000:]}")
    return int(collected.group(1).replace(",", ""))


def counted(options: argparse.Namespace) -> None:
    """Each client's instructions per request: (count(N) - count(N / 6)) / (N - N / 6), under callgrind."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind on the PATH (Debian: apt-get install valgrind)")
    large = options.requests or 12_000
    small = large // 6
    with tempfile.TemporaryDirectory(prefix="dbladder-overhead-") as folder:
        uvloop.run(Setup(options.engine, folder).seed())
        runs = [(client, count) for client in (*CLIENTS, DRAW) for count in (small, large)]
        # Counts do not depend on what else runs, so the runs share the cores.
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            counts = pool.map(lambda run: callgrind_instructions(options.engine, folder, *run), runs)
            totals = dict(zip(runs, counts, strict=True))
    per_request = {
        client: (totals[client, large] - totals[client, small]) / (large - small) for client in CLIENTS
    }
    drawing = (totals[DRAW, large] - totals[DRAW, small]) / (large - small)
    print_layers(
        f"the shop's read mix on {where(options)}: instructions per request, "
        f"(callgrind's count at {large:,} requests - at {small:,}) / {large - small:,}",
        "instructions",
        per_request,
        ",.0f",
    )
    # The bare clients draw their requests before they start, as the native reference does before
    # its clock starts; direct mode draws as it goes, so the draw is dbladder's own cost.
    bare, whole = per_request["bare"] - drawing, per_request["dbladder"]
    print(
        f"every count includes drawing the requests, {drawing:,.0f} instructions a request; without it the "
        f"bare client is {bare:,.0f}, and dbladder costs {whole - bare:,.0f} of its own ({whole / bare:.2f}x)"
    )
    if options.engine == "sqlite":
        print(
            f"at equal instructions per cycle, direct mode flat out does at most {bare / whole:.2f} of the "
            "bare loop's rate in the same processes, before any headroom for the pass mark"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=("stub", "sqlite"), default="stub")
    parser.add_argument(
        "--requests",
        type=int,
        default=0,
        help="requests per repeat (default 200,000; 12,000 with --instructions)",
    )
    parser.add_argument("--repeats", type=int, default=5, help="repeats of each client, alternating")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions per request under callgrind instead of timing",
    )
    # One client once, in a process of its own: what --instructions runs under callgrind.
    parser.add_argument("--one", choices=(*CLIENTS, DRAW), help=argparse.SUPPRESS)
    parser.add_argument("--folder", default="", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.requests < 0:
        parser.error(f"--requests must be 1 or more, not {options.requests}")
    if options.one == DRAW:
        draw_requests(load_workload("shop"), dict(SIZES), options.requests)
    elif options.one:
        uvloop.run(CLIENTS[options.one](Setup(options.engine, options.folder), options.requests))
    elif options.instructions:
        counted(options)
    else:
        timed(options)


if __name__ == "__main__":
    main()
