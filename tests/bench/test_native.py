"""The native reference on the shop's read mix, on real databases: a bare apsw loop, pgbench, sysbench."""

from __future__ import annotations

import asyncio
import random
import re
import shutil
from pathlib import Path

import pytest
from database_support import MARIADB_URL, mariadb_admin, unique_name

from dbladder.bench.native import attach, draw_requests, missing_client, native_reference, result_problems
from dbladder.bench.native_config import CATEGORIES, READ_MIX, NativeClientMissing, NativeConfig
from dbladder.bench.native_tools import pgbench_scripts, sysbench_script
from dbladder.data.seeding import seed
from dbladder.engines import opened
from dbladder.errors import InvalidConfig, NotSeeded
from dbladder.load.mix import first_requests
from dbladder.urls import parse_url
from dbladder.workloads.base import DataSpec, Draw, Mix
from dbladder.workloads.registry import load_workload

SHOP = load_workload("shop")
TINY = {"products": 300, "orders": 600}
ONE_SECOND = dict(seconds=1.0, warmup_seconds=0.0, connections=2, processes=1)


def seeded(url: str, sizes: dict[str, int] = TINY) -> str:
    async def load() -> None:
        async with opened(url) as engine:
            await seed(engine, SHOP, DataSpec(1, sizes))

    asyncio.run(load())
    return url


def check_block(block: dict, engine: str, client: str) -> None:
    """What every reference says, whatever the engine: a positive rate that reads back from its figures."""
    assert block["client"] == client and block["engine"] == engine
    assert block["ops_per_s"] > 0 and block["operations"] > 0
    # The rate is the requests over the timed stretch (to 1 %), and the stretch is the 1 s asked
    # for (pgbench counts without connecting; a loaded machine can stretch it a little).
    assert block["ops_per_s"] == pytest.approx(block["operations"] / block["seconds"], rel=0.01)
    assert 0.8 <= block["seconds"] <= 1.6
    assert block["sizes"] == TINY
    assert block["mix"] == {"product": 0.5, "page": 0.3, "order": 0.2}
    assert block["version"] and block["command"] and block["scripts"]


# -- the requests --------------------------------------------------------------------------------


def test_the_apsw_loop_sends_what_direct_modes_generator_sends() -> None:
    for stream in (0, 1):
        ours = draw_requests(SHOP, TINY, 500, seed=3, stream=stream)
        theirs = first_requests(SHOP, Mix(READ_MIX), TINY, 500, seed=3, stream=stream)
        assert [(SHOP.operations[index].name, args) for index, args in theirs] == ours
    shares = {name: 0 for name in READ_MIX}
    for name, _ in draw_requests(SHOP, TINY, 20_000):
        shares[name] += 1
    # 20,000 draws: each share within 1.5 points of the mix (over 4 standard deviations).
    assert all(abs(shares[name] / 20_000 - READ_MIX[name] / 100) < 0.015 for name in READ_MIX)


def test_pgbench_and_sysbench_draw_from_the_ranges_the_workload_draws_from() -> None:
    # The scripts write the shop's ranges out; the workload's own draw must stay inside them.
    draw = Draw(random.Random(1).random)
    categories = {SHOP.operation("page").draw(draw, TINY)[0] for _ in range(5_000)}
    assert categories == {f"cat-{n:02d}" for n in range(CATEGORIES)}
    afters = [SHOP.operation("page").draw(draw, TINY)[1] for _ in range(5_000)]
    assert min(afters) == 0 and max(afters) == TINY["products"]
    scripts = pgbench_scripts(SHOP, TINY)
    assert "\\set c random(0, 99)" in scripts["page.sql"]
    assert f"\\set after random(0, {TINY['products']})" in scripts["page.sql"]
    assert f"random(1, {TINY['orders']})" in scripts["order.sql"] and scripts["order.sql"].count(":id") == 2
    assert "?" not in "".join(scripts.values())
    lua = sysbench_script(SHOP, TINY)
    assert 'string.format("cat-%02d", sysbench.rand.uniform(0, 99))' in lua
    assert "if u < 0.5 then" in lua and "elseif u < 0.8 then" in lua
    for sql in SHOP.operation("order").statements:
        assert sql in lua


