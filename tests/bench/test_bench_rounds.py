"""The raw rounds and their bare references, on real databases of every engine."""

from __future__ import annotations

import asyncio
import shutil

import pytest

from dbladder.bench import BenchConfig, render_rounds, run_rounds
from dbladder.bench.measure import Measurement
from dbladder.bench.references import parse_sysbench_output, pgbench_script, sysbench_script
from dbladder.bench.rounds import ROUNDS, run_for
from dbladder.data.seeding import row_counts, seed
from dbladder.engines import opened
from dbladder.errors import InvalidConfig, NotSeeded
from dbladder.urls import parse_url
from dbladder.workloads.base import DataSpec
from dbladder.workloads.registry import load_workload

CHIRP = load_workload("chirp")
TINY = DataSpec(1, {"users": 100, "posts": 2_000})
REFERENCE_TOOLS = {"sqlite": None, "postgresql": "pgbench", "mariadb": "sysbench"}


@pytest.mark.serial
def test_run_for_times_a_known_step() -> None:
    """A step that sleeps 10 ms: about 100 operations a second per task, p50 about 10 ms."""

    def make(task: int):
        async def step(i: int) -> int:
            await asyncio.sleep(0.01)
            return 2

        return step

    measured = asyncio.run(run_for(0.5, 2, make))
    # Two tasks side by side for 0.5 s: 100 ops/s each at best; timers and a busy machine only slow it.
    assert 60 <= measured.per_second <= 200
    assert measured.rows == 2 * measured.operations
    assert 10_000 <= measured.latency.percentile(50) <= 25_000
    assert 0.5 <= measured.seconds < 0.7


def test_measurements_merge_side_by_side_and_extend_one_after_another() -> None:
    a, b = Measurement(10, 10, 1.0), Measurement(30, 60, 2.0)
    a.latency.record(5)
    b.latency.record(7)
    b.errors["BusyError"] = 2
    side = Measurement(10, 10, 1.0)
    side.merge(b)
    assert (side.operations, side.rows, side.seconds, side.errors) == (40, 70, 2.0, {"BusyError": 2})
    a.extend(b)
    assert (a.operations, a.seconds, a.per_second, a.latency.count) == (40, 3.0, 40 / 3, 2)
    assert Measurement.from_wire(a.to_wire()).to_dict() == a.to_dict()


def test_reference_scripts_do_what_the_rounds_do() -> None:
    sizes = {"users": 100, "posts": 2000}
    point = pgbench_script("point_reads", sizes, 100)
    assert "random(1, 2000)" in point and "WHERE id = :id" in point
    batch = pgbench_script("batched_inserts", sizes, 100).splitlines()
    assert batch.count("BEGIN;") == 1 and batch[-1] == "END;"
    assert sum(line.startswith("INSERT INTO posts") for line in batch) == 100
    assert (
        sum(
            line.startswith("INSERT INTO posts")
            for line in pgbench_script("write_transactions", sizes, 100).splitlines()
        )
        == 1
    )
    lua = sysbench_script("batched_inserts", sizes, 100)
    assert 'con:query("BEGIN")' in lua and "for i = 1, 100 do" in lua and 'con:query("COMMIT")' in lua


SYSBENCH_OUTPUT = """
Latency histogram (values are in milliseconds)
       value  ------------- distribution ------------- count
       0.050 |****                                     100
       0.100 |****************************************  800
       2.000 |**                                        99
      10.000 |*                                         1

General statistics:
    total time:                          2.0004s
    total number of events:              1000
    ignored errors:                      0      (0.00 per sec.)
"""


def test_sysbench_output_is_read_with_its_histogram() -> None:
    measured = parse_sysbench_output(SYSBENCH_OUTPUT)
    assert (measured.operations, measured.seconds, measured.latency.count) == (1000, 2.0004, 1000)
    assert measured.latency.percentile(50) == pytest.approx(100, rel=0.01)
    assert measured.latency.percentile(99) == pytest.approx(2000, rel=0.01)
    assert measured.latency.max == 10_000


