"""Snapshots (save, restore, drop) on every engine, and FreshData's fresh data before each run."""

import asyncio
import os

import pytest

from dbladder.data.fresh import FreshData, StaleData
from dbladder.data.seeding import checksum, row_counts, seed
from dbladder.engines import create_engine, opened
from dbladder.engines.base import Column, Schema, Table
from dbladder.engines.mariadb import snapshot as mariadb_engine
from dbladder.engines.sqlite.engine import SQLiteEngine
from dbladder.urls import parse_url
from dbladder.workloads import shop

SMALL = shop.dataset(products=1000, orders=5000, seed=3)
# A table made after the snapshot: a restore must remove it, since the data must be the snapshot's.
LATE = Table("late_table", (Column("id", "bigint"),), primary_key=("id",))


def run(coroutine):
    return asyncio.run(coroutine)


async def write_something(engine) -> int:
    """Change stock and add orders, as a run does; the id the first new order got."""
    first_id, _ = await shop.create_order(engine, 11, [(1, 3), (2, 4)])
    await shop.create_order(engine, 12, [(3, 1)])
    async with engine.transaction() as session:
        await session.execute("UPDATE products SET stock = stock - 100 WHERE id <= ?", (10,))
        await session.execute("DELETE FROM order_items WHERE order_id = ?", (7,))
    return first_id


async def leftovers(url: str) -> list[str]:
    """Whatever of a snapshot exists beside the database: files in its folder, or databases named
    after it on the server."""
    parsed = parse_url(url)
    if parsed.engine == "sqlite":
        path = os.path.abspath(parsed.path)
        return sorted(
            name
            for name in os.listdir(os.path.dirname(path))
            if name.startswith(os.path.basename(path))
            and name.removeprefix(os.path.basename(path)) not in ("", "-wal", "-shm")
        )
    sql = {
        "postgresql": "SELECT datname FROM pg_database WHERE datname LIKE ?::text || '%' AND datname <> ?",
        "mariadb": (
            "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE CONCAT(?, '%') "
            "AND schema_name <> ?"
        ),
    }[parsed.engine]
    async with opened(url) as engine, engine.read() as session:
        rows = await session.fetch_all(sql, (parsed.database, parsed.database))
    return sorted(str(row[0]) for row in rows)


def check_restore_brings_back_the_seeded_data_twice(url: str) -> None:
    async def scenario():
        async with opened(url) as engine:
            await seed(engine, shop.workload, SMALL)
            seeded = await checksum(engine, shop.SCHEMA)
            token = await engine.save_snapshot()
            assert token is not None, "every engine restores faster than seeding on this machine"
            first_id = await write_something(engine)
            await engine.recreate_schema(Schema((LATE,)))
            changed = await checksum(engine, shop.SCHEMA)

            await engine.restore_snapshot(token)
            restored = await checksum(engine, shop.SCHEMA)
            late_table_left = await engine.table_exists(LATE.name)
            # The id generators come back too: the same next order id as right after seeding.
            again_id = await write_something(engine)

            await engine.restore_snapshot(token)
            twice = await checksum(engine, shop.SCHEMA)
            counts = await row_counts(engine, shop.SCHEMA)
            await engine.drop_snapshot(token)
            return seeded, changed, restored, late_table_left, first_id, again_id, twice, counts

    seeded, changed, restored, late_table_left, first_id, again_id, twice, counts = run(scenario())
    assert changed != seeded
    assert restored == seeded
    assert not late_table_left
    assert first_id == again_id == SMALL.sizes["orders"] + 1
    assert twice == seeded
    assert counts == shop.workload.planned_rows(SMALL.sizes)
    assert run(leftovers(url)) == []


@pytest.mark.slow
def test_restore_brings_back_the_seeded_data_twice(any_url):
    check_restore_brings_back_the_seeded_data_twice(any_url)