# -- SQLite ------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_sqlite_reference_runs_a_bare_apsw_loop(sqlite_url) -> None:
    block = native_reference(NativeConfig(db_url=seeded(sqlite_url), **ONE_SECOND))
    check_block(block, "sqlite", "apsw loop")
    assert block["version"].startswith("apsw ") and "SQLite 3." in block["version"]
    assert block["processes"] == 1 and "1 process" in block["command"]


@pytest.mark.slow
def test_two_apsw_processes_run_side_by_side(sqlite_url) -> None:
    # Started together, so the stretch is still about the 1 s asked for, not two of them.
    block = native_reference(NativeConfig(db_url=seeded(sqlite_url), **{**ONE_SECOND, "processes": 2}))
    check_block(block, "sqlite", "apsw loop")
    assert block["processes"] == 2


def test_a_database_without_the_shop_says_how_to_seed_it(sqlite_url, tmp_path) -> None:
    missing = f"sqlite:///{tmp_path}/none.db"
    with pytest.raises(NotSeeded, match=r"no such file.*dbladder seed --db sqlite:///"):
        native_reference(NativeConfig(db_url=missing, **ONE_SECOND))
    assert not Path(f"{tmp_path}/none.db").exists()  # nothing created on the way
    seeded(sqlite_url)

    async def empty() -> None:
        async with opened(sqlite_url) as engine, engine.transaction() as session:
            for table in ("order_items", "orders", "products"):
                await session.execute(f"DELETE FROM {table}")

    asyncio.run(empty())
    with pytest.raises(NotSeeded, match="empty shop tables"):
        native_reference(NativeConfig(db_url=sqlite_url, **ONE_SECOND))
    chirp = f"sqlite:///{tmp_path}/chirp.db"

    async def other_tables() -> None:
        async with opened(chirp) as engine, engine.transaction() as session:
            await session.execute("CREATE TABLE users (id INTEGER PRIMARY KEY)")

    asyncio.run(other_tables())
    with pytest.raises(NotSeeded, match=r"no shop data \(no table products\); seed it first"):
        native_reference(NativeConfig(db_url=chirp, **ONE_SECOND))


def test_the_config_names_every_problem() -> None:
    with pytest.raises(InvalidConfig) as raised:
        NativeConfig(db_url="nope", seconds=0, connections=0, processes=-1).checked()
    assert [p.split(" ")[0].rstrip(":") for p in raised.value.problems] == [
        "db_url",
        "seconds",
        "connections",
        "processes",
    ]


# -- the native clients ------------------------------------------------------------------------------


def test_a_missing_client_is_one_line_saying_how_to_install_it(monkeypatch, tmp_path, postgres_url) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH with no program on it
    assert "apt-get install postgresql-client" in (missing_client("postgresql") or "")
    assert "apt-get install sysbench" in (missing_client("mariadb") or "")
    assert missing_client("sqlite") is None
    with pytest.raises(NativeClientMissing, match=r"^pgbench is not on the PATH"):
        native_reference(NativeConfig(db_url=postgres_url, **ONE_SECOND))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("pgbench") is None, reason="pgbench is not installed (postgresql-client)")