def test_a_database_without_chirp_is_refused(sqlite_url: str) -> None:
    with pytest.raises(NotSeeded, match="has no chirp data; seed it first: dbladder seed --workload chirp"):
        asyncio.run(run_rounds(BenchConfig(db_url=sqlite_url, seconds=0.1)))


def test_invalid_config_lists_every_problem() -> None:
    with pytest.raises(InvalidConfig) as raised:
        BenchConfig(seconds=0, connections=0, batch_rows=0, repeats=0, workload="shop").checked()
    assert len(raised.value.problems) == 5
    assert raised.value.problems[0] == "workload must be one of chirp (the post's rounds), not 'shop'"


@pytest.mark.slow
def test_rounds_report_sane_shapes(any_url: str) -> None:
    engine_name = parse_url(any_url).engine
    tool = REFERENCE_TOOLS[engine_name]

    async def main():
        async with opened(any_url) as engine:
            await seed(engine, CHIRP, TINY)
        result = await run_rounds(
            BenchConfig(db_url=any_url, seconds=0.3, warmup_seconds=0.1, connections=2, batch_rows=10)
        )
        async with opened(any_url) as engine:
            counts = await row_counts(engine, CHIRP.schema)
        return result, counts

    result, counts = asyncio.run(main())
    assert counts == CHIRP.planned_rows(TINY.sizes)  # the rounds' posts are gone again
    assert list(result["rounds"]) == list(ROUNDS)
    assert result["data"] == TINY.sizes
    for name, entry in result["rounds"].items():
        ours = entry["ours"]
        assert entry["rate"] > 0 and ours["operations"] > 0 and ours["errors"] == {}, name
        assert 0 < ours["p50_us"] <= ours["p99_us"] <= ours["max_us"] or ours["p50_us"] == 0, name
        expected_rows = ours["operations"] * (10 if name == "batched_inserts" else 1)
        assert ours["rows"] == expected_rows, name
        if tool is None or shutil.which(tool):
            reference = entry["reference"]
            assert reference is not None and reference["rate"] > 0 and reference["errors"] == {}, name
            # The ratio is written to 3 decimals: at 0.024 that is 2 % of it, hence the abs part.
            assert entry["ratio"] == pytest.approx(entry["rate"] / reference["rate"], rel=1e-2, abs=5e-4)
    text = render_rounds(result)
    assert "232,011 ops/s" in text and "ours/ref" in text


def test_sqlite_rounds_have_the_apsw_reference_and_its_ratio(sqlite_url: str) -> None:
    async def main():
        async with opened(sqlite_url) as engine:
            await seed(engine, CHIRP, TINY)
        return await run_rounds(BenchConfig(db_url=sqlite_url, seconds=0.1, warmup_seconds=0, batch_rows=5))

    result = asyncio.run(main())
    for entry in result["rounds"].values():
        reference = entry["reference"]
        assert reference["name"] == "apsw loop, one connection, same file and settings"
        assert reference["rate"] > 0 and entry["ratio"] == pytest.approx(
            entry["rate"] / reference["rate"], rel=1e-2
        )


def test_tables_that_are_not_chirps_are_refused_before_anything_is_timed(sqlite_url: str) -> None:
    async def main():
        async with opened(sqlite_url) as engine:
            for table in CHIRP.schema.tables:
                async with engine.read() as session:
                    await session.execute(f"CREATE TABLE {table.name} (id INTEGER PRIMARY KEY)")
                    await session.execute(f"INSERT INTO {table.name} VALUES (1)")
        await run_rounds(BenchConfig(db_url=sqlite_url, seconds=0.1))

    with pytest.raises(NotSeeded, match="the raw rounds' SQL does not fit its tables"):
        asyncio.run(main())
