"""Which ORM for the `orm` workload: SQLAlchemy 2 (asyncio) against Django's ORM, per engine.

    pip install django pymysql aiosqlite 'psycopg[binary]'   # measured here, not dependencies
    python benchmarks/orm_choice.py [--requests 100] [--rounds 5] [--lazy 50]

The same list endpoint in each ORM's ordinary style: load `--lazy` assets in one query, then
touch each asset's `findings` (a one-to-many the ORM loads lazily), so every request sends
1 + lazy SELECTs, counted by each ORM's own hook (SQLAlchemy: before_cursor_execute; Django:
connection.execute_wrapper) and checked. For each engine, on one connection, one request at a
time, in interleaved rounds:

  raw engine        the same statements through dbladder's engine (apsw/asyncpg/asyncmy): the floor
  sa-async-attrs    SQLAlchemy asyncio, `await asset.awaitable_attrs.findings` (aiosqlite/asyncpg/asyncmy)
  sa-async-run_sync SQLAlchemy asyncio, plain `asset.findings` inside AsyncSession.run_sync
                    (the workload's OrmContext.run; on SQLite with aiosqlite)
  sa-sync-thread    SQLAlchemy with sync drivers (pysqlite/psycopg/pymysql), the request in a thread
  sa-sync-inline    SQLite only: SQLAlchemy with pysqlite, the request inline on the event loop
                    (the workload's OrmContext.run as it runs on SQLite)
  django-thread     Django's ORM (sqlite3/psycopg/pymysql posing as MySQLdb), the request in a thread

The sync variants run each request in a worker thread (a worker thread), as an asyncio service
has to run blocking code; Django refuses to run in the event loop's thread anyway.

Figures per request: wall time and CPU time of this process (all its threads: aiosqlite's too;
the server's CPU is not in it), median over the rounds, and CPU per statement. The data is the
workload's populated set at scale 1 (1,000 assets, 7,500 findings), in scratch databases that are
dropped afterwards. PostgreSQL and MariaDB over TCP on loopback (as in "PostgreSQL vs SQLite,
2026 edition"); `--unix` uses their sockets.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from typing import Any

from scratch import scratch_databases
from sqlalchemy import create_engine, event, select
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlalchemy.orm import Session, sessionmaker

from dbladder.engines import EngineOptions, opened
from dbladder.engines import create_engine as create_dbladder_engine
from dbladder.urls import parse_url
from dbladder.workloads.orm import data
from dbladder.workloads.orm.context import counting, open_context
from dbladder.workloads.orm.models import Asset

SEED = 1
PG_SOCKET = "/var/run/postgresql"
MARIADB_SOCKET = "/run/mysqld/mysqld.sock"
ASSETS_SQL = (
    "SELECT id, name, kind, criticality, owner_id, created_at, updated_at "
    "FROM assets WHERE id <= ? ORDER BY id"
)
FINDINGS_SQL = (
    "SELECT id, asset_id, assessment_id, control_id, title, severity, status, reporter_id, created_at "
    "FROM findings WHERE asset_id = ? ORDER BY id"
)

Request = Callable[[], Awaitable[int]]  # one request; returns the statements it sent


# ---------------------------------------------------------------------------------------------
# The endpoint in each style. Each returns the number of findings it saw (a check that all agree).


def _summary(assets: list[Any], findings: list[list[Any]]) -> int:
    return sum(len(f) for f in findings) + len(assets)


async def raw_request(engine: Any, lazy: int) -> int:
    async with engine.read() as session:
        assets = await session.fetch_all(ASSETS_SQL, (lazy,))
        findings = [await session.fetch_all(FINDINGS_SQL, (a[0],)) for a in assets]
    return _summary(assets, findings)


async def sa_attrs_request(sessions: Any, lazy: int) -> int:
    async with sessions() as session:
        assets = (await session.scalars(select(Asset).where(Asset.id <= lazy).order_by(Asset.id))).all()
        findings = [await asset.awaitable_attrs.findings for asset in assets]
    return _summary(list(assets), findings)


def _sync_list(session: Session, lazy: int) -> int:
    assets = session.scalars(select(Asset).where(Asset.id <= lazy).order_by(Asset.id)).all()
    findings = [asset.findings for asset in assets]
    return _summary(list(assets), findings)


def sa_sync_request(sessions: Any, lazy: int) -> int:
    with sessions() as session:
        return _sync_list(session, lazy)


# ---------------------------------------------------------------------------------------------
# Django, configured in this process for the three databases (aliases sqlite, postgresql, mariadb).

_django_models: dict[str, Any] = {}


def setup_django(databases: dict[str, dict[str, Any]]) -> None:
    import pymysql

    # Django's MariaDB backend needs mysqlclient, which has no Linux wheel (it is built against
    # libmariadb with a C compiler). PyMySQL can pose as it; Django checks the version it claims.
    pymysql.version_info = (2, 2, 1, "final", 0)
    pymysql.install_as_MySQLdb()
    import django
    from django.conf import settings

    settings.configure(
        DATABASES={"default": databases["sqlite"], **databases}, INSTALLED_APPS=[], USE_TZ=False
    )
    django.setup()
    from django.db import models

    class DjUser(models.Model):
        id = models.BigIntegerField(primary_key=True)
        name = models.CharField(max_length=64)

        class Meta:
            app_label = "orm_choice"
            db_table = "users"
            managed = False

    class DjAsset(models.Model):
        id = models.BigAutoField(primary_key=True)
        name = models.CharField(max_length=64)
        kind = models.CharField(max_length=16)
        criticality = models.IntegerField()
        owner = models.ForeignKey(DjUser, on_delete=models.DO_NOTHING, db_constraint=False)
        created_at = models.BigIntegerField()
        updated_at = models.BigIntegerField()

        class Meta:
            app_label = "orm_choice"
            db_table = "assets"
            managed = False

    class DjFinding(models.Model):
        id = models.BigAutoField(primary_key=True)
        asset = models.ForeignKey(
            DjAsset, on_delete=models.DO_NOTHING, db_constraint=False, related_name="findings"
        )
        assessment_id = models.BigIntegerField()
        control_id = models.BigIntegerField()
        title = models.CharField(max_length=128)
        severity = models.IntegerField()
        status = models.CharField(max_length=16)
        reporter_id = models.BigIntegerField()
        created_at = models.BigIntegerField()

        class Meta:
            app_label = "orm_choice"
            db_table = "findings"
            managed = False
            ordering = ("id",)

    _django_models["Asset"] = DjAsset


def django_request(alias: str, lazy: int) -> tuple[int, int]:
    """The list in Django's ordinary style; (summary, statements counted by execute_wrapper)."""
    from django.db import connections

    statements = 0

    def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        nonlocal statements
        statements += 1
        return execute(sql, params, many, context)

    with connections[alias].execute_wrapper(count):
        assets = list(_django_models["Asset"].objects.using(alias).filter(id__lte=lazy).order_by("id"))
        findings = [list(asset.findings.all()) for asset in assets]
    return _summary(assets, findings), statements


