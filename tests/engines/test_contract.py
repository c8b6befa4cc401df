"""The engine contract: the same tests against SQLite, PostgreSQL and MariaDB."""

import asyncio

import pytest

from dbladder.engines import EngineOptions, create_engine, opened
from dbladder.engines.base import Column, Index, Schema, Table
from dbladder.errors import PoolTimeout

THINGS = Table(
    "things",
    (
        Column("id", "bigint", generated_id=True),
        Column("label", "text", max_length=20),
        Column("size", "int"),
    ),
    primary_key=("id",),
)
SCHEMA = Schema(tables=(THINGS,), indexes=(Index("things_label", "things", ("label",)),))


def run(coroutine):
    return asyncio.run(coroutine)


def test_describe_reports_versions_and_durability(any_url):
    async def scenario():
        async with opened(any_url, EngineOptions(pool_size=7)) as engine:
            return await engine.describe()

    info = run(scenario())
    assert info.engine in ("sqlite", "postgresql", "mariadb")
    assert info.server_version and info.server_version[0].isdigit()
    assert info.driver and info.driver_version
    assert info.pool_size == 7
    assert info.durability, "durability settings must be reported"
    # The local servers and SQLite's defaults acknowledge a write only after it reaches the disk.
    assert info.durable is True and info.durability_warning is None
    assert set(info.to_dict()) >= {"engine", "server_version", "driver", "durable", "durability", "isolation"}


def test_schema_bulk_load_and_generated_ids(any_url):
    async def scenario():
        async with opened(any_url) as engine:
            await engine.recreate_schema(SCHEMA)
            assert await engine.table_exists("things")
            await engine.bulk_load(THINGS, ((i, f"label {i % 3}", i * 10) for i in range(1, 101)))
            await engine.finish_load(SCHEMA)
            async with engine.read() as session:
                count = await session.fetch_one("SELECT count(*) FROM things")
                rows = await session.fetch_all(
                    "SELECT id, size FROM things WHERE label = ? ORDER BY id", ("label 1",)
                )
            async with engine.transaction() as session:
                new_id = await session.fetch_one(
                    "INSERT INTO things (label, size) VALUES (?, ?) RETURNING id", ("new", 5)
                )
            # Recreating empties the table again.
            await engine.recreate_schema(SCHEMA)
            async with engine.read() as session:
                after = await session.fetch_one("SELECT count(*) FROM things")
            return count, rows, new_id, after

    count, rows, new_id, after = run(scenario())
    assert count[0] == 100
    assert [tuple(r) for r in rows[:3]] == [(1, 10), (4, 40), (7, 70)] and len(rows) == 34
    assert new_id[0] == 101, "the id generator must continue after the loaded ids"
    assert after[0] == 0


def test_execute_returns_rows_changed_and_transactions_roll_back(any_url):
    async def scenario():
        async with opened(any_url) as engine:
            await engine.recreate_schema(SCHEMA)
            await engine.bulk_load(THINGS, [(1, "a", 1), (2, "b", 2), (3, "b", 3)])
            await engine.finish_load(SCHEMA)
            async with engine.transaction() as session:
                changed = await session.execute("UPDATE things SET size = size + 1 WHERE label = ?", ("b",))
                unchanged = await session.execute("UPDATE things SET size = 0 WHERE id = ?", (999,))
            with pytest.raises(RuntimeError):
                async with engine.transaction() as session:
                    await session.execute("UPDATE things SET size = 100 WHERE id = ?", (1,))
                    raise RuntimeError("abort")
            async with engine.read() as session:
                sizes = await session.fetch_all("SELECT size FROM things ORDER BY id")
                missing = await session.fetch_one("SELECT size FROM things WHERE id = ?", (42,))
            return changed, unchanged, sizes, missing

    changed, unchanged, sizes, missing = run(scenario())
    assert (changed, unchanged) == (2, 0)
    assert [r[0] for r in sizes] == [1, 3, 4], "the rolled-back update must not be visible"
    assert missing is None


def test_a_busy_pool_raises_pool_timeout(any_url):
    async def scenario():
        async with opened(any_url, EngineOptions(pool_size=1, pool_timeout=0.1)) as engine:
            async with engine.read():
                with pytest.raises(PoolTimeout):
                    async with engine.read():
                        pass
            # The connection is back: a new read works.
            async with engine.read() as session:
                return await session.fetch_one("SELECT 1")

    assert run(scenario())[0] == 1


def test_create_engine_rejects_bad_options():
    from dbladder.errors import InvalidConfig

    with pytest.raises(InvalidConfig, match="pool_size") as caught:
        create_engine("sqlite:///x.db", EngineOptions(pool_size=0, pool_timeout=0))
    assert len(caught.value.problems) == 2
