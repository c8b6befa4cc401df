"""The database's own speed on the shop's read mix: its native client flat out, dbladder nowhere in the way.

    SQLite      a bare apsw loop in each of `processes` processes, one connection each, running the
                mix's statements back to back
    PostgreSQL  pgbench -M prepared with the three reads as weighted scripts (product@50, page@30,
                order@20), `connections` clients on `processes` threads
    MariaDB     sysbench with a Lua script of server-side prepared statements, `connections` threads
                (the fastest client measured here: it beat a bare asyncmy loop in every run of
                benchmarks/direct.py)

The mix is the shop's reads as "Postgres vs MariaDB on two dedicated CPUs" splits them: 50 % a
product by id, 30 % a page of a category, 20 % an order with its items, ids uniform over the rows
in the database. The SQL is the shop workload's own (its operations' statements, through the
registry); the apsw loop draws its requests exactly as direct mode's generator does, and pgbench
and sysbench draw from the same ranges with their own random functions. One operation of the mix
is one request of direct mode, so `dbladder run --target direct --writes 0` on the same database
divided by this rate says how close dbladder comes to the database's own speed (`attach`).

The reference is a closed loop flat out: it measures capacity, which a ceiling under a pass mark
on a schedule does not reach even for the native client (docs/direct.md, "The reference").
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import queue
import random
import shutil
import time
from bisect import bisect_right
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from itertools import accumulate
from typing import Any

from ..engines import opened
from ..engines.base import EngineInfo, EngineOptions
from ..engines.dialect import dialect_of
from ..errors import DbladderError, NotSeeded
from ..roles import RoleLimits, confine_self, format_cpus
from ..urls import DatabaseURL, parse_url, with_password
from ..workloads.base import Args, Draw, Workload
from ..workloads.registry import load_workload
from .native_config import (
    READ_MIX,
    REQUESTS_PER_PROCESS,
    START_TIMEOUT_S,
    WORKLOAD,
    NativeClientFailed,
    NativeClientMissing,
    NativeConfig,
    read_statements,
)
from .native_tools import _pgbench, _sysbench


def missing_client(engine: str) -> str | None:
    """Why the engine's native client cannot run here, in one line; None when it can."""
    client = dialect_of(engine).native_client
    if client.install is None or shutil.which(client.program):
        return None  # SQLite's is apsw, a dependency of dbladder
    return (
        f"{client.program} is not on the PATH, so the {engine} native reference cannot run: {client.install}"
    )