def django_databases(folder: str, pg: str, maria: str, unix: bool) -> dict[str, dict[str, Any]]:
    return {
        "sqlite": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": f"{folder}/orm.db",
            "OPTIONS": {
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-10240",
                "timeout": 5,
            },
        },
        "postgresql": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": pg,
            "USER": "postgres",
            "HOST": PG_SOCKET if unix else "127.0.0.1",
            "PORT": "" if unix else "5432",
            "CONN_MAX_AGE": None,  # persistent, as the post's CONN_MAX_AGE = 300
        },
        "mariadb": {
            "ENGINE": "django.db.backends.mysql",
            "NAME": maria,
            "USER": "root",
            "HOST": "localhost" if unix else "127.0.0.1",
            "PORT": "" if unix else "3306",
            "CONN_MAX_AGE": None,
            "OPTIONS": {"charset": "utf8mb4", "isolation_level": "read committed"}
            | ({"unix_socket": MARIADB_SOCKET} if unix else {}),
        },
    }


# ---------------------------------------------------------------------------------------------


def sync_sqlalchemy_url(engine: str, folder: str, name: str, unix: bool) -> str:
    if engine == "sqlite":
        return f"sqlite+pysqlite:///{folder}/orm.db"
    if engine == "postgresql":
        return (
            f"postgresql+psycopg://postgres@/{name}?host={PG_SOCKET}"
            if unix
            else (f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}")
        )
    if unix:
        return f"mysql+pymysql://root@localhost/{name}?unix_socket={MARIADB_SOCKET}&charset=utf8mb4"
    return f"mysql+pymysql://root@127.0.0.1:3306/{name}?charset=utf8mb4"