def test_mariadb_without_its_data_folder_copies_rows_instead(mariadb_url, monkeypatch):
    copied_files = []
    monkeypatch.setattr(mariadb_engine, "_copy_files", lambda *args: copied_files.append(args))

    async def elsewhere(connection, *databases):
        return None  # as for a server on another machine

    monkeypatch.setattr(mariadb_engine, "_local_datadir", elsewhere)
    check_restore_brings_back_the_seeded_data_twice(mariadb_url)
    assert copied_files == [], "without the data folder no file may be copied"


@pytest.mark.slow
def test_drop_snapshot_leaves_nothing_and_can_repeat(any_url):
    async def scenario():
        async with opened(any_url) as engine:
            await seed(engine, shop.workload, shop.dataset(products=10, orders=10))
            token = await engine.save_snapshot()
            assert token is not None
            # Saving again replaces the snapshot rather than adding another.
            assert await engine.save_snapshot() == token
            while_kept = await leftovers(any_url)
            await engine.drop_snapshot(token)
            after_drop = await leftovers(any_url)
            await engine.drop_snapshot(token)
            # A fresh engine, never opened, can drop it too (FreshData cleans up that way).
            unopened = create_engine(any_url)
            await unopened.drop_snapshot(token)
            await unopened.close()
            with pytest.raises(ValueError, match=r"not a .* snapshot token"):
                await engine.drop_snapshot(str(parse_url(any_url).database or parse_url(any_url).path))
            still_there = await row_counts(engine, shop.SCHEMA)
            return token, while_kept, after_drop, await leftovers(any_url), still_there

    token, while_kept, after_drop, at_end, still_there = run(scenario())
    assert len(while_kept) == 1 and "dbladder_snapshot" in while_kept[0]
    assert os.path.basename(token) == while_kept[0]
    assert after_drop == [] and at_end == []
    assert still_there == {"products": 10, "orders": 10, "order_items": 20}


@pytest.mark.slow
def test_fresh_data_starts_every_run_from_the_seeded_data(any_url):
    async def scenario():
        starts = []
        async with FreshData(any_url, shop.workload, SMALL, method="restore", verify=True) as fresh:
            for _ in range(3):
                start = await fresh.before_run()
                starts.append(start)
                async with opened(any_url) as engine:
                    await write_something(engine)
            preparation = fresh.preparation
        return preparation, starts, await leftovers(any_url)

    preparation, starts, left = run(scenario())
    assert preparation.method == "restore"
    assert preparation.snapshot_seconds is not None and preparation.restore_seconds is not None
    assert [s.run for s in starts] == [1, 2, 3]
    assert {s.method for s in starts} == {"restore"}
    assert all(s.seconds > 0 for s in starts)
    assert preparation.checksum is not None
    assert [s.checksum for s in starts] == [preparation.checksum] * 3
    assert left == [], "the snapshot must be gone after the block"


def test_fresh_data_reseeds_when_told_and_checksums_still_match(sqlite_url):
    async def scenario():
        async with FreshData(sqlite_url, shop.workload, SMALL, method="reseed", verify=True) as fresh:
            starts = []
            for _ in range(3):
                starts.append(await fresh.before_run())
                async with opened(sqlite_url) as engine:
                    await write_something(engine)
            return fresh.preparation, starts

    preparation, starts = run(scenario())
    assert preparation.method == "reseed" and preparation.snapshot_seconds is None
    assert [s.method for s in starts] == ["reseed"] * 3
    assert [s.checksum for s in starts] == [preparation.checksum] * 3


def test_fresh_data_picks_the_faster_method(sqlite_url):
    async def scenario():
        async with FreshData(sqlite_url, shop.workload, SMALL) as fresh:
            return fresh.preparation

    preparation = run(scenario())
    # Here a file copy of 1 MB beats generating and loading 16,000 rows by far.
    assert preparation.method == "restore"
    assert preparation.restore_seconds < preparation.seeding.total_seconds