def test_the_postgresql_reference_runs_pgbench_with_the_mix_as_three_scripts(postgres_url) -> None:
    # Trust authentication here takes any password: one in the URL shows whether it leaks.
    url = parse_url(seeded(postgres_url))
    with_password = url.raw.replace("postgres@", "postgres:s3cret-pw@", 1)
    block = native_reference(NativeConfig(db_url=with_password, **ONE_SECOND))
    check_block(block, "postgresql", "pgbench")
    assert block["version"].startswith("pgbench (PostgreSQL) ")
    assert "--protocol=prepared" in block["command"] and "--client=2" in block["command"]
    assert re.findall(r"--file=(\w+\.sql)@(\d+)", block["command"]) == [
        ("product.sql", "50"),
        ("page.sql", "30"),
        ("order.sql", "20"),
    ]
    assert "s3cret-pw" not in repr(block)


@pytest.mark.skipif(
    shutil.which("sysbench") is None, reason="sysbench is not installed (apt-get install sysbench)"
)
@pytest.mark.slow
def test_the_mariadb_reference_runs_sysbench_with_the_password_off_its_command_line(mariadb_url) -> None:
    url = parse_url(seeded(mariadb_url))
    # A user of this test's own with a password (root has none here): sysbench must get it from
    # the option file, since the command line never carries it.
    user, password = unique_name("native")[:32], "s3cret-pw"
    admin = parse_url(MARIADB_URL)
    hosts = ("127.0.0.1", "localhost")  # as tests/engines/test_secrets.py: TCP and the socket
    for host in hosts:
        asyncio.run(mariadb_admin(admin, f"CREATE USER '{user}'@'{host}' IDENTIFIED BY '{password}'"))
        asyncio.run(mariadb_admin(admin, f"GRANT SELECT ON `{url.database}`.* TO '{user}'@'{host}'"))
    try:
        own = url.raw.replace(f"{url.user}@", f"{user}:{password}@", 1)
        block = native_reference(NativeConfig(db_url=own, **ONE_SECOND))
    finally:
        for host in hosts:
            asyncio.run(mariadb_admin(admin, f"DROP USER IF EXISTS '{user}'@'{host}'"))
    check_block(block, "mariadb", "sysbench")
    assert block["version"].startswith("sysbench ") and "--threads=2" in block["command"]
    assert f"--mysql-user={user}" in block["command"] and "--config-file=password.cnf" in block["command"]
    assert password not in repr(block)


# -- the block in a result ------------------------------------------------------------------------


def direct_result(**changes: object) -> dict:
    result = {
        "config": {"target": "direct", "db_url": "postgresql:///shop?host=/var/run/postgresql"},
        "engine": {"url": "postgresql:///shop?host=/var/run/postgresql"},
        "workload": {"name": "shop", "mix": {"product": 0.5, "page": 0.3, "order": 0.2}},
        "ceiling_rps": 12_000.0,
    }
    result.update(changes)
    return result


def test_the_block_carries_the_ceiling_and_the_ratio() -> None:
    block = attach(direct_result(), {"ops_per_s": 30_000.0, "client": "pgbench"})
    assert block["direct_rps"] == 12_000.0 and block["ratio"] == 0.4
    assert attach(direct_result(ceiling_rps=None), {"ops_per_s": 30_000.0})["ratio"] is None


def test_only_a_direct_run_of_the_read_mix_on_the_same_database_takes_the_block() -> None:
    same = "postgresql://postgres@127.0.0.1:5432/shop"  # another route to the same database
    assert result_problems(direct_result(), same) == []
    http = direct_result(config={"target": "http", "db_url": same})
    assert "not a direct-mode run" in result_problems(http, same)[0]
    writes = direct_result(
        workload={"name": "shop", "mix": {"product": 0.4, "page": 0.24, "order": 0.16, "create": 0.2}}
    )
    assert "--writes 0" in result_problems(writes, same)[0]
    assert (
        "ran on postgresql, not mariadb"
        in result_problems(direct_result(), "mariadb://root@localhost/shop")[0]
    )
    assert "database 'shop'" in result_problems(direct_result(), "postgresql:///other")[0]
    sqlite = direct_result(engine={"url": "sqlite:////data/shop.db"})
    assert result_problems(sqlite, "sqlite:///shop.db") == []