def dbladder_url(engine: str, folder: str, name: str, unix: bool) -> str:
    if engine == "sqlite":
        return f"sqlite:///{folder}/orm.db"
    if engine == "postgresql":
        return (
            f"postgresql://postgres@/{name}?host={PG_SOCKET}"
            if unix
            else (f"postgresql://postgres@127.0.0.1:5432/{name}")
        )
    if unix:
        return f"mariadb://root@localhost/{name}?unix_socket={MARIADB_SOCKET}"
    return f"mariadb://root@127.0.0.1:3306/{name}"


async def timed(request: Request, requests: int, lazy: int, check: bool = True) -> tuple[float, float]:
    """(wall us, cpu us) per request over `requests` requests; checks the statements sent."""
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for _ in range(requests):
        statements = await request()
        # The request that opens a connection also counts the driver's setup queries (MariaDB's
        # sql_mode and version reads), so warm-up requests are not checked.
        if check and statements != lazy + 1:
            raise SystemExit(f"expected {lazy + 1} statements per request, counted {statements}")
    return (
        (time.perf_counter() - wall0) / requests * 1e6,
        (time.process_time() - cpu0) / requests * 1e6,
    )


async def measure_engine(engine: str, folder: str, name: str, args: argparse.Namespace) -> None:
    lazy = args.lazy
    url = parse_url(dbladder_url(engine, folder, name, args.unix))
    raw = create_dbladder_engine(url, EngineOptions(pool_size=1))
    await raw.open()
    # The workload's own contexts: asyncio engines (aiosqlite for SQLite here), and for SQLite
    # also the inline pysqlite one the workload uses.
    context = await open_context(url, EngineOptions(pool_size=1), sqlite_driver="aiosqlite")
    inline = await open_context(url, EngineOptions(pool_size=1)) if engine == "sqlite" else None
    async_sessions = async_sessionmaker(context.engine, expire_on_commit=False)
    sync_engine = create_engine(sync_sqlalchemy_url(engine, folder, name, args.unix), pool_size=1)
    sync_statements = 0

    def on_sync_statement(*_: Any) -> None:
        nonlocal sync_statements
        sync_statements += 1

    event.listen(sync_engine, "before_cursor_execute", on_sync_statement)
    sync_sessions = sessionmaker(sync_engine)
    results: dict[str, int] = {}
    # One worker thread, as a one-thread pool of a service would have: Django's connections are
    # per thread, so the same thread keeps its persistent connection.
    worker = ThreadPoolExecutor(max_workers=1)
    loop = asyncio.get_running_loop()

    async def raw_variant() -> int:
        results["raw"] = await raw_request(raw, lazy)
        return lazy + 1  # the engine sends exactly what raw_request asks for

    async def attrs_variant() -> int:
        with counting() as count:
            results["sa-async-attrs"] = await sa_attrs_request(async_sessions, lazy)
        return count.statements

    async def run_sync_variant() -> int:
        with counting() as count:
            results["sa-async-run_sync"] = await context.run("list", _sync_list, lazy)
        return count.statements

    async def sync_variant() -> int:
        nonlocal sync_statements
        sync_statements = 0
        results["sa-sync-thread"] = await loop.run_in_executor(worker, sa_sync_request, sync_sessions, lazy)
        return sync_statements

    async def inline_variant() -> int:
        assert inline is not None
        with counting() as count:
            results["sa-sync-inline"] = await inline.run("list", _sync_list, lazy)
        return count.statements

    async def django_variant() -> int:
        results["django-thread"], statements = await loop.run_in_executor(
            worker, django_request, engine, lazy
        )
        return statements

    variants: dict[str, Request] = {
        "raw engine": raw_variant,
        "sa-async-attrs": attrs_variant,
        "sa-async-run_sync": run_sync_variant,
        "sa-sync-thread": sync_variant,
        "django-thread": django_variant,
    }
    if engine == "sqlite":
        # In-process calls inline on the event loop, as dbladder's own SQLite engine makes them;
        # blocking drivers of a server cannot run there (the loop would wait on every round trip).
        variants["sa-sync-inline"] = inline_variant
    samples: dict[str, list[tuple[float, float]]] = {label: [] for label in variants}
    for request in variants.values():
        await timed(request, 10, lazy, check=False)  # warm: connections, statement caches, compiled SQL
    for _ in range(args.rounds):
        for label, request in variants.items():
            samples[label].append(await timed(request, args.requests, lazy))
    if len(set(results.values())) != 1:
        raise SystemExit(f"the variants disagree on what they loaded: {results}")
    floor = statistics.median(cpu for _, cpu in samples["raw engine"])
    for label, values in samples.items():
        wall = statistics.median(w for w, _ in values)
        cpu = statistics.median(c for _, c in values)
        print(
            f"{engine:<11} {label:<18} {lazy + 1:>5} {wall:>10,.0f} {cpu:>10,.0f} "
            f"{cpu / (lazy + 1):>9.1f} {(cpu - floor) / (lazy + 1):>9.1f} {cpu / floor:>6.2f}"
        )
    await raw.close()
    await context.close()
    if inline is not None:
        await inline.close()
    sync_engine.dispose()
    from django.db import connections

    await loop.run_in_executor(worker, connections.close_all)
    worker.shutdown()


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=100, help="requests per variant per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--lazy", type=int, default=50, help="lazy loads per request")
    parser.add_argument("--unix", action="store_true", help="PostgreSQL and MariaDB over their Unix sockets")
    parser.add_argument("--engines", default="sqlite,postgresql,mariadb")
    args = parser.parse_args()
    import django

    print(
        f"SQLAlchemy {version('sqlalchemy')} (aiosqlite {version('aiosqlite')}, "
        f"asyncpg {version('asyncpg')}, "
        f"asyncmy {version('asyncmy')}, psycopg {version('psycopg')}, pymysql {version('pymysql')}); "
        f"Django {django.get_version()}"
    )
    print(
        f"{args.lazy} lazy loads per request, {args.requests} requests x {args.rounds} rounds, medians; "
        f"{'Unix sockets' if args.unix else 'TCP loopback'}"
    )
    print(
        f"{'engine':<11} {'variant':<18} {'stmts':>5} {'wall us':>10} {'cpu us':>10} "
        f"{'cpu/stmt':>9} {'over raw':>9} {'x raw':>6}"
    )
    engines = args.engines.split(",")
    with tempfile.TemporaryDirectory() as folder:
        async with scratch_databases("dbl_bench_orm") as name:
            setup_django(django_databases(folder, name, name, args.unix))
            for engine in engines:
                async with opened(dbladder_url(engine, folder, name, False)) as loader:
                    await data.load(loader, SEED, data.scaled_sizes(1))
                await measure_engine(engine, folder, name, args)


if __name__ == "__main__":
    asyncio.run(main())