def native_reference(config: NativeConfig, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The native client's rate on the shop's read mix on `config.db_url`, as a plain dict.

    Blocking (processes and subprocesses). Raises NativeClientMissing when pgbench or sysbench is
    not installed, NotSeeded (saying how to seed) when the database has no shop data, and
    NativeClientFailed when the client ran and failed. The dict: `ops_per_s`, `operations`,
    `seconds`, the `client` and its `version`, the `command` (no password in it: pgbench gets it
    from PGPASSWORD, sysbench from a private option file) and its `scripts`, `connections`,
    `processes`, the `mix`, the data `sizes`, the `database`, its `engine` and `server_version`,
    and `measured_at`.
    """
    config = config.checked()
    url = with_password(parse_url(config.db_url), os.environ)
    reason = missing_client(url.engine)
    if reason:
        raise NativeClientMissing(reason)
    workload = load_workload(WORKLOAD)
    info, sizes = asyncio.run(_inspect(url, workload))
    started = datetime.now(UTC).isoformat(timespec="seconds")
    if progress:
        progress(
            f"native reference on {url.redacted}: {sizes['products']:,} products, {sizes['orders']:,} orders"
        )
    measure = {"apsw": _apsw_loops, "pgbench": _pgbench, "sysbench": _sysbench}[
        dialect_of(url).native_client.program
    ]
    measured = measure(url, info, workload, sizes, config)
    operations, seconds = measured.pop("operations"), measured.pop("seconds")
    return {
        **measured,
        "ops_per_s": round(operations / seconds, 1) if seconds > 0 else 0.0,
        "operations": operations,
        "seconds": round(seconds, 3),
        "mix": {name: weight / sum(READ_MIX.values()) for name, weight in READ_MIX.items()},
        "sizes": sizes,
        "database": url.redacted,
        "engine": url.engine,
        "server_version": info.server_version,
        "cpus": format_cpus(config.cpus) if config.cpus is not None else None,
        "measured_at": started,
    }


def attach(result: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
    """The `native` block of a direct-mode result: the reference, the run's ceiling and their ratio."""
    direct = result.get("ceiling_rps")
    rate = reference.get("ops_per_s") or 0.0
    # Four significant figures: a ratio far below 1 (a tiny ladder) keeps its precision too.
    ratio = float(f"{direct / rate:.4g}") if direct is not None and rate > 0 else None
    return {**reference, "direct_rps": direct, "ratio": ratio}


def result_problems(result: dict[str, Any], db_url: str) -> list[str]:
    """Why a result cannot carry the native reference of `db_url`: not direct mode, not the shop's
    read mix, another engine or database. Empty when it can."""
    problems = []
    config = result.get("config") or {}
    if config.get("target") != "direct":
        problems.append(
            f"it is not a direct-mode run (target {config.get('target')!r}); "
            "the reference is for dbladder run --target direct --writes 0"
        )
    workload = result.get("workload") or {}
    mix = {name: share for name, share in (workload.get("mix") or {}).items() if share}
    wanted = {name: weight / sum(READ_MIX.values()) for name, weight in READ_MIX.items()}
    if (
        workload.get("name") != WORKLOAD
        or set(mix) != set(wanted)
        or any(abs(mix[name] - wanted[name]) > 1e-3 for name in wanted)
    ):
        shown = ", ".join(f"{name} {100 * share:g} %" for name, share in mix.items()) or "none recorded"
        problems.append(
            f"its mix is not the shop's reads 50/30/20 (it was {workload.get('name')!r}: {shown}); "
            "run it with --workload shop --writes 0"
        )
    ran_on = (result.get("engine") or {}).get("url") or config.get("db_url") or ""
    try:
        theirs, ours = parse_url(ran_on), parse_url(db_url)
    except DbladderError:
        return [*problems, f"its database URL {ran_on!r} cannot be read"]
    if theirs.engine != ours.engine:
        problems.append(f"it ran on {theirs.engine}, not {ours.engine} ({ours.redacted})")
    elif _database_name(theirs) != _database_name(ours):
        problems.append(
            f"it ran on database {_database_name(theirs)!r} ({theirs.redacted}), "
            f"not {_database_name(ours)!r} ({ours.redacted})"
        )
    return problems


def _database_name(url: DatabaseURL) -> str:
    """What names the data: a SQLite file's name, a server's database. The folder of a SQLite file and
    a server's address may be written differently in two URLs for the same data, so they are not compared."""
    return os.path.basename(url.path) if url.path is not None else url.database or ""


# ---------------------------------------------------------------------------------------------
# The data and the requests


async def _inspect(url: DatabaseURL, workload: Workload) -> tuple[EngineInfo, dict[str, int]]:
    """The engine's description and the highest product and order ids, or NotSeeded saying how to seed."""
    how = f"seed it first: dbladder seed --db {url.redacted} (or add --scale 1 to dbladder bench --native)"
    if url.path is not None and not os.path.exists(url.path):
        # Opening would create an empty file: this command seeds nothing unless asked.
        raise NotSeeded(f"{url.redacted}: no such file, so no shop data; {how}")
    async with opened(url, EngineOptions(pool_size=1)) as engine:
        for table in workload.schema.tables:
            if not await engine.table_exists(table.name):
                raise NotSeeded(f"{url.redacted} has no shop data (no table {table.name}); {how}")
        async with engine.read() as session:
            row = await session.fetch_one(
                "SELECT (SELECT max(id) FROM products), (SELECT max(id) FROM orders)"
            )
        products, orders = row or (None, None)
        if not products or not orders:
            raise NotSeeded(f"{url.redacted} has empty shop tables; {how}")
        # Only the reads: a reference needs no more than SELECT on the tables.
        reads = [sql for sqls in read_statements(workload).values() for sql in sqls]
        refused = await engine.check_statements(reads)
        if refused:
            words = "; ".join(f"{problem.statement[:50]}...: {problem.message}" for problem in refused)
            raise NotSeeded(f"{url.redacted}: the shop's reads do not fit its tables ({words}); {how}")
        info = await engine.describe()
    return info, {"products": int(products), "orders": int(orders)}


def draw_requests(
    workload: Workload, sizes: dict[str, int], count: int, seed: int = 1, stream: int = 0
) -> list[tuple[str, Args]]:
    """The first `count` requests of the read mix as (operation name, args): the same sequence
    direct mode's generator stream `stream` sends with `--writes 0` (dbladder.load.mix draws it the
    same way; a test holds the two together)."""
    weights = [float(READ_MIX.get(op.name, 0)) for op in workload.operations]
    bounds = [cumulative / sum(weights) for cumulative in accumulate(weights)]
    bounds[-1] = 1.0
    uniform = random.Random(f"dbladder.mix:{seed}:{stream}").random
    draw = Draw(uniform)
    operations = workload.operations
    drawn = []
    for _ in range(count):
        operation = operations[bisect_right(bounds, uniform())]
        drawn.append((operation.name, operation.draw(draw, sizes)))
    return drawn


# ---------------------------------------------------------------------------------------------
# SQLite: bare apsw loops


def _apsw_loops(
    url: DatabaseURL, info: EngineInfo, workload: Workload, sizes: dict[str, int], config: NativeConfig
) -> dict[str, Any]:
    """`processes` apsw loops side by side, started together; their rates add up."""
    import apsw

    statements = read_statements(workload)
    processes = config.process_count
    pragmas = {"cache_size": int(info.settings.get("cache_size", "-10240"))}
    busy_ms = int(info.settings.get("busy_timeout", "5000"))
    path = os.path.abspath(url.path or "")
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    barrier = context.Barrier(processes)
    children = []
    for stream in range(processes):
        # Drawn here, before any clock: the loops time the database calls and nothing else.
        work = [(statements[name], args) for name, args in draw_requests(
            workload, sizes, REQUESTS_PER_PROCESS, config.seed, stream
        )]  # fmt: skip
        children.append(
            context.Process(
                target=_apsw_loop,
                args=(
                    path,
                    pragmas,
                    busy_ms,
                    work,
                    config.seconds,
                    config.warmup_seconds,
                    barrier,
                    out,
                    config.cpus,
                ),
                daemon=True,
            )
        )
    for child in children:
        child.start()
    results = []
    try:
        for _ in children:
            result = out.get(timeout=config.seconds + config.warmup_seconds + START_TIMEOUT_S)
            if result[0] == "error":
                barrier.abort()  # the others stop waiting for it
                raise NativeClientFailed(f"an apsw loop failed: {result[1]}")
            results.append(result)
    except queue.Empty:
        raise NativeClientFailed("an apsw loop process did not report in time") from None
    finally:
        for child in children:
            child.join(timeout=5)
            if child.is_alive():
                child.kill()
    rate = sum(done / wall for _, done, wall in results)
    seconds = max(wall for _, _, wall in results)
    cache = pragmas["cache_size"]
    return {
        "client": "apsw loop",
        "version": f"apsw {apsw.apswversion()}, SQLite {apsw.sqlite_lib_version()}",
        "command": f"a bare apsw loop in each of {processes} process(es), one connection each "
        f"(cache_size={cache}): every statement of each request executed and fetched, back to back",
        "scripts": {name: ";\n".join(sqls) + ";\n" for name, sqls in statements.items()},
        "connections": processes,
        "processes": processes,
        # The rate is the sum of each process's own; operations and seconds are given so it reads back.
        "operations": round(rate * seconds),
        "seconds": seconds,
    }


def _apsw_loop(
    path: str,
    pragmas: dict[str, int],
    busy_ms: int,
    work: Sequence[tuple[tuple[str, ...], Args]],
    seconds: float,
    warmup: float,
    barrier: Any,
    out: Any,
    cpus: tuple[int, ...] | None = None,
) -> None:
    """One process: warm up, wait for the others, then run `work` in a cycle for `seconds`."""
    try:
        import apsw

        confine_self(RoleLimits(cpus=cpus))
        db = apsw.Connection(path, statementcachesize=100)
        for name, value in pragmas.items():
            db.execute(f"PRAGMA {name}={value}")
        db.set_busy_timeout(busy_ms)
        execute = db.execute

        def loop(stop_after: float) -> tuple[int, float]:
            started = time.perf_counter()
            deadline = started + stop_after
            done = 0
            while True:
                for sqls, args in work:
                    for sql in sqls:
                        execute(sql, args).fetchall()
                    done += 1
                    if not done & 255 and time.perf_counter() >= deadline:
                        return done, time.perf_counter() - started

        if warmup:
            loop(warmup)
        barrier.wait(timeout=START_TIMEOUT_S)
        done, wall = loop(seconds)
        db.close()
        out.put(("done", done, wall))
    except BaseException as exc:  # reported to the parent, which raises it as one line
        out.put(("error", f"{type(exc).__name__}: {exc}", 0.0))