def test_verify_names_tables_that_are_not_as_seeded(sqlite_url, monkeypatch):
    async def no_restore(self, token):
        pass

    monkeypatch.setattr(SQLiteEngine, "restore_snapshot", no_restore)

    async def scenario():
        async with FreshData(sqlite_url, shop.workload, SMALL, method="restore", verify=True) as fresh:
            await fresh.before_run()
            async with opened(sqlite_url) as engine:
                await shop.create_order(engine, 1, [(5, 1)])
            await fresh.before_run()

    with pytest.raises(StaleData, match=r"before run 2 the data of order_items, orders, products differs"):
        run(scenario())
    assert run(leftovers(sqlite_url)) == [], "the snapshot is dropped when the block raises"


def test_mariadb_on_this_machine_copies_tablespace_files(mariadb_url, monkeypatch):
    copied = []
    real_copy = mariadb_engine._copy_files

    def spy(files, uid, gid):
        copied.extend(os.path.basename(target) for _, target in files)
        real_copy(files, uid, gid)

    monkeypatch.setattr(mariadb_engine, "_copy_files", spy)

    async def scenario():
        async with opened(mariadb_url) as engine:
            await seed(engine, shop.workload, shop.dataset(products=10, orders=10))
            token = await engine.save_snapshot()
            await engine.restore_snapshot(token)
            counts = await row_counts(engine, shop.SCHEMA)
            await engine.drop_snapshot(token)
            return counts

    assert run(scenario()) == {"products": 10, "orders": 10, "order_items": 20}
    files = sorted(f"{t.name}.{kind}" for t in shop.SCHEMA.tables for kind in ("cfg", "ibd"))
    assert sorted(copied) == sorted(files * 2), "one copy for the save, one for the restore"


async def _teams_and_assets(engine) -> tuple[int, int]:
    async with engine.read() as session:
        teams = await session.fetch_one("SELECT count(*) FROM teams")
        assets = await session.fetch_one("SELECT count(*) FROM assets")
    return int(teams[0]), int(assets[0])


@pytest.mark.parametrize("datadir", ["tablespaces", "rows"])
def test_mariadb_snapshots_tables_with_foreign_keys_and_keeps_the_keys(mariadb_url, monkeypatch, datadir):
    """An app's tables (Django's, Rails') reference each other: the snapshot keeps them and their
    foreign keys, a restore undoes a write, and the restored keys still refuse an orphan."""
    if datadir == "rows":
        monkeypatch.setattr(mariadb_engine, "_local_datadir", _nowhere)

    async def scenario() -> None:
        async with opened(mariadb_url) as engine:
            async with engine.transaction() as session:
                await session.execute("DROP TABLE IF EXISTS assets")
                await session.execute("DROP TABLE IF EXISTS teams")
                await session.execute("CREATE TABLE teams (id INT AUTO_INCREMENT PRIMARY KEY) ENGINE=InnoDB")
                await session.execute(
                    "CREATE TABLE assets (id INT AUTO_INCREMENT PRIMARY KEY, team_id INT NOT NULL, "
                    "CONSTRAINT asset_team FOREIGN KEY (team_id) REFERENCES teams (id)) ENGINE=InnoDB"
                )
                await session.execute("INSERT INTO teams VALUES (1), (2)")
                await session.execute("INSERT INTO assets (team_id) VALUES (1), (2), (2)")
            token = await engine.save_snapshot()
            assert token is not None
            try:
                async with engine.transaction() as session:
                    await session.execute("INSERT INTO teams VALUES (3)")
                    await session.execute("INSERT INTO assets (team_id) VALUES (3)")
                assert await _teams_and_assets(engine) == (3, 4)
                await engine.restore_snapshot(token)
                assert await _teams_and_assets(engine) == (2, 3)
                with pytest.raises(Exception, match="foreign key constraint fails"):
                    async with engine.transaction() as session:
                        await session.execute("INSERT INTO assets (team_id) VALUES (9)")
            finally:
                await engine.drop_snapshot(token)

    run(scenario())


async def _nowhere(*args):
    return None
